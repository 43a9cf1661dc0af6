/**
 * The journal's way to the broker: spilled files replayed to a broker that came back go in batches as the live
 * ones do (at most MAX_SEGMENT entries and about MAX_SEGMENT_BYTES), in order, each file removed once sent; what
 * is held while a batch is out waits as any entry does (10 ms from the oldest of it), not a fixed time after the
 * acknowledgement, so a steady stream of calls makes one batch per 10 ms.
 */
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { Channel } from '../../../proxy-core/src/ipc/channel.js';
import { spillDir } from '../../../proxy-core/src/ipc/spill-file.js';
import type { CallRecord } from '../../../proxy-core/src/protocol/api.js';
import { JournalQueue, MAX_SEGMENT, MAX_SEGMENT_BYTES } from '../../../proxy-core/src/wrap/journal-queue.js';
import { JournalSender } from '../../../proxy-core/src/wrap/journal-sender.js';
import { cleanup, tempDir } from '../../helpers/airlock.js';
import { callRecord } from '../../helpers/records.js';

// temp folders (tempDir) go after each test
afterEach(() => {
  vi.useRealTimers();
  cleanup();
});

/** An executed call's record (it reached its server: the spill keeps it). */
const ran = (id: string, args = '{}'): CallRecord => callRecord({ id, arguments: args, outcome: 'ok', forwardedAt: 2 });

/** A broker connection that takes every journal batch: the batches' texts as they were sent. */
function recordingChannel(): { channel: Channel; batches: string[] } {
  const batches: string[] = [];
  const channel = {
    isOpen: true,
    async requestJson(_method: string, params: (string | Buffer)[]) {
      batches.push(params.map((p) => p.toString()).join(''));
      return {};
    },
  } as unknown as Channel;
  return { channel, batches };
}

/**
 * A sender on a broker connection that acknowledges a batch only when the test says (`ack`, the last batch sent):
 * the ids of each batch as it was sent.
 */
function ackedSender() {
  const q = new JournalQueue(tempDir(), 100_000, () => {});
  const batches: string[][] = [];
  let acknowledge: (() => void) | undefined;
  const channel = {
    isOpen: true,
    requestJson(_method: string, params: (string | Buffer)[]) {
      batches.push((JSON.parse(params.map((p) => p.toString()).join('')) as { entries: CallRecord[] }).entries.map((e) => e.id));
      return new Promise<void>((resolve) => (acknowledge = resolve));
    },
  } as unknown as Channel;
  return { q, batches, ack: () => acknowledge!(), sender: new JournalSender(q, () => channel) };
}

describe('the journal sender', () => {
  test('a spill replayed goes in batches of at most MAX_SEGMENT entries and about MAX_SEGMENT_BYTES, in order', async () => {
    const dir = tempDir();
    const q = new JournalQueue(dir, 100_000, () => {});
    const big = 'x'.repeat(100 * 1024);
    const records = [...Array.from({ length: 30 }, (_, i) => ran(`big-${i}`, JSON.stringify({ content: big }))), ...Array.from({ length: 2500 }, (_, i) => ran(`small-${i}`))];
    for (const r of records) q.add({ id: r.id, text: JSON.stringify(r), open: false, executed: true });
    // the broker away: everything reaches the disk and leaves memory
    expect(q.spillHeld(true)).toBe(true);
    while (q.batch()) q.acked(q.batch()!);
    const { channel, batches } = recordingChannel();
    await new JournalSender(q, () => channel).send();
    const sent = batches.map((b) => JSON.parse(b) as { n: number; entries: CallRecord[] });
    expect(sent.flatMap((b) => b.entries.map((e) => e.id))).toEqual(records.map((r) => r.id));
    for (const b of sent) {
      expect(b.n).toBe(b.entries.length);
      expect(b.entries.length).toBeLessThanOrEqual(MAX_SEGMENT);
      // at most one entry past the bound: the one that crossed it
      const last = JSON.stringify(b.entries.at(-1)).length;
      expect(JSON.stringify(b.entries).length - last).toBeLessThan(MAX_SEGMENT_BYTES + 2 * b.entries.length);
    }
    expect(sent.length).toBeGreaterThanOrEqual(3 + Math.ceil(2500 / MAX_SEGMENT) - 1);
    expect(readdirSync(spillDir(dir))).toEqual([]);
  });

  test('what is held while a batch is out goes 10 ms after the oldest of it was held, or at once when it has waited that long', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { q, batches, ack, sender } = ackedSender();
    const hold = (id: string) => {
      const r = ran(id);
      q.add({ id, text: JSON.stringify(r), open: false, executed: true });
      sender.scheduleFlush();
    };
    hold('a');
    await vi.advanceTimersByTimeAsync(10);
    expect(batches).toEqual([['a']]);
    // b is held 1 ms into the batch's flight, which is acknowledged 3 ms later
    await vi.advanceTimersByTimeAsync(1);
    hold('b');
    await vi.advanceTimersByTimeAsync(3);
    ack();
    // not 2 ms after the acknowledgement: 10 ms after b was held
    await vi.advanceTimersByTimeAsync(6);
    expect(batches).toEqual([['a']]);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([['a'], ['b']]);
    // c is held at once, and the batch out takes 30 ms to be acknowledged: c has waited its 10 ms by then, and goes
    hold('c');
    await vi.advanceTimersByTimeAsync(30);
    expect(batches).toEqual([['a'], ['b']]);
    ack();
    await vi.advanceTimersByTimeAsync(0);
    expect(batches).toEqual([['a'], ['b'], ['c']]);
    ack();
    await vi.advanceTimersByTimeAsync(20);
    expect(batches).toHaveLength(3);
  });

  test('sendSoon sends at the end of the turn, without waiting out the delay; asked while a batch is out, right after its acknowledgement', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance'] });
    const { q, batches, ack, sender } = ackedSender();
    const hold = (id: string) => q.add({ id, text: JSON.stringify(ran(id)), open: false, executed: true });
    // a is held with the usual delay; b, the same turn, asks for now: both go at the end of the turn
    hold('a');
    sender.scheduleFlush();
    sender.sendSoon();
    hold('b');
    sender.scheduleFlush();
    expect(batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(batches).toEqual([['a', 'b']]);
    // c asks for now while that batch is out: it goes as soon as the batch is acknowledged, 2 ms later
    await vi.advanceTimersByTimeAsync(1);
    hold('c');
    sender.sendSoon();
    await vi.advanceTimersByTimeAsync(2);
    expect(batches).toHaveLength(1);
    ack();
    await vi.advanceTimersByTimeAsync(0);
    expect(batches).toEqual([['a', 'b'], ['c']]);
    // and then the delay again: d, held the usual way, waits its 10 ms
    ack();
    await vi.advanceTimersByTimeAsync(0);
    hold('d');
    sender.scheduleFlush();
    await vi.advanceTimersByTimeAsync(9);
    expect(batches).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([['a', 'b'], ['c'], ['d']]);
  });
});
