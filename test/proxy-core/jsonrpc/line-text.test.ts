/**
 * A long line's text is decoded once per task (line-text.ts): read again from the same buffer in the same task it
 * is the text already decoded; in a later task, or for a short line, it is decoded afresh.
 */
import { expect, test } from 'vitest';
import { lineText } from '../../../proxy-core/src/jsonrpc/line-text.js';
import { parseLine } from '../../../proxy-core/src/jsonrpc/inbound.js';

const longLine = (fill: string) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text: fill.repeat(100_000) } }));

test("a long line's text is the one decoded earlier in the same task, and decoded afresh in the next", async () => {
  const line = longLine('a');
  const parsed = parseLine(line) as { result: { text: string } };
  expect(parsed.result.text[0]).toBe('a');
  // the bytes change under it (nothing in the relay does this): only a text kept from the parse still reads 'a'
  line.fill(0x62, line.indexOf('aaa'), line.length - 3);
  expect(lineText(line).includes('"text":"aaa')).toBe(true);
  await Promise.resolve();
  await Promise.resolve();
  expect(lineText(line).includes('"text":"bbb')).toBe(true);
});

test('another buffer with the same bytes, and a short line, are decoded from their own bytes', () => {
  const line = longLine('a');
  lineText(line);
  const other = Buffer.from(line);
  other.fill(0x62, other.indexOf('aaa'), other.length - 3);
  expect(lineText(other).includes('"text":"bbb')).toBe(true);
  const short = Buffer.from('{"a":"xyz"}');
  expect(lineText(short)).toBe('{"a":"xyz"}');
  short.fill(0x71, 6, 9);
  expect(lineText(short)).toBe('{"a":"qqq"}');
});
