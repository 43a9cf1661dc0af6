import { expect, test } from 'vitest';
import { HeldClientLines } from '../../../proxy-core/src/wrap/held-client-lines.js';

test('lines are held as copies, given back in order once, and none are held after', () => {
  const held = new HeldClientLines();
  const chunk = Buffer.from('{"a":1}\n{"b":2}\n');
  expect(held.hold(chunk.subarray(0, 7))).toBe(true);
  expect(held.hold(chunk.subarray(8, 15))).toBe(true);
  // the chunk's memory is the reader's to reuse: what is held is not a view of it
  chunk.fill(0x20);
  expect(held.take().map((b) => b.toString())).toEqual(['{"a":1}', '{"b":2}']);
  expect(held.take()).toEqual([]);
});

test('past the bound on lines or on bytes, a line is not held; taking them frees the room', () => {
  const byLines = new HeldClientLines(2, 1000);
  expect([byLines.hold(Buffer.from('1')), byLines.hold(Buffer.from('2')), byLines.hold(Buffer.from('3'))]).toEqual([true, true, false]);
  const byBytes = new HeldClientLines(100, 10);
  expect(byBytes.hold(Buffer.alloc(6))).toBe(true);
  expect(byBytes.hold(Buffer.alloc(5))).toBe(false);
  expect(byBytes.hold(Buffer.alloc(4))).toBe(true);
  expect(byBytes.take()).toHaveLength(2);
  expect(byBytes.hold(Buffer.alloc(10))).toBe(true);
});
