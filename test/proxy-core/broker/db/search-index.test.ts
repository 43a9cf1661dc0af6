// The search index off the write path (migration 15): rows are committed without their index rows, the index
// takes them in (in bulk, before a search, once CATCH_UP_ROWS wait), and through later copies, deletes, a
// rolled-back batch and a reopen it holds exactly the rows under its mark: a search finds what a LIKE scan finds.
import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { MIGRATIONS } from '../../../../proxy-core/src/broker/db/migrations.js';
import { likeSubstring, searchTerms } from '../../../../proxy-core/src/broker/db/queries.js';
import { CATCH_UP_ROWS } from '../../../../proxy-core/src/broker/db/search-index.js';
import type { Store } from '../../../../proxy-core/src/broker/db/store.js';
import type { CallRecord } from '../../../../proxy-core/src/protocol/api.js';
import { callRecord } from '../../../helpers/records.js';
import { tempStores } from '../../../helpers/temp-store.js';

const { dbPath, open } = tempStores('al-search-index-');

const rec = (i: number, over: Partial<CallRecord> = {}): CallRecord =>
  callRecord({ id: `c${i}`, sessionId: 's1', arguments: JSON.stringify({ path: `/notes/${i}.md` }), startedAt: 1000 + i, detail: 'allowed by rule r1', ...over });

const mark = (store: Store): number => store.db.prepare('SELECT seq FROM journal_search_mark').pluck().get() as number;
const indexed = (store: Store, text: string): number[] =>
  store.db.prepare('SELECT rowid FROM journal_search WHERE journal_search MATCH ? ORDER BY rowid').pluck().all(searchTerms(text)) as number[];
const found = (store: Store, text: string): string[] => store.history({ limit: 10_000, text }).calls.map((c) => c.id);
function scan(store: Store, text: string): string[] {
  const like = likeSubstring(text);
  return store.db
    .prepare("SELECT id FROM journal WHERE tool LIKE ? ESCAPE '\\' OR arguments LIKE ? ESCAPE '\\' OR detail LIKE ? ESCAPE '\\' ORDER BY seq DESC")
    .pluck()
    .all(like, like, like) as string[];
}
const healthy = (store: Store): void => void store.db.prepare("INSERT INTO journal_search (journal_search) VALUES ('integrity-check')").run();

