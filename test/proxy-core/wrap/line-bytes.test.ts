/**
 * A line written into its bytes (line-bytes.ts): what is written is what is read back, however far past its first
 * guess the line grows, and the envelope around a tools array is JSON.stringify's own.
 */
import { describe, expect, test } from 'vitest';
import { aroundTools, LineBytes } from '../../../proxy-core/src/wrap/line-bytes.js';

describe('LineBytes', () => {
  test('texts and byte ranges, written far past the first guess, read back as written', () => {
    const out = new LineBytes(8);
    const from = Buffer.from('0123456789');
    let expected = '';
    for (let i = 0; i < 500; i++) {
      const text = i % 3 === 0 ? `é${i}☕` : i % 3 === 1 ? '𝄞'.repeat(i % 7) : `${i},`;
      out.text(text);
      expected += text;
      out.bytes(from, i % 10, 10);
      expected += '0123456789'.slice(i % 10);
      expect(out.length).toBe(Buffer.byteLength(expected));
    }
    expect(out.done().toString('utf8')).toBe(expected);
  });

  test('a line much shorter than its guess is handed out in a buffer of its own size', () => {
    const out = new LineBytes(1 << 20);
    out.text('{"a":1}\n');
    const line = out.done();
    expect(line.toString()).toBe('{"a":1}\n');
    expect(line.buffer.byteLength).toBeLessThan(1 << 20);
  });

  test('a line that filled most of its guess is handed out where it was written, not copied', () => {
    const out = new LineBytes(1 << 20);
    const piece = 'x'.repeat(1000);
    for (let i = 0; i < 600; i++) out.text(piece);
    const line = out.done();
    expect(line.toString()).toBe(piece.repeat(600));
    // the same memory: a copy would touch as many fresh pages again as the line has
    expect(line.buffer.byteLength).toBeGreaterThanOrEqual(1 << 20);
  });
});

describe('aroundTools', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['the usual answer', { jsonrpc: '2.0', id: 3, result: { tools: [] } }],
    ['members before and after, undefined ones left out as JSON.stringify does', { result: { _meta: { a: [1, { b: null }] }, tools: [], nextCursor: 'c', gone: undefined }, jsonrpc: '2.0', id: 'x', extra: undefined }],
    ['a NUL and other escapes in the members around it', { jsonrpc: '2.0', id: 'a\u0000b', result: { note: 'tab\t "q" \u0000 \u2028', tools: [] } }],
    ['integer-like keys, which objects put first', { jsonrpc: '2.0', id: 1, result: { z: 1, 2: 'two', tools: [], 1: 'one' } }],
  ];
  for (const [what, message] of cases) {
    test(`is JSON.stringify's envelope for ${what}`, () => {
      const result = message.result as Record<string, unknown>;
      const tools = [{ name: 't', inputSchema: { type: 'object' } }];
      const [head, tail] = aroundTools(message, result);
      expect(`${head}${JSON.stringify(tools)}${tail}`).toBe(JSON.stringify({ ...message, result: { ...result, tools } }));
    });
  }
});
