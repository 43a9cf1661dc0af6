/**
 * What a page keeps of the bytes it was read from: a big page's own line as it is (a copy would double it), a
 * short body copied out of the chunk it shares with other lines (holding it would keep the whole chunk alive).
 */
import { describe, expect, test } from 'vitest';
import { PageBytes } from '../../../proxy-core/src/wrap/page-bytes.js';

const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `tool_${i}`, description: 'x'.repeat(200), inputSchema: { type: 'object' } }));
const answer = (id: number, n: number) => JSON.stringify({ jsonrpc: '2.0', id, result: { tools: tools(n) } });

describe('PageBytes.keep', () => {
  test("a big page's line, joined into a buffer of its own, is kept as it is: the same memory, not a copy", () => {
    // as the line splitter hands over a long line: Buffer.concat of its chunks, exactly the line
    const text = answer(3, 2000);
    const chunks = [];
    for (let at = 0; at < text.length; at += 65536) chunks.push(Buffer.from(text.slice(at, at + 65536)));
    const line = Buffer.concat(chunks);
    const page = PageBytes.of(3, line)!;
    const kept = page.keep();
    expect(kept.buffer).toBe(line.buffer);
    expect(kept.toString()).toBe(text.slice('{"jsonrpc":"2.0","id":3,"result":'.length));
    // kept once: asked again, the same bytes
    expect(page.keep()).toBe(kept);
  });

  test('a short body read in a chunk with other lines is copied out of it, so the chunk is not held', () => {
    const first = answer(4, 1);
    const chunk = Buffer.from(`${first}\n${'{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n'.repeat(2000)}`);
    const line = chunk.subarray(0, Buffer.byteLength(first));
    const page = PageBytes.of(4, line)!;
    const kept = page.keep();
    expect(kept.buffer).not.toBe(chunk.buffer);
    expect(kept.buffer.byteLength).toBeLessThan(chunk.length / 4);
    expect(kept.toString()).toBe(first.slice('{"jsonrpc":"2.0","id":4,"result":'.length));
    // what was kept is the page's own bytes from now on: another page with the same body is the same page
    const again = PageBytes.of(9, Buffer.from(answer(9, 1)))!;
    expect(again.same(kept)).toBe(true);
  });
});

describe('PageBytes.read', () => {
  test('a line cut short anywhere (a server may end one wherever it likes) is no page, never a throw', () => {
    for (const id of [7, 12345678901, '"req-1"']) {
      const text = answer(0, 2).replace('"id":0', `"id":${id}`);
      // only the prefix up to `"result":` is read (the body is compared byte for byte with a page kept, later)
      const prefix = text.indexOf('"result":') + '"result":'.length;
      for (let end = 0; end < text.length; end++) {
        const read = PageBytes.read(Buffer.from(text.slice(0, end)));
        if (end <= prefix) expect(read).toBeUndefined();
      }
      expect(PageBytes.read(Buffer.from(text))?.id).toBe(typeof id === 'string' ? JSON.parse(id) : id);
    }
  });
});
