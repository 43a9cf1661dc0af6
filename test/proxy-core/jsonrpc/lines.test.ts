import { describe, expect, test } from 'vitest';
import { argumentsHash } from '../../../proxy-core/src/jsonrpc/canonical.js';
import { canonicalJson } from '../../../proxy-core/src/util/canonical-json.js';
import { LineSplitter } from '../../../proxy-core/src/jsonrpc/lines.js';

function split(chunks: (string | Buffer)[]): string[] {
  const out: string[] = [];
  const s = new LineSplitter((l) => out.push(l.toString('utf8')));
  for (const c of chunks) s.push(typeof c === 'string' ? Buffer.from(c) : c);
  s.flush();
  return out;
}

describe('LineSplitter', () => {
  test.each([
    ['one line', ['{"a":1}\n'], ['{"a":1}']],
    ['two in one chunk', ['a\nb\n'], ['a', 'b']],
    ['split across chunks', ['{"a"', ':1', '}\n'], ['{"a":1}']],
    ['CRLF', ['a\r\nb\r\n'], ['a', 'b']],
    ['blank lines skipped', ['\n\na\n\n'], ['a']],
    ['unterminated tail flushed', ['a\nb'], ['a', 'b']],
  ])('%s', (_label, chunks, expected) => {
    expect(split(chunks)).toEqual(expected);
  });

  test('a multi-byte character split across chunks survives', () => {
    const bytes = Buffer.from('{"t":"é😀"}\n');
    expect(split([bytes.subarray(0, 8), bytes.subarray(8)])).toEqual(['{"t":"é😀"}']);
  });

  test('a line of several chunks is offered as those chunks first, its CR cut off; one taken so is never joined', () => {
    const offered: string[][] = [];
    const joined: string[] = [];
    const s = new LineSplitter(
      (l) => joined.push(l.toString()),
      Infinity,
      () => {},
      (parts, length) => {
        const texts = parts.map((p) => p.toString());
        offered.push(texts);
        expect(length).toBe(texts.join('').length);
        return texts.join('').startsWith('take');
      },
    );
    for (const c of ['one\ntake', ' this', ' line\r\n', 'leave', ' that\r', '\ntake', ' the CR', '\r', '\n', 'last', '\nx']) s.push(Buffer.from(c));
    s.flush();
    expect(offered).toEqual([['take', ' this', ' line'], ['leave', ' that'], ['take', ' the CR']]);
    // one chunk each: never offered; declined: joined as ever; a line whose newline began a chunk: the one part it was
    expect(joined).toEqual(['one', 'leave that', 'last', 'x']);
  });

  test('a large line in many chunks is joined once', () => {
    const big = 'x'.repeat(5_000_000);
    const chunks: Buffer[] = [];
    for (let i = 0; i < big.length; i += 65536) chunks.push(Buffer.from(big.slice(i, i + 65536)));
    chunks.push(Buffer.from('\n'));
    const out = split(chunks);
    expect(out).toHaveLength(1);
    expect(out[0]!.length).toBe(big.length);
  });
});

describe('LineSplitter limit', () => {
  test('a line over the limit is dropped up to its newline, reported once, and the next line is intact', () => {
    const out: string[] = [];
    const overflows: number[] = [];
    const s = new LineSplitter((l) => out.push(l.toString()), 10, (n) => overflows.push(n));
    s.push(Buffer.from('ok\n0123456'));
    s.push(Buffer.from('789abcdef'));
    s.push(Buffer.from('ghij\nnext\n'));
    expect(out).toEqual(['ok', 'next']);
    expect(overflows).toEqual([16]);
  });

  test('a line exactly at the limit passes', () => {
    const out: string[] = [];
    const s = new LineSplitter((l) => out.push(l.toString()), 10);
    s.push(Buffer.from('0123456789'));
    s.push(Buffer.from('\n'));
    expect(out).toEqual(['0123456789']);
  });
});

describe('canonical arguments', () => {
  test('key order does not change the hash; values do', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(argumentsHash({ a: 1, b: 2 })).toBe(argumentsHash({ b: 2, a: 1 }));
    expect(argumentsHash({ a: 1 })).not.toBe(argumentsHash({ a: 2 }));
    expect(argumentsHash(undefined)).toBe(argumentsHash({}));
  });
});
