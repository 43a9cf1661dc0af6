import { describe, expect, test, vi } from 'vitest';
import { toolDefinition } from '../../../proxy-core/src/classify/definition.js';
import { argumentsHash } from '../../../proxy-core/src/jsonrpc/canonical.js';
import { canonicalJson } from '../../../proxy-core/src/util/canonical-json.js';

/** Canonical JSON as its definition says, in the plainest words: the text every stored hash was made from. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${Array.from(value, (v: unknown) => reference(v === undefined ? null : v)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(obj[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A small deterministic generator (no flaky seeds): xorshift32. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

// what a key or a string may hold: the plain, the escaped, the astral, lone surrogates, the JSON-legal U+2028
const PIECES = ['a', 'b', 'type', 'Z', '_', '10', '9', '', ' ', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', 'é', '\u2028', '😀', '\ud800', '\udfff', '__proto__', 'constructor'];

function text(next: () => number): string {
  let s = '';
  const n = Math.floor(next() * 4);
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(next() * PIECES.length)];
  return s;
}

function value(next: () => number, depth: number): unknown {
  const r = next();
  if (depth > 3 || r < 0.35) {
    const k = Math.floor(next() * 7);
    return [null, true, false, -0, next() * 1e6 - 5e5, 2 ** 60, text(next)][k];
  }
  if (r < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
  // up to 20 members near the top (both sides of the writer's small-object path), a few further down
  const obj: Record<string, unknown> = {};
  const n = Math.floor(next() * (depth < 2 ? 21 : 4));
  for (let i = 0; i < n; i++) Object.defineProperty(obj, text(next) + String(Math.floor(next() * 30)), { value: value(next, depth + 1), enumerable: true, writable: true, configurable: true });
  return obj;
}

describe('canonical JSON', () => {
  test('the same text as the plain definition for 1,000 generated values, parsed back and as built', () => {
    const next = random(0x5eed);
    for (let i = 0; i < 1000; i++) {
      const v = value(next, 0);
      expect(canonicalJson(v)).toBe(reference(v));
      // what comes off the wire: the shape JSON.parse gives (and the text is JSON it accepts)
      const parsed = JSON.parse(JSON.stringify(v)) as unknown;
      expect(canonicalJson(parsed)).toBe(reference(parsed));
      expect(JSON.parse(canonicalJson(parsed))).toEqual(parsed);
    }
  });

  test('pins and argument hashes stored by earlier versions still match: the hashes of a known definition are as they were', () => {
    // written by the two writers this one replaced (classify/definition.ts's and jsonrpc/canonical.ts's own): a
    // different text here would show every pinned tool as changed after an upgrade, and every held call's
    // arguments as other than what was approved
    const entry = {
      name: 'write_file',
      title: 'Write file',
      description:
        'Create a new file or completely overwrite an existing file with new content. Use with caution: it will overwrite existing files without warning. Handles text content with proper encoding. Only works within allowed directories.',
      inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'], additionalProperties: false, $schema: 'http://json-schema.org/draft-07/schema#' },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      _meta: { 'x-é': ['\u2028', '"q"', 1.5e-7, -0, null] },
      'x-extra': { b: 2, a: 1 },
    };
    const d = toolDefinition('write_file', [JSON.parse(JSON.stringify(entry)) as Record<string, unknown>]);
    expect(d.fingerprint).toBe('85c05dee408b98f1b67cfa8aafc91d1f85da68aaad5ef1c36719eeecf62e2319');
    expect(Object.fromEntries(Object.entries(d.parts).map(([k, v]) => [k, v.sha256]))).toEqual({
      title: '8053c26931ba3a484223794ba3be05cd2d24956a44f485e97caaeb25a4b358c7',
      description: 'b8f84989284702bdf3bdd327106352ec4c7eb095e684ebbc0b5c91fa9dd2b705',
      inputSchema: '267beea4dee705060a335ab810b7e3a833b704d08697cc73b03a67f93edde1ce',
      annotations: 'eac8ce4ef2f806dc71b6ab74b1b7f45db5d763fc21c243fac665161bb8d6fb60',
      _meta: '4c9289b6bdd07549926037c577e71979999ff84b7eafc66f4f86ad7161a8f3f5',
      other: 'add42fdaa1d9d906d304e00384bee191d9211c585139d8a49c5b55d310984580',
    });
    expect(argumentsHash({ z: [1, { y: 'é', x: null }], a: 'q"' })).toBe('c72e6082703a3f841bc76cc54f45dc33943c64f29bb61c86f302aba1a68d2025');
  });

  test('key order does not change the text; keys sort by code unit, digits as text', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 7) % 40}`, i]));
    const reversed = Object.fromEntries(Object.entries(many).reverse());
    expect(canonicalJson(reversed)).toBe(canonicalJson(many));
    expect(canonicalJson({ '9': 1, '10': 2, B: 3, a: 4, é: 5 })).toBe('{"10":2,"9":1,"B":3,"a":4,"é":5}');
  });

  test('undefined members are dropped, undefined items and holes written as null', () => {
    expect(canonicalJson({ u: undefined, a: [undefined, , 1] })).toBe('{"a":[null,null,1]}');
    expect(canonicalJson(undefined)).toBe('null');
  });

  test('strings are escaped as JSON.stringify escapes them, lone surrogates too', () => {
    for (const s of ['plain', 'quo"te', 'back\\slash', 'line\nbreak', '\u0000', '\ud800', 'x\udfffy', '😀', '\u2028']) {
      expect(canonicalJson(s)).toBe(JSON.stringify(s));
      expect(canonicalJson({ [s]: s })).toBe(`{${JSON.stringify(s)}:${JSON.stringify(s)}}`);
    }
  });

  test('the same text written recursively or with its own stack, at any depth JSON.parse takes', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 3000; i++) deep = { k: [deep] };
    expect(canonicalJson(deep)).toBe(`${'{"k":['.repeat(3000)}1${']}'.repeat(3000)}`);
    const deeper = JSON.parse(`${'[{"b":1,"a":'.repeat(50_000)}"x"${'}]'.repeat(50_000)}`) as unknown;
    expect(canonicalJson(deeper)).toBe(`${'[{"a":'.repeat(50_000)}"x"${',"b":1}]'.repeat(50_000)}`);
  });

  test('many distinct keys, and long ones, are each written right, and what is kept of them stays bounded', async () => {
    // a module of its own: what the tests above kept does not count here
    vi.resetModules();
    const fresh = await import('../../../proxy-core/src/util/canonical-json.js');
    const long = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${i}`.padEnd(100_000, '\u0001'), i]));
    expect(fresh.canonicalJson(long)).toBe(reference(long));
    expect(fresh.quotedKeysKept()).toEqual({ keys: 0, chars: 0 });
    const obj = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`key "${i}"`, i]));
    expect(fresh.canonicalJson(obj)).toBe(reference(obj));
    expect(fresh.canonicalJson({ 'key "9999"': 1, 'key "0"': 2 })).toBe('{"key \\"0\\"":2,"key \\"9999\\"":1}');
    const kept = fresh.quotedKeysKept();
    expect(kept.keys).toBe(4096);
    // 4,096 keys of at most 64 characters, each escaped to at most six
    expect(kept.chars).toBeLessThan(4096 * (64 * 6 + 3));
  });
});
