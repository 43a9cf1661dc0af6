import { describe, expect, test } from 'vitest';
import type { Message } from '../../../proxy-core/src/jsonrpc/messages.js';
import { MAX_NESTING } from '../../../proxy-core/src/jsonrpc/inbound.js';
import { readServerLine } from '../../../proxy-core/src/wrap/server-lines.js';
import { capturedResult } from '../../../proxy-core/src/wrap/capture.js';
import { LIMITS } from '../../../proxy-core/src/protocol/limits.js';
import type { JsonRpcId } from '../../../proxy-core/src/jsonrpc/messages.js';

/**
 * What the relay would be handed for one line from the server (`unread`: the ids of calls relayed unread; `awaits`:
 * whether any is out), and what it logged.
 */
function readWith(line: Buffer, unread: (id: JsonRpcId) => boolean = () => false, awaits = true): { got: { m: Message; raw: Buffer }[]; logs: string[] } {
  const got: { m: Message; raw: Buffer }[] = [];
  const logs: string[] = [];
  readServerLine(line, {
    log: (msg) => logs.push(msg),
    message: (m, raw) => got.push({ m, raw }),
    listingAnswer: () => false,
    relaysUnread: unread,
    awaitsUnread: () => awaits,
    repeatedListing: () => false,
  });
  return { got, logs };
}

function read(text: string): { m: Message; raw: string }[] {
  return readWith(Buffer.from(text)).got.map(({ m, raw }) => ({ m, raw: raw.toString('utf8') }));
}

describe('a big answer to a call relayed unread', () => {
  const MiB = 1 << 20;
  const answer = (id: unknown, text: string, extra = '') => Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"isError":false}${extra}}`);
  const big = 'é'.repeat(MiB / 2) + 'x'.repeat(MiB / 2);

  test('is parsed without its text, and the client gets the server\'s bytes; the journal keeps what it kept before', () => {
    const line = answer(9, big);
    const asked: unknown[] = [];
    const { got } = readWith(line, (id) => (asked.push(id), true));
    expect(asked).toEqual([9]);
    expect(got).toHaveLength(1);
    expect(got[0]!.raw).toBe(line);
    expect(got[0]!.m).toEqual({ jsonrpc: '2.0', id: 9, result: { content: [{ type: 'text', text: '' }], isError: false } });
    expect(capturedResult(got[0]!.m as Record<string, unknown>, line)).toEqual(capturedResult(JSON.parse(line.toString('utf8')), line));
  });

  test('a text just long enough to be left out, at the very end of a MiB line: the journal still cuts it from the bytes', () => {
    const text = 'y'.repeat(4 * LIMITS.resultShown);
    const line = Buffer.from(`{"jsonrpc":"2.0","pad":${JSON.stringify('p'.repeat(MiB - 3 * LIMITS.resultShown))},"id":4,"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}]}}`);
    const { got } = readWith(line, () => true);
    expect((got[0]!.m as { result: { content: { text: string }[] } }).result.content[0]!.text).toBe('');
    expect(capturedResult(got[0]!.m as Record<string, unknown>, line)).toEqual(capturedResult(JSON.parse(line.toString('utf8')), line));
  });

  test('a result that begins past where the journal looks for it is parsed whole (the journal would keep the parse)', () => {
    const line = Buffer.from(`{"jsonrpc":"2.0","pad":${JSON.stringify('p'.repeat(MiB))},"id":4,"result":{"content":[{"type":"text","text":${JSON.stringify(big)}}]}}`);
    const { got } = readWith(line, () => true);
    expect((got[0]!.m as { result: { content: { text: string }[] } }).result.content[0]!.text).toBe(big);
    expect(capturedResult(got[0]!.m as Record<string, unknown>, line)).toEqual(capturedResult(JSON.parse(line.toString('utf8')), line));
  });

  test('while no such call is out, a big line is parsed whole without being read for its structure first', () => {
    const asked: unknown[] = [];
    const { got } = readWith(answer(9, big), (id) => (asked.push(id), true), false);
    expect(asked).toEqual([]);
    expect((got[0]!.m as { result: { content: { text: string }[] } }).result.content[0]!.text).toBe(big);
  });

  test('any other answer, and any request, of that size is parsed whole', () => {
    for (const line of [answer(9, big), Buffer.from(`{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"content":[{"text":${JSON.stringify(big)}}]}}`)]) {
      const { got } = readWith(line, (id) => id === 1);
      expect(JSON.stringify(got[0]!.m)).toContain(big.slice(0, 100));
    }
  });

  test('a line that spells "id" twice is parsed whole (it may be re-serialised from the parse)', () => {
    const line = answer(9, big, ',"id":10');
    const { got } = readWith(line, () => true);
    expect(got[0]!.m.id).toBe(10);
    expect((got[0]!.m as { result: { content: { text: string }[] } }).result.content[0]!.text).toBe(big);
  });

  test('a text JSON would refuse: the line is refused as before', () => {
    const line = Buffer.from(answer(9, big).toString('utf8').replace('xxxx', 'x\\x41x'));
    const { got, logs } = readWith(line, () => true);
    expect(got).toHaveLength(0);
    expect(logs.join('\n')).toContain('a line that is not JSON');
  });
});

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
