import { describe, expect, test } from 'vitest';
import type { Message } from '../../../proxy-core/src/jsonrpc/messages.js';
import { MAX_NESTING } from '../../../proxy-core/src/jsonrpc/inbound.js';
import { readServerLine } from '../../../proxy-core/src/wrap/server-lines.js';

/** What the relay would be handed for one line from the server. */
function read(text: string): { m: Message; raw: string }[] {
  const out: { m: Message; raw: string }[] = [];
  readServerLine(Buffer.from(text), {
    log: () => {},
    message: (m, raw) => out.push({ m, raw: raw.toString('utf8') }),
    listingAnswer: () => false,
    repeatedListing: () => false,
  });
  return out;
}

describe('a line with more than one "id" in it', () => {
  test('an "id" nested in the result only: the server\'s own bytes go on', () => {
    const line = '{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a","inputSchema":{"properties":{"id":{"type":"string"}}}},{"name":"b","inputSchema":{"properties":{"id" :{}}}}]}}';
    const [got] = read(line);
    expect(got!.raw).toBe(line);
    expect(got!.m.id).toBe(3);
  });

  test('two top-level "id" keys: what the client gets is the message the wrapper read, re-serialised', () => {
    const line = '{"jsonrpc":"2.0","id":5,"result":{"content":[]},"id":"srv","method":"roots/list"}';
    const [got] = read(line);
    expect(got!.raw).toBe(JSON.stringify({ jsonrpc: '2.0', id: 'srv', result: { content: [] }, method: 'roots/list' }));
    expect(got!.raw.match(/"id"/g)).toHaveLength(1);
  });

  test('a second top-level "id" spelled with escapes, after nested ones and strings holding quotes, is found', () => {
    const line = '{"jsonrpc":"2.0","id":5,"result":{"id":1,"text":"a \\"id\\": 9 \\\\"},"\\u0069d":"srv","method":"x"}';
    const [got] = read(line);
    expect(got!.m.id).toBe('srv');
    expect(got!.raw).toBe(JSON.stringify(got!.m));
  });

  test('a string that holds an escaped quote and what looks like a key is one string, not a key', () => {
    // spaced as JSON.stringify would not: only the server's own bytes keep them
    const line = `{"jsonrpc":"2.0", "id":4, "result":{"id":1}, "note":${JSON.stringify('x","id":"y')}}`;
    expect(read(line)[0]!.raw).toBe(line);
  });

  test('strings of quotes and runs of backslashes are skipped whole: a second "id" after them is found, and none is made up', () => {
    const pieces = ['\\', '"', '\\"', '\\\\', 'id', '"id":', ' ', '{', ']', '\u0069d', 'é', '\n'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 300; i++) {
      let text = '';
      for (let k = next() % 12; k > 0; k--) text += pieces[next() % pieces.length];
      const key = JSON.stringify(text);
      // a nested "id" too: the envelope is read (a line with one "id" in all is not)
      const single = `{"jsonrpc":"2.0", "id":4, "result":{"id":1, ${key}:${key}, "k":[${key}]}, ${key === '"id"' ? '"x"' : key}:${key}}`;
      expect(read(single)[0]!.raw).toBe(single);
      const twice = `{"jsonrpc":"2.0","id":4,"result":{${key}:${key}},"note":${key},"id":"srv","method":"x"}`;
      const [got] = read(twice);
      expect(got!.m.id).toBe('srv');
      expect(got!.raw).toBe(JSON.stringify(got!.m));
    }
  });

  test('an escaped spelling nested only: the bytes go on', () => {
    const line = '{"jsonrpc":"2.0","id":7,"result":{"\\u0069\\u0064":1,"id":2}}';
    expect(read(line)[0]!.raw).toBe(line);
  });

  /** An answer whose result nests `levels` objects deep, each with an "id" member (the line's object is level 1). */
  const nested = (levels: number) => {
    let inner = '{"id":0}';
    for (let i = 2; i < levels; i++) inner = `{"id":${i},"next":${inner}}`;
    return `{"jsonrpc":"2.0","id":3,"result":${inner}}`;
  };

  test(`the pass that reads the envelope also reads the nesting: ${MAX_NESTING} levels go on as they are, one more is refused`, () => {
    const within = nested(MAX_NESTING);
    const [ok] = read(within);
    expect(ok!.raw).toBe(within);
    expect(ok!.m.id).toBe(3);
    const past = read(nested(MAX_NESTING + 1));
    expect(past).toHaveLength(1);
    expect(past[0]!.m.id).toBe(3);
    expect((past[0]!.m as { error?: { message: string } }).error?.message).toContain(`nested deeper than ${MAX_NESTING} levels`);
  });

  test('brackets and quotes inside strings are not nesting', () => {
    const line = `{"jsonrpc":"2.0","id":3,"result":{"id":1,"text":"${'[{'.repeat(200)} \\\" ${'}]'.repeat(200)}"}}`;
    const [got] = read(line);
    expect(got!.raw).toBe(line);
    expect((got!.m as { result: { text: string } }).result.text).toContain('[{[{');
  });
});