describe('the search index catching up', () => {
  test('a batch is committed without its index rows; a search takes them in first and finds them all', () => {
    const store = open();
    store.writeJournal([rec(1), rec(2, { tool: 'notes_read' }), rec(3, { detail: 'denied by you', decision: 'deny', outcome: 'not-run' })]);
    expect(mark(store)).toBe(0);
    expect(indexed(store, 'notes')).toEqual([]);
    expect(store.journal.search.behind).toBe(true);
    expect(found(store, 'notes')).toEqual(['c3', 'c2', 'c1']);
    expect(found(store, 'denied by')).toEqual(['c3']);
    expect(found(store, 'notes_read')).toEqual(['c2']);
    expect(mark(store)).toBe(3);
    expect(indexed(store, 'notes')).toEqual([1, 2, 3]);
    expect(store.journal.search.behind).toBe(false);
    healthy(store);
  });

  test('a later copy of a row not yet taken in is indexed as it ends up; one of a row taken in replaces its texts', () => {
    const store = open();
    store.writeJournal([rec(1), rec(2)]);
    // c1 taken in, then both rows' later copies change the detail
    expect(store.journal.search.catchUp()).toBe(2);
    store.writeJournal([rec(3)]);
    store.writeJournal([rec(1, { outcome: 'tool-error', detail: 'quota exceeded' }), rec(3, { outcome: 'tool-error', detail: 'disk on fire' })]);
    for (const text of ['quota exceeded', 'disk on fire', 'allowed by rule', 'notes']) expect(found(store, text), text).toEqual(scan(store, text));
    expect(found(store, 'disk on fire')).toEqual(['c3']);
    expect(found(store, 'quota')).toEqual(['c1']);
    expect(indexed(store, 'allowed by rule')).toEqual([2]);
    healthy(store);
  });

  test('rows deleted before and after they were taken in leave the index whole (retention, a person with sqlite3)', () => {
    const store = open();
    store.writeJournal([rec(1), rec(2), rec(3)]);
    store.journal.search.catchUp();
    store.writeJournal([rec(4), rec(5)]);
    // one taken in (2), one not (4): the delete trigger takes out only what the index holds
    store.db.prepare("DELETE FROM journal WHERE id IN ('c2', 'c4')").run();
    healthy(store);
    expect(found(store, 'notes')).toEqual(['c5', 'c3', 'c1']);
    expect(indexed(store, 'notes')).toEqual([1, 3, 5]);
    store.prune({ maxAgeMs: 1, maxBytes: 1e12, now: 1_000_000_000 });
    expect(store.journalCount()).toBe(0);
    expect(indexed(store, 'notes')).toEqual([]);
    healthy(store);
  });

  test(`once ${CATCH_UP_ROWS} rows wait, the batch's own transaction takes them in`, () => {
    const store = open();
    const many = Array.from({ length: CATCH_UP_ROWS }, (_, i) => rec(i));
    store.writeJournal(many.slice(0, 10));
    expect(mark(store)).toBe(0);
    store.writeJournal(many.slice(10));
    expect(mark(store)).toBe(CATCH_UP_ROWS);
    expect(store.journal.search.behind).toBe(false);
    expect(indexed(store, `/notes/${CATCH_UP_ROWS - 1}.md`)).toEqual([CATCH_UP_ROWS]);
  });

  test('a batch rolled back after its transaction took rows in leaves the mark where it was: the rows still get in', () => {
    const store = open();
    store.writeJournal([rec(0)]);
    const many = Array.from({ length: CATCH_UP_ROWS }, (_, i) => rec(i + 1));
    // the batch takes the tail in, then what it ran in is rolled back (a full disk, as far as the batch can tell)
    expect(() =>
      store.db.transaction(() => {
        store.writeJournal(many);
        expect(mark(store)).toBe(CATCH_UP_ROWS + 1);
        throw new Error('disk I/O error');
      })(),
    ).toThrow('disk I/O error');
    expect(mark(store)).toBe(0);
    expect(store.journalCount()).toBe(1);
    store.writeJournal(many.slice(0, 3));
    expect(found(store, 'notes')).toEqual(scan(store, 'notes'));
    expect(found(store, 'notes')).toHaveLength(4);
    expect(mark(store)).toBe(4);
    healthy(store);
  });

  test('rows left out at a stop are taken in after the next start', () => {
    const path = dbPath();
    const first = open(path);
    first.writeJournal([rec(1), rec(2)]);
    first.close();
    const again = open(path);
    expect(again.journal.search.behind).toBe(true);
    expect(found(again, 'notes')).toEqual(['c2', 'c1']);
    expect(mark(again)).toBe(2);
  });

  test('when the index cannot catch up, a search checks the text on the rows themselves', () => {
    const store = open();
    store.writeJournal([rec(1), rec(2, { detail: 'asked you' })]);
    store.journal.search.catchUp = () => {
      throw new Error('database or disk is full');
    };
    expect(found(store, 'asked you')).toEqual(['c2']);
    expect(mark(store)).toBe(0);
  });
});

describe('migration 15', () => {
  test('a journal indexed row by row (schema 14) is all under the mark, and its rows change in the index as before', () => {
    const path = dbPath();
    const old = new Database(path);
    for (const sql of MIGRATIONS.slice(0, 14)) old.exec(sql);
    old.pragma('user_version = 14');
    const name = (n: string): number => Number(old.prepare('INSERT INTO names (name) VALUES (?) ON CONFLICT(name) DO UPDATE SET name = name RETURNING id').pluck().get(n));
    for (const [id, detail] of [['a', 'allowed by rule r1'], ['b', 'denied by you']] as const) {
      const seq = old
        .prepare('INSERT INTO journal_calls (id, client, server, tool, arguments, decision, decided_by, detail, outcome, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(id, name('cursor'), name('fs'), name('write'), '{"path":"/a"}', name('allow'), name('rule'), detail, name('ok'), 1000).lastInsertRowid;
      old.prepare('INSERT INTO journal_search (rowid, tool, arguments, detail) VALUES (?, ?, ?, ?)').run(seq, 'write', '{"path":"/a"}', detail);
    }
    old.close();
    const store = open(path);
    expect(mark(store)).toBe(2);
    expect(store.journal.search.behind).toBe(false);
    expect(found(store, 'denied by')).toEqual(['b']);
    store.db.prepare("UPDATE journal_calls SET detail = 'undone by you' WHERE id = 'b'").run();
    expect(found(store, 'denied by')).toEqual([]);
    expect(found(store, 'undone by')).toEqual(['b']);
    healthy(store);
  });
});
