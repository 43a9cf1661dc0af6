// The journal writer: batches from every wrapper in one transaction per tick, acknowledged after the commit, and
// the search index caught up once the journal has been still for a moment (db/search-index.ts).
import { describe, expect, test, vi } from 'vitest';
import { INDEX_IDLE_MS, JournalWriter } from '../../../proxy-core/src/broker/journal-writer.js';
import type { Session } from '../../../proxy-core/src/broker/sessions.js';
import type { Store } from '../../../proxy-core/src/broker/db/store.js';
import { callRecord } from '../../helpers/records.js';
import { tempStores } from '../../helpers/temp-store.js';

const { open } = tempStores('al-journal-writer-');

const session = (id: string) => ({ info: { id, client: 'cursor', server: 'fs', command: ['fs'], pid: 1, startedAt: 1 } }) as unknown as Session;
const mark = (store: Store): number => store.db.prepare('SELECT seq FROM journal_search_mark').pluck().get() as number;

function writer(store: Store, log: string[] = []): JournalWriter {
  return new JournalWriter({
    store,
    publish: (events) => log.push(`publish ${events.length}`),
    committed: () => {},
    refused: (error) => log.push(`refused ${error}`),
  });
}

describe('JournalWriter', () => {
  test("two wrappers' batches of one tick go in one transaction, and are acknowledged once it committed", async () => {
    const store = open();
    const log: string[] = [];
    const w = writer(store, log);
    const commits = vi.spyOn(store, 'writeJournal');
    const [a, b] = await Promise.all([
      w.write(session('s1'), [callRecord({ id: 'a1' }), callRecord({ id: 'a2' })]),
      w.write(session('s2'), [callRecord({ id: 'b1' })]),
    ]);
    expect([a, b]).toEqual([{ acked: 2 }, { acked: 1 }]);
    expect(commits).toHaveBeenCalledTimes(1);
    expect(store.journalCount()).toBe(3);
    expect(log).toEqual(['publish 3']);
  });

  test('the search index takes in what was written once no batch came for a while', async () => {
    const store = open();
    const w = writer(store);
    const t0 = performance.now();
    await w.write(session('s1'), [callRecord({ id: 'a1', detail: 'allowed by rule r1' })]);
    expect(mark(store)).toBe(0);
    await w.write(session('s1'), [callRecord({ id: 'a2', detail: 'allowed by rule r1' })]);
    await vi.waitFor(() => expect(mark(store)).toBe(2), { timeout: 5000, interval: 5 });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(INDEX_IDLE_MS);
    expect(store.history({ text: 'rule r1' }).calls.map((c) => c.id)).toEqual(['a2', 'a1']);
  });

  test('a store closed before the journal went still is left alone; a catch-up that fails is said, never thrown', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const closed = open();
      const log: string[] = [];
      await writer(closed, log).write(session('s1'), [callRecord({ id: 'a1' })]);
      closed.close();
      vi.advanceTimersByTime(4 * INDEX_IDLE_MS);
      expect(log).toEqual(['publish 1']);

      const store = open();
      const failing: string[] = [];
      await writer(store, failing).write(session('s1'), [callRecord({ id: 'b1' })]);
      store.journal.search.catchUp = () => {
        throw new Error('database or disk is full');
      };
      vi.advanceTimersByTime(4 * INDEX_IDLE_MS);
      expect(failing).toEqual(['publish 1', 'refused the search index did not catch up: database or disk is full']);
    } finally {
      vi.useRealTimers();
    }
  });
});
