/**
 * The channel's requests whose params reach the handler as bytes (`setRaw`): exactly one form is taken so, and
 * anything else, a request the method's `take` declines included, is parsed as JSON as every other request is.
 * A request written piece by piece (`requestJson`) is one frame, answered like any other.
 */
import { describe, expect, test } from 'vitest';
import { rawMethod } from '../../../proxy-core/src/ipc/channel.js';
import { RawJournal } from '../../../proxy-core/src/protocol/methods/journal.js';
import { channelPair } from '../../helpers/memory-channel.js';

describe('a channel with raw methods', () => {
  function pair() {
    const [broker, peer] = channelPair();
    const seen: { method: string; params: unknown }[] = [];
    broker.setRaw(new Map([rawMethod('journal', (bytes) => RawJournal.of(bytes))]));
    broker.setHandlers({
      request: (method, params) => {
        seen.push({ method, params });
        return { ok: true };
      },
    });
    return { broker, peer, seen };
  }

  test("a request of the method's form reaches the handler as its bytes, unparsed, and is answered", async () => {
    const { peer, seen } = pair();
    const entries = '{"id":"a","text":"he said \\"hi\\"\\n"},{"id":"b"}';
    expect(await peer.requestJson('journal', ['{"n":2,"entries":[', Buffer.from(entries), ']}'])).toEqual({ ok: true });
    expect(seen).toHaveLength(1);
    const raw = seen[0]!.params as RawJournal;
    expect(raw).toBeInstanceOf(RawJournal);
    expect(raw.n).toBe(2);
    expect(raw.bytes.toString()).toBe(`[${entries}]`);
    expect(JSON.parse(raw.bytes.toString())).toEqual([{ id: 'a', text: 'he said "hi"\n' }, { id: 'b' }]);
  });

  test('a request that came in many chunks reaches the handler as those chunks, never joined; split in its head, it is joined and taken', async () => {
    const { broker, peer, seen } = pair();
    const entries = Array.from({ length: 300 }, (_, i) => JSON.stringify({ id: `c${i}`, text: 'é☕ "quoted" \\ '.repeat(i % 5) }));
    const line = Buffer.from(`{"t":"req","id":7,"m":"journal","p":{"n":300,"entries":[${entries.join(',')}]}}\n`);
    const answered = new Promise<void>((resolve) => broker.socket.once('data', () => resolve()));
    const sendInChunks = (size: number, first = size) => {
      peer.socket.write(line.subarray(0, first));
      for (let at = first; at < line.length; at += size) peer.socket.write(line.subarray(at, Math.min(at + size, line.length)));
    };
    sendInChunks(4096);
    // the head cut after 20 bytes, the closing brackets alone in their chunk: offered in parts, declined, taken joined
    sendInChunks(line.length, 20);
    peer.socket.write(line.subarray(0, line.length - 3));
    peer.socket.write(line.subarray(line.length - 3));
    await answered;
    await new Promise((r) => setImmediate(r));
    expect(seen).toHaveLength(3);
    const raws = seen.map((s) => s.params as RawJournal);
    for (const raw of raws) {
      expect(raw).toBeInstanceOf(RawJournal);
      expect(raw.n).toBe(300);
      expect(raw.bytes.toString()).toBe(`[${entries.join(',')}]`);
    }
    expect(raws[0]!.parts.length).toBeGreaterThan(3);
    expect(Math.max(...raws[0]!.parts.map((p) => p.length))).toBeLessThanOrEqual(4096);
  });

  test('a raw request cut short anywhere, or split anywhere, is never a throw: taken whole, or parsed (and refused) as JSON', () => {
    const params = Buffer.from('{"n":2,"entries":[{"id":"a"},{"id":"b"}]}');
    const array = '[{"id":"a"},{"id":"b"}]';
    for (let end = 0; end <= params.length; end++) {
      const cut = params.subarray(0, end);
      const whole = RawJournal.of(cut);
      if (end === params.length) expect(whole?.bytes.toString()).toBe(array);
      else expect(whole).toBeUndefined();
      for (let at = 0; at <= end; at++) {
        const parts = [cut.subarray(0, at), cut.subarray(at)];
        const taken = RawJournal.of(parts);
        if (taken) expect(taken.bytes.toString()).toBe(array);
        for (let at2 = at; at2 <= end; at2 += 3) {
          const three = RawJournal.of([cut.subarray(0, at), cut.subarray(at, at2), cut.subarray(at2)]);
          if (three) expect(three.bytes.toString()).toBe(array);
        }
      }
    }
    // the head whole in the first part and the closing brackets in the last: taken in parts
    expect(RawJournal.of([params.subarray(0, 25), params.subarray(25, 30), params.subarray(30)])?.parts).toHaveLength(3);
  });

  test('any other form is parsed as JSON: the params the handler gets are the object sent', async () => {
    const { peer, seen } = pair();
    await peer.request('journal', { entries: [{ id: 'x' }] });
    await peer.request('journal', { n: 1, entries: [{ id: 'y' }], lost: { notRun: 1, executed: 0 } });
    await peer.request('other', { n: 1, entries: [] });
    await peer.requestJson('journal', ['{"n":1,"entries":[{"id":"z"}],"more":1}']);
    expect(seen.map((s) => s.params instanceof RawJournal)).toEqual([false, false, false, false]);
    expect(seen.map((s) => s.params)).toEqual([{ entries: [{ id: 'x' }] }, { n: 1, entries: [{ id: 'y' }], lost: { notRun: 1, executed: 0 } }, { n: 1, entries: [] }, { n: 1, entries: [{ id: 'z' }], more: 1 }]);
  });

  test('without raw methods, the same bytes are parsed as usual', async () => {
    const [broker, peer] = channelPair();
    let got: unknown;
    broker.setHandlers({ request: (_m, p) => ((got = p), 1) });
    await peer.requestJson('journal', ['{"n":1,"entries":[{"id":"a"}]}']);
    expect(got).toEqual({ n: 1, entries: [{ id: 'a' }] });
  });
});

describe('what a channel cannot write', () => {
  const deep = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));

  test('an answer nested past what JSON.stringify can walk is answered as unwritable, from a promise or not; the channel goes on', async () => {
    const [broker, peer] = channelPair();
    broker.setHandlers({ request: (method) => (method === 'later' ? Promise.resolve(deep(20_000)) : method === 'now' ? deep(20_000) : 'fine') });
    for (const method of ['later', 'now']) await expect(peer.request(method)).rejects.toMatchObject({ code: 'unwritable' });
    expect(await peer.request('other')).toBe('fine');
  });

  test('a notification that cannot be written is not sent, and is no throw', async () => {
    const [broker, peer] = channelPair();
    const seen: string[] = [];
    peer.setHandlers({ notify: (m) => seen.push(m) });
    expect(broker.write({ t: 'note', m: 'deep', p: deep(20_000) })).toBe(false);
    broker.notify('plain', {});
    await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual(['plain']);
  });
});
