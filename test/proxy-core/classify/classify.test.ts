import { describe, expect, test } from 'vitest';
import { classifyTool, classifyTools, stricter, verdictFor } from '../../../proxy-core/src/classify/classify.js';

const untrusted = { trustReadOnlyHints: false };
const trusted = { trustReadOnlyHints: true };

describe('classifyTool', () => {
  test.each([
    ['no annotations: destructive by spec default', { name: 't' }, untrusted, 'destructive', /no annotations: destructive by spec default/],
    ['empty annotations use spec defaults', { name: 't', annotations: {} }, untrusted, 'destructive', /readOnlyHint not declared/],
    ['read-only claim, untrusted', { name: 't', annotations: { readOnlyHint: true } }, untrusted, 'read-only-unchecked', /cannot check/],
    ['read-only claim, trusted', { name: 't', annotations: { readOnlyHint: true } }, trusted, 'read-only-trusted', /trusted/],
    ['read-only with destructiveHint false, trusted', { name: 't', annotations: { readOnlyHint: true, destructiveHint: false } }, trusted, 'read-only-trusted', /trusted/],
    ['declared contradiction is not believed, even when trusted', { name: 't', annotations: { readOnlyHint: true, destructiveHint: true } }, trusted, 'destructive', /contradiction/],
    ['additive tool', { name: 't', annotations: { readOnlyHint: false, destructiveHint: false } }, untrusted, 'mutating', /destructiveHint: false/],
    ['destructive declared', { name: 't', annotations: { destructiveHint: true } }, trusted, 'destructive', /destructiveHint: true/],
    ['annotations a string', { name: 't', annotations: 'readonly' }, trusted, 'unclassifiable', /annotations is string/],
    ['a NUL in the name', { name: 'del\u0000read', annotations: { readOnlyHint: true } }, trusted, 'unclassifiable', /control characters/],
    ['an escape in the name', { name: 'read\u001b[2J', annotations: { readOnlyHint: true } }, trusted, 'unclassifiable', /control characters/],
    ['annotations null', { name: 't', annotations: null }, trusted, 'unclassifiable', /annotations is null/],
    ['annotations an array', { name: 't', annotations: [true] }, trusted, 'unclassifiable', /annotations is array/],
    ['readOnlyHint a string', { name: 't', annotations: { readOnlyHint: 'true' } }, trusted, 'unclassifiable', /readOnlyHint is string/],
    ['destructiveHint a number', { name: 't', annotations: { readOnlyHint: true, destructiveHint: 0 } }, trusted, 'unclassifiable', /destructiveHint is number/],
    ['openWorldHint null', { name: 't', annotations: { readOnlyHint: true, openWorldHint: null } }, trusted, 'unclassifiable', /openWorldHint is null/],
    ['missing name', { annotations: { readOnlyHint: true } }, trusted, 'unclassifiable', /name is undefined/],
    ['empty name', { name: '', annotations: { readOnlyHint: true } }, trusted, 'unclassifiable', /name is empty/],
    ['entry not an object', 'echo', trusted, 'unclassifiable', /not an object/],
  ])('%s', (_label, entry, opts, cls, reason) => {
    const v = classifyTool(entry, opts);
    expect(v.class).toBe(cls);
    expect(v.reasons.join(' | ')).toMatch(reason);
  });

  test('a withdrawn claim is never trusted again, and keeps its evidence', () => {
    const withdrawn = new Map([['peek', 'wrote while reading']]);
    const v = classifyTool({ name: 'peek', annotations: { readOnlyHint: true } }, { trustReadOnlyHints: true, withdrawn });
    expect(v.class).toBe('destructive');
    expect(v.reasons[0]).toBe('read-only claim withdrawn: wrote while reading');
    const additive = classifyTool({ name: 'peek', annotations: { readOnlyHint: true, destructiveHint: false } }, { trustReadOnlyHints: true, withdrawn });
    expect(additive.class).toBe('mutating');
  });

  test('the declared annotations are kept as declared', () => {
    const declared = { readOnlyHint: true, title: 'x', custom: 1 };
    expect(classifyTool({ name: 't', annotations: declared }, untrusted).declared).toBe(declared);
  });
});

describe('classifyTools', () => {
  test('duplicate names make every copy unclassifiable', () => {
    const c = classifyTools([{ name: 'a', annotations: { readOnlyHint: true } }, { name: 'a', annotations: { readOnlyHint: true } }, { name: 'b' }], trusted);
    expect(c.verdicts.get('a')!.class).toBe('unclassifiable');
    expect(c.verdicts.get('a')!.reasons[0]).toMatch(/2 tools share the name "a"/);
    expect(c.verdicts.get('b')!.class).toBe('destructive');
  });

  test('unnameable entries are reported as problems, not verdicts', () => {
    const c = classifyTools([{ annotations: {} }, 42, { name: 'ok', annotations: { readOnlyHint: true } }], trusted);
    expect(c.problems).toHaveLength(2);
    expect([...c.verdicts.keys()]).toEqual(['ok']);
  });

  test('a result without a tools array is a problem and an empty catalog', () => {
    const c = classifyTools({ not: 'an array' }, trusted);
    expect(c.verdicts.size).toBe(0);
    expect(c.problems[0]).toMatch(/no tools array/);
  });

  test('a tool the listing never showed is unclassifiable', () => {
    const v = verdictFor(classifyTools([], trusted), 'ghost');
    expect(v.class).toBe('unclassifiable');
    expect(v.reasons[0]).toMatch(/not in the server's tools\/list/);
  });

  test('trust only tightens: stricter() never picks the looser class', () => {
    expect(stricter('read-only-trusted', 'destructive')).toBe('destructive');
    expect(stricter('unclassifiable', 'mutating')).toBe('unclassifiable');
    expect(stricter('read-only-unchecked', 'read-only-trusted')).toBe('read-only-unchecked');
  });
});
