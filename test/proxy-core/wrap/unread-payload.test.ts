import { describe, expect, test } from 'vitest';
import { checkedStringEnd, withoutPayload } from '../../../proxy-core/src/wrap/unread-payload.js';

const MIN = 16;
const long = (c = 'x') => c.repeat(MIN + 4);

/** The parse of `line` with the texts `withoutPayload` cuts set to "", by the paths given. */
function parsedWith(line: string, cut: (string | number)[][]): unknown {
  const m = JSON.parse(line);
  for (const path of cut) {
    let at = m;
    for (const k of path.slice(0, -1)) at = at[k];
    at[path.at(-1)!] = '';
  }
  return m;
}

function skeleton(line: string | Buffer, min = MIN): unknown {
  const s = withoutPayload(Buffer.isBuffer(line) ? line : Buffer.from(line), min);
  return s === undefined ? undefined : JSON.parse(s.toString('utf8'));
}

describe('what an answer is parsed without', () => {
  test("a content item's long text, data and blob, and its resource's text and blob, become \"\"; the rest is as parsed", () => {
    const result = {
      content: [
        { type: 'text', text: long('t'), annotations: { audience: ['user'] } },
        { type: 'image', data: long('d'), mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a', text: long('r') } },
        { type: 'resource', resource: { uri: 'file:///b', blob: long('b') } },
        { type: 'text', text: 'short' },
      ],
      isError: false,
    };
    const line = JSON.stringify({ jsonrpc: '2.0', id: 7, result });
    expect(skeleton(line)).toEqual(
      parsedWith(line, [
        ['result', 'content', 0, 'text'],
        ['result', 'content', 1, 'data'],
        ['result', 'content', 2, 'resource', 'text'],
        ['result', 'content', 3, 'resource', 'blob'],
      ]),
    );
  });

  test("a resource read's long texts and blobs become \"\"; its uris and types stay", () => {
    const result = { contents: [{ uri: 'file:///a', mimeType: 'text/plain', text: long('t') }, { uri: 'file:///b', blob: long('b') }, { uri: 'file:///c', text: 'short' }] };
    const line = JSON.stringify({ jsonrpc: '2.0', id: 3, result });
    expect(skeleton(line)).toEqual(parsedWith(line, [['result', 'contents', 0, 'text'], ['result', 'contents', 1, 'blob']]));
  });

  test('every other string stays: keys, structuredContent, _meta, the envelope, an error, texts anywhere else', () => {
    const lines = [
      { jsonrpc: '2.0', id: long('i'), result: { content: [] } },
      { jsonrpc: '2.0', id: 1, result: { content: [], structuredContent: { text: long() } } },
      { jsonrpc: '2.0', id: 1, result: { content: [], _meta: { text: long() }, text: long() } },
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', nested: { text: long() } }] } },
      { jsonrpc: '2.0', id: 1, result: { content: { text: long() } } },
      { jsonrpc: '2.0', id: 1, result: { content: [[{ text: long() }]] } },
      { jsonrpc: '2.0', id: 1, result: { content: [{ [long('k')]: long() }] } },
      { jsonrpc: '2.0', id: 1, error: { code: -1, message: long(), data: { content: [{ text: long() }] } } },
      { jsonrpc: '2.0', id: 1, result: { other: { content: [{ text: long() }] } } },
      { jsonrpc: '2.0', id: 1, result: { other: { contents: [{ text: long() }] } } },
      { jsonrpc: '2.0', id: 1, result: { contents: [{ uri: long('u'), _meta: { text: long() } }] } },
      { jsonrpc: '2.0', id: 1, result: { content: [{ text: 'x'.repeat(MIN - 1) }] } },
      { jsonrpc: '2.0', method: 'notifications/message', params: { content: [{ text: long() }] } },
    ];
    for (const l of lines) expect(withoutPayload(Buffer.from(JSON.stringify(l)), MIN)).toBeUndefined();
  });

  test('a key spelled with escapes is not recognised (nothing cut), and the spaces JSON allows are', () => {
    expect(withoutPayload(Buffer.from(`{"id":1,"result":{"content":[{"te\\u0078t":"${long()}"}]}}`), MIN)).toBeUndefined();
    const spaced = ` { "id" : 1 , "result" : { "content" : [ { "type" : "text" , "text" : "${long()}" } ] } } `;
    expect(skeleton(spaced)).toEqual(parsedWith(spaced, [['result', 'content', 0, 'text']]));
  });

  test('a key given twice: the skeleton parses to what the line parses to, but for the cut text', () => {
    const last = `{"id":1,"result":{"content":[{"text":"${long()}","text":"kept"}]}}`;
    expect(skeleton(last)).toEqual(JSON.parse(last));
    const first = `{"id":1,"result":{"content":[{"text":"kept","text":"${long()}"}]}}`;
    expect(skeleton(first)).toEqual(parsedWith(first, [['result', 'content', 0, 'text']]));
  });

  test('a byte-order mark before the line is left where it was', () => {
    const line = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"id":1,"result":{"content":[{"text":"${long()}"}]}}`)]);
    const s = withoutPayload(line, MIN)!;
    expect([...s.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(JSON.parse(s.subarray(3).toString('utf8')).result.content[0].text).toBe('');
  });

  test('not an object, not closed, or a text JSON would refuse: nothing is cut (the line is parsed whole)', () => {
    const bad = [
      `[{"id":1,"result":{"content":[{"text":"${long()}"}]}}]`,
      `{"id":1,"result":{"content":[{"text":"${long()}`,
      `"${long()}"`,
      `{"id":1,"result":{"content":[{"text":"${long()}\u0001"}]}}`,
      `{"id":1,"result":{"content":[{"text":"${long()}\\x41"}]}}`,
      `{"id":1,"result":{"content":[{"text":"${long()}\\u12g4"}]}}`,
      `{"id":1,"result":{"content":[{"text":"${long()}\\u12"}]}}`,
      `{"id":1,"result":{"content":[{"text":"${long()}\t"}]}}`,
      `}{"id":1,"result":{"content":[{"text":"${long()}"}]}}`,
      // nested past what the wrapper walks (its refusal is the whole parse's)
      `{"id":1,"result":{"content":[{"text":"${long()}","deep":${'['.repeat(200)}${']'.repeat(200)}}]}}`,
    ];
    for (const line of bad) expect(withoutPayload(Buffer.from(line), MIN), line.slice(0, 60)).toBeUndefined();
  });
});

describe('the check of a text left out says "valid" only where JSON.parse does', () => {
  // mostly bytes a text may hold, some that end it, escape it, or may not be in it
  const PLAIN = [0x41, 0x66, 0x30, 0x39, 0x20, 0x7f, 0x80, 0xc3, 0xa9, 0xe2, 0xff, 0x75, 0x62, 0x2f, 0x6e, 0x74];
  const SPECIAL = [0x22, 0x5c, 0x5c, 0x00, 0x01, 0x09, 0x0a, 0x1f, 0x7b, 0x2c, 0x3a];
  let seed = 11;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const byte = () => (next() % 100 < 88 ? PLAIN[next() % PLAIN.length]! : SPECIAL[next() % SPECIAL.length]!);
  const parsed = (b: Buffer): unknown => {
    try {
      return JSON.parse(b.toString('utf8'));
    } catch {
      return undefined;
    }
  };

  test('random bytes inside a text: cut exactly when the line parses, the skeleton then parsing to it but for the text', () => {
    let valid = 0;
    let refused = 0;
    for (let i = 0; i < 6000; i++) {
      const inner = Buffer.from(Array.from({ length: MIN + (next() % 24) }, byte));
      const line = Buffer.concat([Buffer.from('{"id":1,"result":{"content":[{"type":"text","text":"'), inner, Buffer.from('"}],"isError":false}}')]);
      const s = withoutPayload(line, MIN);
      const whole = parsed(line) as { result: { content: { text: string }[] } } | undefined;
      if (whole === undefined) {
        // a text JSON refuses is never cut, or cut from a skeleton that does not parse either: parsed whole, refused
        if (s !== undefined) expect(parsed(s), inner.toString('hex')).toBeUndefined();
        else refused++;
        continue;
      }
      valid++;
      expect(s, inner.toString('hex')).toBeDefined();
      whole.result.content[0]!.text = '';
      expect(parsed(s!)).toEqual(whole);
    }
    expect(valid).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  test('every text JSON.stringify writes is accepted', () => {
    for (let i = 0; i < 2000; i++) {
      const text = String.fromCodePoint(...Array.from({ length: MIN + (next() % 24) }, () => [0, 8, 9, 10, 13, 31, 34, 47, 92, 127, 233, 0x2028, 0xd800, 0xfeff, 0x1f600][next() % 15]!));
      const line = Buffer.from(JSON.stringify({ id: 1, result: { content: [{ type: 'text', text }] } }));
      expect(skeleton(line), JSON.stringify(text)).toEqual({ id: 1, result: { content: [{ type: 'text', text: '' }] } });
    }
  });

  test('the string check itself, escape by escape', () => {
    const end = (s: string) => checkedStringEnd(Buffer.from(s), 0);
    expect(end('"a\\"b"')).toBe(5);
    for (const e of ['\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t', '\\u00e9', '\\uD83D', '\\uABCD']) expect(end(`"${e}"`), e).toBe(e.length + 1);
    for (const e of ['\\a', '\\x41', '\\u00g9', '\\u0', '\\U00e9', '\\', '\u0000', '\u001f', '\n']) expect(end(`"${e}"`), JSON.stringify(e)).toBe(-1);
    expect(end('"never closed')).toBe(-1);
  });
});
