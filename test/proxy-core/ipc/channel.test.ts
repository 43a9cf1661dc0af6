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

  test('a raw request cut short anywhere is never a throw: taken whole, or parsed (and refused) as JSON', () => {
    const params = Buffer.from('{"n":2,"entries":[{"id":"a"},{"id":"b"}]}');
    for (let end = 0; end < params.length; end++) expect(RawJournal.of(params.subarray(0, end))).toBeUndefined();
    expect(RawJournal.of(params)?.bytes.toString()).toBe('[{"id":"a"},{"id":"b"}]');
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
