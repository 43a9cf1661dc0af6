import { describe, expect, test } from 'vitest';
import { argSummary, summaryKeys } from '../../../proxy-core/src/classify/arg-summary.js';

describe('argSummary', () => {
  test('a file tool names its path; a move names both', () => {
    expect(argSummary(JSON.stringify({ content: 'x', path: 'notes/a.md' }), { paths: ['path'] })).toBe('notes/a.md');
    expect(argSummary(JSON.stringify({ source: 'a.txt', destination: 'b.txt' }), { paths: ['source', 'destination'] })).toBe('a.txt → b.txt');
  });

  test("the schema's string properties, required first, say what a call is about", () => {
    const schema = { type: 'object', properties: { body: { type: 'string' }, count: { type: 'number' }, to: { type: 'string' } }, required: ['to'] };
    expect(summaryKeys({ schema })).toEqual(['to', 'body']);
    expect(argSummary(JSON.stringify({ body: 'hello', count: 3, to: 'ann@example.com' }), { schema })).toBe('ann@example.com · hello');
  });

  test('without hints: a telling name, else the first string the call holds', () => {
    expect(argSummary(JSON.stringify({ timeout: 5, command: 'ls -la' }))).toBe('ls -la');
    expect(argSummary(JSON.stringify({ n: 1, zeta: 'first', alpha: 'second' }))).toBe('first');
    expect(argSummary(JSON.stringify({ n: 1 }))).toBe('');
    expect(argSummary('[1,2]')).toBe('');
  });

  test('hostile text cannot reorder or hide a row: bidi overrides and zero-width characters are spelled out, line breaks become spaces', () => {
    expect(argSummary(JSON.stringify({ path: 'a\u202egnp.exe\nnext\u200b' }), { paths: ['path'] })).toBe('a\\u{202E}gnp.exe next\\u{200B}');
  });

  test('long values are cut to the length a row holds', () => {
    const s = argSummary(JSON.stringify({ path: 'x'.repeat(500) }), { paths: ['path'] }, 20);
    expect(s).toHaveLength(20);
    expect(s.endsWith('…')).toBe(true);
  });

  test('arguments cut at their limit: whole top-level pairs are read, a nested or cut one is not', () => {
    const cut = '{"opts": {"path": "inner"}, "path": "notes/b.md", "content": "very long and cut';
    expect(argSummary(cut, { paths: ['path'] })).toBe('notes/b.md');
    expect(argSummary('{"content": "cut', { paths: ['path'] })).toBe('');
    expect(argSummary('not json at all')).toBe('');
  });
});
