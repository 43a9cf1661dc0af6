import { describe, expect, test } from 'vitest';
import { DAY_MS, MB, RETENTION_DEFAULTS, RETENTION_SETTINGS, retentionPolicy, startRetention, type PruneResult } from '../../../../proxy-core/src/broker/db/retention.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import type { CallRecord } from '../../../../proxy-core/src/protocol/api.js';
import { callRecord } from '../../../helpers/records.js';
import { tempStores } from '../../../helpers/temp-store.js';

const { open } = tempStores('al-retention-');

const rec = (i: number, startedAt: number, args = '{}'): CallRecord => callRecord({ id: `c${i}`, arguments: args, outcome: 'ok', startedAt });

const ids = (store: Store) => store.history({ limit: 10_000 }).calls.map((c) => c.id).reverse();

/** Events stamped at given times (addEvent stamps Date.now(); a test sets them). */
function eventsAt(store: Store, times: number[]): void {
  for (const at of times) {
    const e = store.addEvent('tick', null, null, { at });
    store.db.prepare('UPDATE event_log SET at = ? WHERE seq = ?').run(at, e.seq);
  }
}

function untilDone(store: Store, o: Parameters<Store['prune']>[0]): PruneResult[] {
  const out: PruneResult[] = [];
  for (let i = 0; i < 1000; i++) {
    const r = store.prune(o);
    out.push(r);
    if (r.done) return out;
  }
  throw new Error('prune never done');
}

