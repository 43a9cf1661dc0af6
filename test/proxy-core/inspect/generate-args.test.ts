import { describe, expect, test } from 'vitest';
import { generateArguments, generateValue, requiredProperties } from '../../../proxy-core/src/inspect/generate-args.js';
import { validateAgainstSchema } from '../../../proxy-core/src/util/json-schema.js';

const obj = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: 'object', properties, required });

describe('generateArguments', () => {
  test.each<[string, unknown, Record<string, unknown>]>([
    ['empty schema', { type: 'object' }, {}],
    ['optional properties are left out', { type: 'object', properties: { a: { type: 'string' } } }, {}],
    ['string', obj({ s: { type: 'string' } }), { s: 'test' }],
    ['integer', obj({ n: { type: 'integer' } }), { n: 1 }],
    ['number with minimum', obj({ n: { type: 'number', minimum: 5 } }), { n: 5 }],
    ['integer with fractional minimum', obj({ n: { type: 'integer', minimum: 2.5 } }), { n: 3 }],
    ['number with maximum below 1', obj({ n: { type: 'number', maximum: 0 } }), { n: 0 }],
    ['exclusiveMinimum (draft 6+)', obj({ n: { type: 'integer', exclusiveMinimum: 10 } }), { n: 11 }],
    ['multipleOf', obj({ n: { type: 'integer', minimum: 3, multipleOf: 5 } }), { n: 5 }],
    ['boolean', obj({ b: { type: 'boolean' } }), { b: false }],
    ['null', obj({ z: { type: 'null' } }), { z: null }],
    ['enum', obj({ e: { type: 'string', enum: ['red', 'green'] } }), { e: 'red' }],
    ['const', obj({ c: { const: 'fixed' } }), { c: 'fixed' }],
    ['default wins over enum', obj({ e: { enum: ['a', 'b'], default: 'b' } }), { e: 'b' }],
    ['examples', obj({ x: { type: 'string', examples: ['sample'] } }), { x: 'sample' }],
    ['minLength', obj({ s: { type: 'string', minLength: 6 } }), { s: 'testxx' }],
    ['maxLength', obj({ s: { type: 'string', maxLength: 2 } }), { s: 'te' }],
    ['format email', obj({ s: { type: 'string', format: 'email' } }), { s: 'user@example.com' }],
    ['format uri', obj({ s: { type: 'string', format: 'uri' } }), { s: 'https://example.com/' }],
    ['format date-time', obj({ s: { type: 'string', format: 'date-time' } }), { s: '2024-01-01T00:00:00Z' }],
    ['format uuid', obj({ s: { type: 'string', format: 'uuid' } }), { s: '00000000-0000-4000-8000-000000000000' }],
    ['type list with null', obj({ s: { type: ['null', 'string'] } }), { s: 'test' }],
    ['array with minItems', obj({ a: { type: 'array', items: { type: 'integer' }, minItems: 2 } }), { a: [1, 1] }],
    ['array without minItems', obj({ a: { type: 'array', items: { type: 'string' } } }), { a: [] }],
    ['tuple (prefixItems)', obj({ a: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'boolean' }], minItems: 2 } }), { a: ['test', false] }],
    ['nested object', obj({ o: obj({ inner: { type: 'string' } }) }), { o: { inner: 'test' } }],
    ['untyped with properties', obj({ o: { properties: { k: { type: 'integer' } }, required: ['k'] } }), { o: { k: 1 } }],
    ['anyOf picks the first non-null', obj({ u: { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 4 }] } }), { u: 4 }],
    ['oneOf', obj({ u: { oneOf: [{ type: 'string', enum: ['x'] }, { type: 'number' }] } }), { u: 'x' }],
    ['allOf merges', obj({ m: { allOf: [obj({ a: { type: 'string' } }), obj({ b: { type: 'integer' } })] } }), { m: { a: 'test', b: 1 } }],
    ['$ref to $defs', { ...obj({ p: { $ref: '#/$defs/Point' } }), $defs: { Point: obj({ x: { type: 'number' } }) } }, { p: { x: 1 } }],
    ['$ref to definitions', { ...obj({ p: { $ref: '#/definitions/Id' } }), definitions: { Id: { type: 'string', format: 'uuid' } } }, { p: '00000000-0000-4000-8000-000000000000' }],
    ['required without a property schema', { type: 'object', required: ['k'] }, { k: 'test' }],
    ['additionalProperties schema for a required key', { type: 'object', required: ['k'], additionalProperties: { type: 'integer' } }, { k: 1 }],
  ])('%s', (_label, schema, expected) => {
    const { args } = generateArguments(schema);
    expect(args).toEqual(expected);
    expect(validateAgainstSchema(schema, args)).toEqual({ ok: true });
  });

  test.each<[string, unknown]>([
    ['a self-referencing $ref', { ...obj({ n: { $ref: '#/$defs/Node' } }), $defs: { Node: obj({ next: { $ref: '#/$defs/Node' } }) } }],
    ['an unresolvable $ref', obj({ x: { $ref: '#/$defs/Missing' } })],
    ['a remote $ref', obj({ x: { $ref: 'https://example.com/schema.json' } })],
    ['a pattern it cannot satisfy', obj({ x: { type: 'string', pattern: '^[0-9]{4}$' } })],
    ['an impossible range', obj({ x: { type: 'integer', minimum: 5, maximum: 2 } })],
    ['a false schema', obj({ x: false })],
    ['uniqueItems it cannot honour', obj({ x: { type: 'array', items: { type: 'boolean', const: true }, minItems: 2, uniqueItems: true } })],
  ])('%s gives a note, not a hang or a throw', (_label, schema) => {
    const { notes } = generateArguments(schema);
    expect(notes.length).toBeGreaterThan(0);
  });

  test.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'object'],
    ['an array', [1, 2]],
    ['a root default that is not an object', { type: 'object', default: 3 }],
  ])('a non-schema (%s) gives empty arguments', (_label, schema) => {
    expect(generateArguments(schema).args).toEqual({});
  });

  test('exclusiveMinimum as a draft-4 boolean (which Ajv 8 cannot check) is honoured', () => {
    expect(generateArguments(obj({ n: { type: 'integer', minimum: 10, exclusiveMinimum: true } })).args).toEqual({ n: 11 });
  });

  test("a server's schema cannot make the generation allocate without bound, nor backtrack without end", () => {
    const huge = generateValue({ type: 'string', minLength: 1e10 });
    expect(String(huge.value).length).toBe(4096);
    expect(huge.notes.join('\n')).toMatch(/cannot generate a string of 10000000000 characters/);
    const t0 = performance.now();
    const evil = generateValue({ type: 'string', minLength: 4000, pattern: '^(x+)+$' });
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(evil.notes.join('\n')).toMatch(/cannot generate a string matching/);
  });

  test('a pattern Airlock cannot run (a lookaround, a back-reference) is noted as unchecked, not as met or failed', () => {
    const ahead = generateArguments(obj({ x: { type: 'string', pattern: '^(?=x)' } }));
    expect(ahead.notes).toEqual(['x: "test" not checked against /^(?=x)/ (a lookaround or back-reference, which Airlock does not run)']);
    const back = generateArguments(obj({ y: { type: 'string', pattern: '(t)\\1' } }));
    expect(back.notes.join('\n')).toMatch(/^y: "test" not checked against \/\(t\)\\1\//);
  });

  test('a pattern the default value happens to satisfy gives no note', () => {
    expect(generateArguments(obj({ x: { type: 'string', pattern: '^t' } })).notes).toEqual([]);
  });
});

describe('generateValue and requiredProperties', () => {
  test.each<[unknown, unknown]>([
    [{ type: 'string' }, 'test'],
    [{ type: 'integer', minimum: -3, maximum: -1 }, -1],
    [true, 'test'],
  ])('generateValue(%j) = %j', (schema, value) => {
    expect(generateValue(schema).value).toEqual(value);
  });

  test.each<[unknown, string[]]>([
    [obj({ a: {}, b: {} }, ['b', 'a']), ['b', 'a']],
    [{ type: 'object', required: ['a', 'a', 3] }, ['a']],
    [{ allOf: [{ required: ['x'] }, { required: ['y'] }] }, ['y', 'x']],
    [undefined, []],
  ])('requiredProperties(%j)', (schema, names) => {
    expect(requiredProperties(schema)).toEqual(names);
  });
});
