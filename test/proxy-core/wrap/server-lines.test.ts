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
