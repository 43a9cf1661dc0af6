/** What the journal keeps of arguments and results: cut at the limit, marked, sized, never re-serialised when big. */
import { describe, expect, test } from 'vitest';
import { LIMITS } from '../../../proxy-core/src/protocol/limits.js';
import { capturedResult, shownArguments } from '../../../proxy-core/src/wrap/capture.js';

const capture = (raw: string) => capturedResult(JSON.parse(raw) as Record<string, unknown>, Buffer.from(raw));

describe('results', () => {
  test('a small result is its JSON text, whole', () => {
    expect(capture('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"é"}]}}')).toEqual({
      text: '{"content":[{"type":"text","text":"é"}]}',
      truncated: false,
      bytes: Buffer.byteLength('{"content":[{"type":"text","text":"é"}]}'),
    });
  });

  test('a small error is the error object', () => {
    expect(capture('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}}').text).toBe('{"code":-32000,"message":"no"}');
  });

  const big = 'y'.repeat(300_000);
  const value = `{"content":[{"type":"text","text":"${big}"}]}`;

  test.each([
    ['result first (the SDK order)', `{"result":${value},"jsonrpc":"2.0","id":1}`],
    ['result last', `{"jsonrpc":"2.0","id":"a-1","result":${value}}`],
    ['blanks around the members', `{ "jsonrpc" : "2.0" , "result" : ${value} , "id" : 1 }\r`],
    ['an escaped key before it', `{"j\\u0073onrpc":"2.0","id":"x\\"}","result":${value}}`],
  ])('a large result is cut from the bytes: %s', (_what, raw) => {
    const r = capture(raw);
    expect(r.truncated).toBe(true);
    expect(r.text.length).toBe(LIMITS.resultShown);
    expect(value.startsWith(r.text)).toBe(true);
    expect(r.bytes).toBe(value.length);
  });

  test('a large result cut mid-character never ends in half a character', () => {
    const emoji = '😀'.repeat(100_000);
    const raw = `{"result":{"text":"${emoji}"},"jsonrpc":"2.0","id":1}`;
    const r = capture(raw);
    expect(r.truncated).toBe(true);
    expect(r.text.length).toBeLessThanOrEqual(LIMITS.resultShown);
    expect(r.text).not.toMatch(/[\ud800-\udbff]$/);
    expect(r.text).not.toContain('\ufffd');
  });

  test('a small value in a big message (a huge id) is serialised whole', () => {
    const raw = `{"jsonrpc":"2.0","id":"${'i'.repeat(200_000)}","result":{"ok":true}}`;
    expect(capture(raw)).toEqual({ text: '{"ok":true}', truncated: false, bytes: 11 });
  });
});

describe('arguments', () => {
  test('cut at the limit with the size of the whole', () => {
    const args = { text: 'z'.repeat(100_000) };
    const s = shownArguments(args);
    expect(s).toMatchObject({ truncated: true, bytes: JSON.stringify(args).length });
    expect(s.text.length).toBe(LIMITS.argsShown);
    expect(shownArguments({ a: 1 })).toEqual({ text: '{"a":1}', truncated: false, bytes: 7 });
  });
});
