import { describe, expect, test } from 'vitest';
import { closingQuote } from '../../../proxy-core/src/jsonrpc/json-bytes.js';

describe('the quote that closes a string, read as bytes', () => {
  const at = (s: string, stop?: number) => closingQuote(Buffer.from(s), 0, stop);

  test('an escaped quote, and runs of backslashes before a quote, are read as JSON reads them', () => {
    expect(at('"a"b"')).toBe(2);
    expect(at('"a\\"b"')).toBe(5);
    expect(at('"a\\\\"b"')).toBe(4);
    expect(at('"a\\\\\\"b"')).toBe(7);
    expect(at('"\\u0022"')).toBe(7);
    for (const text of ['', 'é', '"', '\\', '\\"', '"\\', 'a"b\\c', '\u2028']) {
      const json = JSON.stringify(text);
      expect(at(`${json},"next":1`), json).toBe(Buffer.byteLength(json) - 1);
    }
  });

  test('never closed, or closed only past where it may look: -1', () => {
    expect(at('"abc')).toBe(-1);
    expect(at('"ab\\"')).toBe(-1);
    expect(at('"abc"', 4)).toBe(-1);
    expect(at('"abc"', 5)).toBe(4);
  });
});