describe('prune by age', () => {
  test('deletes calls that started and events that happened before now - maxAge, oldest first, in batches', () => {
    const store = open();
    // calls 1..10 started at t = 100 * i; events at the same times
    store.writeJournal(Array.from({ length: 10 }, (_, k) => rec(k + 1, 100 * (k + 1))));
    store.db.exec('DELETE FROM events');
    eventsAt(store, [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    const o = { maxAgeMs: 500, maxBytes: Infinity, now: 1050, batch: 2 };
    // cutoff 550: calls and events at 100..500 go, two per call
    expect(store.prune(o)).toEqual({ journal: 2, events: 2, done: false });
    expect(ids(store)).toEqual(['c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10']);
    expect(untilDone(store, o).map((r) => [r.journal, r.events])).toEqual([
      [2, 2],
      [1, 1],
    ]);
    expect(ids(store)).toEqual(['c6', 'c7', 'c8', 'c9', 'c10']);
    expect(store.eventsSince(0, 100).map((e) => e.at)).toEqual([600, 700, 800, 900, 1000]);
    // nothing more until time moves on
    expect(store.prune(o)).toEqual({ journal: 0, events: 0, done: true });
    expect(store.prune({ ...o, now: 1000 + 800 })).toEqual({ journal: 2, events: 2, done: false });
  });

  test('oldest by start time, not by the order calls were journaled', () => {
    const store = open();
    store.writeJournal([rec(1, 500), rec(2, 100), rec(3, 900), rec(4, 200)]);
    expect(store.prune({ maxAgeMs: 100, maxBytes: Infinity, now: 700, batch: 1 })).toMatchObject({ journal: 1, done: false });
    expect(ids(store)).toEqual(['c1', 'c3', 'c4']);
    untilDone(store, { maxAgeMs: 100, maxBytes: Infinity, now: 700 });
    expect(ids(store)).toEqual(['c3']);
  });

  test('an event stamped in the future (a clock step) waits for its time and blocks nothing behind it', () => {
    const store = open();
    eventsAt(store, [100, 5000, 200, 300, 4000]);
    expect(untilDone(store, { maxAgeMs: 1000, maxBytes: Infinity, now: 2000, batch: 10 })).toEqual([{ journal: 0, events: 3, done: true }]);
    expect(store.eventsSince(0, 100).map((e) => e.at)).toEqual([5000, 4000]);
  });

  test('an infinite age keeps everything; the head seq survives pruning', () => {
    const store = open();
    store.writeJournal([rec(1, 1), rec(2, 2)]);
    expect(store.prune({ maxAgeMs: Infinity, maxBytes: Infinity, now: 1e15 })).toEqual({ journal: 0, events: 0, done: true });
    untilDone(store, { maxAgeMs: 0, maxBytes: Infinity, now: Date.now() + 1000 });
    expect(store.journalCount()).toBe(0);
    expect(store.eventsSince(0, 10)).toEqual([]);
    expect(store.headSeq()).toBe(2);
    expect(store.addEvent('next', null, null, {}).seq).toBe(3);
  });

  test('rejects nonsense limits instead of deleting everything', () => {
    const store = open();
    expect(() => store.prune({ maxAgeMs: -1, maxBytes: 1, now: 0 })).toThrow(RangeError);
    expect(() => store.prune({ maxAgeMs: Number.NaN, maxBytes: 1, now: 0 })).toThrow(RangeError);
    expect(() => store.prune({ maxAgeMs: 1, maxBytes: -5, now: 0 })).toThrow(RangeError);
    expect(() => store.prune({ maxAgeMs: 1, maxBytes: 1, now: Number.NaN })).toThrow(RangeError);
  });
});

describe('prune by size', () => {
  // each call's size: 200 + 1000 bytes of arguments + 2 ("[]" reasons) = 1202
  const big = (i: number, t: number) => rec(i, t, 'a'.repeat(1000));

  test('deletes the oldest calls until the journal is under the cap, no more', () => {
    const store = open();
    store.writeJournal(Array.from({ length: 10 }, (_, k) => big(k + 1, 1000 + k)));
    expect(store.journalBytes()).toBe(12_020);
    // 6,000 bytes allowed: 5 calls fit (6,010 does not)
    const o = { maxAgeMs: Infinity, maxBytes: 6_000, now: 5000 };
    // (the calls' events were stamped now, after every pruned call started: they stay)
    expect(store.prune(o)).toEqual({ journal: 6, events: 0, done: true });
    expect(ids(store)).toEqual(['c7', 'c8', 'c9', 'c10']);
    expect(store.journalBytes()).toBe(4_808);
    expect(store.prune(o)).toEqual({ journal: 0, events: 0, done: true });
  });

  test('in batches, reporting more to do until under the cap', () => {
    const store = open();
    store.writeJournal(Array.from({ length: 10 }, (_, k) => big(k + 1, 1000 + k)));
    const results = untilDone(store, { maxAgeMs: Infinity, maxBytes: 2_500, now: 5000, batch: 3 });
    expect(results.map((r) => [r.journal, r.done])).toEqual([
      [3, false],
      [3, false],
      [2, true],
    ]);
    expect(ids(store)).toEqual(['c9', 'c10']);
  });

  test('age first, then size, within one batch budget', () => {
    const store = open();
    store.writeJournal(Array.from({ length: 10 }, (_, k) => big(k + 1, 1000 + k)));
    // cutoff 1003: c1..c3 by age; then size (2 calls = 2,404 allowed) takes c4..c8
    const results = untilDone(store, { maxAgeMs: 2, maxBytes: 2_404, now: 1005, batch: 4 });
    expect(results.map((r) => r.journal)).toEqual([4, 4]);
    expect(ids(store)).toEqual(['c9', 'c10']);
  });

  test('events from before the newest call the size cap pruned go too; later ones stay', () => {
    const store = open();
    store.writeJournal(Array.from({ length: 4 }, (_, k) => big(k + 1, 1000 * (k + 1))));
    store.db.exec('DELETE FROM events');
    eventsAt(store, [500, 1500, 2500, 3500, 4500]);
    store.prune({ maxAgeMs: Infinity, maxBytes: 2_404, now: 10_000 });
    expect(ids(store)).toEqual(['c3', 'c4']);
    // the cap pruned calls up to t=2000: events before that go, even though no age limit applies
    expect(store.eventsSince(0, 100).map((e) => e.at)).toEqual([2500, 3500, 4500]);
    // and the horizon is kept: events that were stamped before it later are still pruned
    eventsAt(store, [1800]);
    store.prune({ maxAgeMs: Infinity, maxBytes: 1e9, now: 10_000 });
    expect(store.eventsSince(0, 100).map((e) => e.at)).toEqual([2500, 3500, 4500]);
  });

  test('a cap of zero empties the journal and then is done', () => {
    const store = open();
    store.writeJournal(Array.from({ length: 5 }, (_, k) => big(k + 1, k)));
    const results = untilDone(store, { maxAgeMs: Infinity, maxBytes: 0, now: 10, batch: 2 });
    expect(results.at(-1)!.done).toBe(true);
    expect(store.journalCount()).toBe(0);
    expect(store.journalBytes()).toBe(0);
  });
});

test('tickets, rules, trust, settings, sessions, the catalog and withdrawn claims are never pruned', () => {
  const store = open();
  store.setSetting('estop', 'on');
  store.addRule({ id: 'r1', action: 'deny', server: '*', tool: '*', createdAt: 1 });
  store.setTrust('fs', true);
  store.withdrawClaim('fs', 'peek', 'evidence');
  store.openSession({ id: 's1', client: 'c', server: 'fs', command: [], pid: 1, since: 1 });
  store.replaceCatalog('fs', [{ name: 'write', class: 'mutating', reasons: [] }] as never);
  store.insertTicket({
    id: 't1', sessionId: 's1', client: 'c', server: 'fs', tool: 'write', arguments: {}, argsTruncated: false, argsBytes: 2,
    argsSha256: '0'.repeat(64), class: 'mutating', reasons: [], createdAt: 1,
  });
  store.writeJournal([rec(1, 1, 'x'.repeat(5000))]);
  untilDone(store, { maxAgeMs: 0, maxBytes: 0, now: Date.now() + 10_000 });
  expect(store.journalCount()).toBe(0);
  expect(store.eventsSince(0, 10)).toEqual([]);
  expect(store.getSetting('estop')).toBe('on');
  expect(store.rules().map((r) => r.id)).toEqual(['r1']);
  expect(store.trusts('fs')).toBe(true);
  expect(store.withdrawn('fs')).toEqual({ peek: 'evidence' });
  expect(store.catalog('fs').map((t) => t.name)).toEqual(['write']);
  for (const table of ['tickets', 'sessions']) expect(store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get()).toEqual({ n: 1 });
});

describe('retention policy', () => {
  const cases: [Record<string, string>, { maxAgeMs: number; maxBytes: number }][] = [
    [{}, { maxAgeMs: 90 * DAY_MS, maxBytes: 500 * MB }],
    [{ [RETENTION_SETTINGS.maxAgeDays]: '7', [RETENTION_SETTINGS.maxMegabytes]: '50' }, { maxAgeMs: 7 * DAY_MS, maxBytes: 50 * MB }],
    [{ [RETENTION_SETTINGS.maxAgeDays]: ' 30 ' }, { maxAgeMs: 30 * DAY_MS, maxBytes: 500 * MB }],
    // nonsense falls back to the default, never to "keep nothing"
    [{ [RETENTION_SETTINGS.maxAgeDays]: '0', [RETENTION_SETTINGS.maxMegabytes]: '-1' }, { maxAgeMs: 90 * DAY_MS, maxBytes: 500 * MB }],
    [{ [RETENTION_SETTINGS.maxAgeDays]: '1.5', [RETENTION_SETTINGS.maxMegabytes]: 'lots' }, { maxAgeMs: 90 * DAY_MS, maxBytes: 500 * MB }],
    [{ [RETENTION_SETTINGS.maxAgeDays]: '1e3', [RETENTION_SETTINGS.maxMegabytes]: '' }, { maxAgeMs: 90 * DAY_MS, maxBytes: 500 * MB }],
  ];
  for (const [settings, want] of cases) {
    test(`settings ${JSON.stringify(settings)}`, () => {
      expect(retentionPolicy((k) => settings[k])).toEqual(want);
    });
  }
  test('defaults are 90 days and 500 MB', () => {
    expect(RETENTION_DEFAULTS).toEqual({ maxAgeDays: 90, maxMegabytes: 500 });
  });
  test('the policy reads the store settings', () => {
    const store = open();
    store.setSetting(RETENTION_SETTINGS.maxAgeDays, '2');
    expect(retentionPolicy((k) => store.getSetting(k)).maxAgeMs).toBe(2 * DAY_MS);
  });
});

describe('the retention timer', () => {
  test('runs batches back to back, each in its own turn of the event loop, until done; then sleeps', async () => {
    const store = open();
    store.writeJournal(Array.from({ length: 25 }, (_, k) => rec(k + 1, k)));
    const batches: PruneResult[] = [];
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      const timer = startRetention(store, () => ({ maxAgeMs: 0, maxBytes: Infinity }), {
        batch: 10,
        now: () => 1000,
        intervalMs: 60_000,
        onBatch: (r) => {
          batches.push(r);
          order.push('batch');
          // something that arrives meanwhile runs before the next batch
          setImmediate(() => order.push('other'));
          if (r.done) {
            timer.stop();
            resolve();
          }
        },
      });
      // nothing ran inside startRetention itself
      expect(batches).toEqual([]);
    });
    expect(batches.map((b) => b.journal)).toEqual([10, 10, 5]);
    expect(order.slice(0, 4)).toEqual(['batch', 'other', 'batch', 'other']);
    expect(store.journalCount()).toBe(0);
  });

  test('kick starts a round now; a failing batch is reported and the timer keeps going; stop stops it', async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const target = {
      prune(): PruneResult {
        calls++;
        if (calls === 1) throw new Error('disk full');
        return { journal: 0, events: 0, done: true };
      },
    };
    const timer = startRetention(target, () => ({ maxAgeMs: 1, maxBytes: 1 }), { intervalMs: 60_000, onError: (e) => errors.push(e) });
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(1);
    expect(errors).toHaveLength(1);
    timer.kick();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(2);
    timer.stop();
    timer.kick();
    await new Promise((r) => setTimeout(r, 10));
    expect(calls).toBe(2);
  });
});
