/**
 * A journal batch read in pieces (batch-entries.ts): what JSON.parse reads from the whole text, always, for any
 * text, and no string of a big batch's size is made to read it.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { batchEntries, PIECE } from '../../../proxy-core/src/broker/batch-entries.js';
import { seeded } from '../../helpers/seeded.js';

/** What a wrapper writes for a call, keys in its order. */
function entry(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `c${i}`,
    client: 'bench',
    server: 'fixture',
    tool: 'echo',
    arguments: JSON.stringify({ text: `call ${i}` }),
    argsBytes: 20,
    class: 'read-only',
    reasons: ['no write verbs in its name'],
    decision: 'allow',
    decidedBy: 'rule',
    detail: 'allowed by rule 1',
    outcome: 'ok',
    result: JSON.stringify({ content: [{ type: 'text', text: `Echo: call ${i}` }] }),
    startedAt: 1_700_000_000_000 + i,
    ...extra,
  };
}

const bytes = (text: string) => Buffer.from(text);
const parsed = (text: string): unknown => {
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
};


describe('batchEntries', () => {
  afterEach(() => vi.restoreAllMocks());

  test('a big batch is read in pieces, none near the size at which a string becomes a large object', () => {
    const entries = Array.from({ length: 1000 }, (_, i) => entry(i));
    const text = JSON.stringify(entries);
    expect(text.length).toBeGreaterThan(4 * PIECE);
    const parse = vi.spyOn(JSON, 'parse');
    expect(batchEntries(bytes(text))).toEqual(entries);
    const longest = Math.max(...parse.mock.calls.map(([t]) => String(t).length));
    expect(parse.mock.calls.length).toBeGreaterThan(3);
    expect(longest).toBeLessThan(PIECE + 4096);
  });

  test('texts that spell the cut inside strings, and objects with an "id" nested in arrays, read as JSON.parse reads them', () => {
    const tricky = [
      entry(1, { detail: 'a},{"id":"forged"}' }),
      entry(2, { arguments: JSON.stringify([{ id: 1 }, { id: 2 }]) }),
      entry(3, { nested: [{ id: 'x' }, { id: 'y', deeper: [{ id: 'z' }, { id: 'w' }] }] }),
      entry(4, { detail: 'é☕𝄞 \u2028 "quoted" \\ backslash' }),
      entry(5, { reasons: ['},{"id":', '}', '{'] }),
    ];
    for (let size = 100; size <= 2000; size *= 2) {
      const entries = Array.from({ length: size }, (_, i) => (i % 37 < tricky.length ? tricky[i % 37]! : entry(i)));
      // a nested array of objects that spans a cut: the pieces do not parse, and the whole is read instead
      entries[Math.floor(size / 2)] = entry(-1, { spans: Array.from({ length: 3000 }, (_, i) => ({ id: i })) });
      const text = JSON.stringify(entries);
      expect(batchEntries(bytes(text))).toEqual(entries);
    }
  });

  test('one entry bigger than a piece, and a batch of one, read whole', () => {
    const big = entry(0, { result: 'x'.repeat(3 * PIECE) });
    for (const entries of [[big], [entry(1), big, entry(2)], [big, big]]) {
      expect(batchEntries(bytes(JSON.stringify(entries)))).toEqual(entries);
    }
  });

  test('what is not a JSON array is refused, big or small, as JSON.parse would refuse it', () => {
    const good = JSON.stringify(Array.from({ length: 800 }, (_, i) => entry(i)));
    const bad = [
      `${good.slice(0, -1)},]`, // a trailing comma
      good.slice(0, -100), // cut short
      good.replace('},{"id":"c300"', '},,{"id":"c300"'), // two commas between entries
      good.replace('},{"id":"c400"', '},{"id":c400'), // a broken entry past the first piece
      `{"entries":${good}}`,
      '"a string"',
      '',
      '[1,2',
    ];
    for (const text of bad) {
      expect(parsed(text)).toBeUndefined();
      expect(batchEntries(bytes(text))).toBeUndefined();
    }
    expect(batchEntries(bytes('[]'))).toEqual([]);
    expect(batchEntries(bytes(' [1, 2] '))).toEqual([1, 2]);
  });

  test('random batches, valid and broken, read as JSON.parse reads them', () => {
    const next = seeded(20261206);
    const word = () => ['},{"id":', '{"id":1}', ']', '[', ',', '"', '\\', 'é', 'text', '\n', '}'][Math.floor(next() * 11)]!;
    for (let round = 0; round < 60; round++) {
      const entries = Array.from({ length: 200 + Math.floor(next() * 1500) }, (_, i) => {
        const r = next();
        if (r < 0.05) return entry(i, { nested: [{ id: i }, { id: word() }] });
        if (r < 0.1) return entry(i, { detail: Array.from({ length: 8 }, word).join('') });
        if (r < 0.12) return i;
        return entry(i);
      });
      let text = JSON.stringify(entries);
      if (round % 3 === 0) {
        // broken somewhere: one byte of it changed
        const at = Math.floor(next() * text.length);
        text = text.slice(0, at) + word().slice(0, 1) + text.slice(at + 1);
      }
      expect(batchEntries(bytes(text))).toEqual(parsed(text));
    }
  });
});
