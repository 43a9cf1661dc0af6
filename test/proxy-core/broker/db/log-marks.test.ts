/**
 * Gaps in the journal and the event stream: rows deleted by hand are counted at the next open, retention's own
 * deletions are not, a head that went back is seen, a gap is reported once; and the check's cost at a million
 * journal rows.
 */
import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import type { Store } from '../../../../proxy-core/src/broker/db/store.js';
import { callRecord } from '../../../helpers/records.js';
import { tempStores } from '../../../helpers/temp-store.js';

const stores = tempStores('al-gaps-');

function journal(store: Store, n: number, startedAt = 1_000): void {
  const records = Array.from({ length: n }, (_, i) => callRecord({ id: `c${store.journalCount() + i}-${Math.random()}`, startedAt: startedAt + i }));
  store.writeJournal(records);
}

/** Close, run `edit` on the file as an agent would, open again. */
function reopen(store: Store, edit: (db: Database.Database) => void = () => {}): Store {
  const path = store.db.name;
  store.marks.checkpoint();
  store.close();
  const db = new Database(path);
  edit(db);
  db.close();
  return stores.open(path);
}

describe('gaps in the logs', () => {
  test('journal rows deleted in the middle are reported with their count, once', () => {
    const first = stores.open();
    journal(first, 20);
    const store = reopen(first, (db) => db.prepare('DELETE FROM journal_calls WHERE seq BETWEEN 5 AND 11').run());
    const gaps = store.checkIntegrity().gaps;
    expect(gaps).toEqual([{ log: 'journal', missing: 7, backwards: 0, from: 1, to: 20 }]);
    // the next start does not report the same gap again
    expect(reopen(store).checkIntegrity().gaps).toEqual([]);
  });

  test("retention's own deletions leave no gap; rows deleted above its mark still do", () => {
    const first = stores.open();
    journal(first, 30);
    const r = first.prune({ maxAgeMs: 0, maxBytes: Infinity, now: 1_010, batch: 500 });
    expect(r.journal).toBe(10);
    let store = reopen(first);
    expect(store.checkIntegrity().gaps).toEqual([]);
    store = reopen(store, (db) => db.prepare('DELETE FROM journal_calls WHERE seq = 20').run());
    expect(store.checkIntegrity().gaps).toEqual([{ log: 'journal', missing: 1, backwards: 0, from: 11, to: 30 }]);
  });

  test('the newest rows deleted (and the sequence set back): the head went back', () => {
    const first = stores.open();
    journal(first, 10);
    const store = reopen(first, (db) => {
      db.prepare('DELETE FROM journal_calls WHERE seq > 7').run();
      db.prepare("UPDATE sqlite_sequence SET seq = 7 WHERE name = 'journal_calls'").run();
    });
    expect(store.checkIntegrity().gaps).toEqual([{ log: 'journal', missing: 0, backwards: 3, from: 1, to: 10 }]);
  });

  test('a later copy of a call (an update, not an insert) takes no seq: no gap', () => {
    const first = stores.open();
    const rec = callRecord({ id: 'same', startedAt: 5 });
    first.writeJournal([rec]);
    first.writeJournal([{ ...rec, outcome: 'ok' }]);
    journal(first, 3);
    expect(reopen(first).checkIntegrity().gaps).toEqual([]);
  });

  test('events deleted by hand are reported as an events gap', () => {
    const first = stores.open();
    for (let i = 0; i < 10; i++) first.addEvent('setting-changed', null, null, { key: 'k', value: String(i) });
    const store = reopen(first, (db) => db.prepare('DELETE FROM event_log WHERE seq IN (3, 4)').run());
    expect(store.checkIntegrity().gaps.filter((g) => g.log === 'events').map((g) => g.missing)).toEqual([2]);
  });

  test('the check at a million journal rows takes one count over a small index (timed)', () => {
    const first = stores.open();
    const db = first.db;
    // rows put in directly (a million through writeJournal would take minutes): the shape the check reads
    const names = db.prepare("INSERT INTO names (name) VALUES ('x') RETURNING id").pluck().get() as number;
    db.transaction(() => {
      const ins = db.prepare('INSERT INTO journal_calls (seq, id, client, server, tool, decision, decided_by, outcome, started_at, arguments) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
      const args = JSON.stringify({ path: '/home/user/project/src/file.ts', content: 'x'.repeat(200) });
      // seqs 500,000 to 500,099 left out: what deleting them by hand leaves (without the search index's rows to keep straight)
      for (let i = 1; i <= 1_000_100; i++) if (i < 500_000 || i > 500_099) ins.run(i, `c${i}`, names, names, names, names, names, names, i, args);
    })();
    const store = reopen(first);
    const t0 = performance.now();
    const gaps = store.marks.check();
    const ms = performance.now() - t0;
    expect(gaps.find((g) => g.log === 'journal')).toMatchObject({ missing: 100, backwards: 0 });
    process.stderr.write(`gap check at 1,000,000 journal rows: ${ms.toFixed(1)} ms\n`);
    expect(ms).toBeLessThan(2_000);
  }, 120_000);
});
