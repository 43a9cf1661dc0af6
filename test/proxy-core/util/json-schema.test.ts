import { describe, expect, test } from 'vitest';
import { patternMatch, schemaValidator, validateAgainstSchema, validateStructuredContent } from '../../../proxy-core/src/util/json-schema.js';

const counted = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] };

describe('validateStructuredContent', () => {
  test.each<[string, unknown, unknown, boolean, RegExp?]>([
    ['matching content', counted, { count: 3 }, true],
    ['wrong type', counted, { count: 'three' }, false, /^\/count must be integer$/],
    ['missing required', counted, {}, false, /must have required property 'count'/],
    ['missing structuredContent', counted, undefined, false, /structuredContent is missing/],
    ['additionalProperties', { type: 'object', additionalProperties: false }, { extra: 1 }, false, /must NOT have additional properties \(extra\)/],
    ['enum', { type: 'object', properties: { c: { enum: ['a', 'b'] } } }, { c: 'z' }, false, /must be equal to one of the allowed values \(\["a","b"\]\)/],
    ['draft 2020-12 via $schema', { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { t: { type: 'array', prefixItems: [{ type: 'string' }], items: false } } }, { t: ['a', 'b'] }, false],
    ['draft 2020-12 passes', { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { t: { type: 'array', prefixItems: [{ type: 'string' }] } } }, { t: ['a'] }, true],
    ['draft-07 tuple items', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { t: { type: 'array', items: [{ type: 'string' }], additionalItems: false } } }, { t: ['a', 'b'] }, false],
    ['draft 2019-09', { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', properties: { n: { type: 'number' } } }, { n: 1 }, true],
    ['unknown $schema is ignored', { $schema: 'http://example.com/my-dialect', type: 'object', properties: { n: { type: 'number' } } }, { n: 'x' }, false, /must be number/],
    ['draft-07 without $schema ($defs and definitions)', { type: 'object', properties: { a: { $ref: '#/definitions/A' } }, definitions: { A: { type: 'string' } } }, { a: 1 }, false, /must be string/],
    ['unknown formats are not checked', { type: 'object', properties: { d: { type: 'string', format: 'no-such-format' } } }, { d: 'x' }, true],
  ])('%s', (_label, schema, content, ok, message) => {
    const result = validateStructuredContent(schema, content);
    expect(result.ok).toBe(ok);
    if (!result.ok && message) expect(result.errors.join('\n')).toMatch(message);
  });

  test.each<[string, unknown]>([
    ['a string', 'not a schema'],
    ['null', null],
    ['an array', [1]],
    ['an unknown type', { type: 'object', properties: { a: { type: 'banana' } } }],
    ['a dangling $ref', { type: 'object', properties: { a: { $ref: '#/$defs/Nope' } } }],
    ['a bad pattern', { type: 'object', properties: { a: { type: 'string', pattern: '([' } } }],
  ])('a schema that does not compile (%s) is reported, never thrown', (_label, schema) => {
    const result = validateStructuredContent(schema, { a: 'x' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]).toMatch(/^output schema does not compile: /);
  });

  test("a schema's patterns run in linear time: one that backtracks exponentially in JavaScript's engine is judged at once", () => {
    const schema = { type: 'object', properties: { x: { type: 'string', pattern: '^(a+)+$' }, y: { type: 'string', pattern: '^[a-z]+-\\d{2}$' } } };
    const t0 = performance.now();
    const bad = validateStructuredContent(schema, { x: `${'a'.repeat(5000)}!`, y: 'ab-12' });
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors.join('\n')).toMatch(/^\/x must match pattern/);
    expect(validateStructuredContent(schema, { x: 'aaa', y: 'ab-12' }).ok).toBe(true);
    expect(validateStructuredContent(schema, { x: 'aaa', y: 'AB-12' }).ok).toBe(false);
    // patternProperties too
    const keyed = { type: 'object', patternProperties: { '^(a|aa)+$': { type: 'number' } } };
    expect(validateStructuredContent(keyed, { [`${'a'.repeat(3000)}b`]: 'x', aa: 2 }).ok).toBe(true);
    expect(validateStructuredContent(keyed, { aaaa: 'x' }).ok).toBe(false);
  });

  test('a pattern only a backtracking engine can run (a lookahead, a back-reference) is not checked: no finding from it', () => {
    const schema = { type: 'object', properties: { x: { type: 'string', pattern: '^(?=a)' }, y: { type: 'string', pattern: '(b)\\1' }, n: { type: 'number' } } };
    expect(validateStructuredContent(schema, { x: 'zzz', y: 'bc', n: 1 }).ok).toBe(true);
    expect(validateStructuredContent(schema, { x: 'zzz', y: 'bc', n: 'one' }).ok).toBe(false);
  });

  test('compiles each distinct schema once', () => {
    const schema = { type: 'object', properties: { unique: { const: 'cache-test' } } };
    const first = schemaValidator(schema);
    const second = schemaValidator(JSON.parse(JSON.stringify(schema)));
    expect(second).toBe(first);
    for (let i = 0; i < 1000; i++) validateStructuredContent(schema, { unique: 'cache-test' });
  });

  test('two schemas sharing an $id do not collide', () => {
    const a = { $id: 'https://example.com/out', type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
    const b = { $id: 'https://example.com/out', type: 'object', properties: { b: { type: 'string' } }, required: ['b'] };
    expect(validateStructuredContent(a, { a: 'x' })).toEqual({ ok: true });
    expect(validateStructuredContent(b, { b: 'x' })).toEqual({ ok: true });
  });

  test('a cyclic value does not throw', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => validateStructuredContent(cyclic, {})).not.toThrow();
    expect(validateStructuredContent(cyclic, {}).ok).toBe(false);
  });

  test('validateAgainstSchema reports compile failures as errors', () => {
    expect(validateAgainstSchema({ type: 'nope' }, 1)).toEqual({ ok: false, errors: [expect.stringMatching(/^schema does not compile/)] });
  });
});

test('an $async schema is refused rather than treated as a pass', () => {
  const result = validateStructuredContent({ $async: true, type: 'object', required: ['a'] }, {});
  expect(result).toEqual({ ok: false, errors: ['output schema does not compile: $async schemas are not supported'] });
});

describe('patternMatch', () => {
  test.each<[string, string, string]>([
    ['^[a-z]+-\\d{2}$', 'ab-12', 'matches'],
    ['^[a-z]+-\\d{2}$', 'ab-123', 'differs'],
    ['^t', 'test', 'matches'],
    // a lookahead and a back-reference: RE2 runs neither, so nothing is said either way
    ['^(?=t)test$', 'test', 'unchecked'],
    ['^(?=x)test$', 'test', 'unchecked'],
    ['(t)\\1', 'test', 'unchecked'],
    // no regular expression at all
    ['([', 'test', 'differs'],
  ])('/%s/ against %j: %s', (pattern, value, expected) => {
    expect(patternMatch(pattern, value)).toBe(expected);
  });

  test('runs in linear time: a pattern that backtracks in JavaScript\'s engine answers at once', () => {
    const t0 = performance.now();
    expect(patternMatch('^(a+)+$', `${'a'.repeat(5000)}b`)).toBe('differs');
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
