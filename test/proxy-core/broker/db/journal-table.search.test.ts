// The compact journal (migration 10): a database written at schema 9 migrates losing nothing (and one written
// at schema 10 through migration 11, times kept after the start), the search index stays in step with the
// journal through every write and delete, and a text search finds exactly what the plain LIKE scan over the
// journal finds.
import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { MIGRATIONS } from '../../../../proxy-core/src/broker/db/migrations.js';
import { SEARCH_HEAD_CHARS } from '../../../../proxy-core/src/broker/db/search-rest.js';
import { brokerEvent, historyItem, historyQuery, likeSubstring, searchTerms, type Row } from '../../../../proxy-core/src/broker/db/queries.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import type { CallRecord, HistoryQuery } from '../../../../proxy-core/src/protocol/api.js';
import { callRecord } from '../../../helpers/records.js';
import { tempStores } from '../../../helpers/temp-store.js';

const { dbPath, open } = tempStores('al-search-');

const rec = (over: Partial<CallRecord> = {}): CallRecord =>
  callRecord({ sessionId: 's1', arguments: '{"path":"/a"}', reasons: ['declares destructiveHint: false'], startedAt: 1000, ...over });

/** What the text search found before the index: LIKE over tool, arguments and detail, newest first. */
function scan(store: Store, text: string, where = '1'): string[] {
  const like = likeSubstring(text);
  return (
    store.db
      .prepare(`SELECT id FROM journal WHERE ${where} AND (tool LIKE ? ESCAPE '\\' OR arguments LIKE ? ESCAPE '\\' OR detail LIKE ? ESCAPE '\\') ORDER BY seq DESC`)
      .all(like, like, like) as { id: string }[]
  ).map((r) => r.id);
}

const found = (store: Store, q: HistoryQuery): string[] => store.history({ limit: 10_000, ...q }).calls.map((c) => c.id);

/** The trigrams searchTerms asks the index for: every third one and the last. */
function askedFor(text: string): string[] {
  const c = [...text];
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= c.length; i += 3) grams.add(c.slice(i, i + 3).join(''));
  grams.add(c.slice(c.length - 3).join(''));
  return [...grams];
}

/**
 * The index is whole and holds the live calls' texts, no more and no less: for each (ASCII) probe, the rows it
 * gives are the calls one of whose tool, arguments or detail holds each trigram asked for; and every probe
 * finds what the scan finds.
 */
function inStep(store: Store, probes: readonly string[]): void {
  store.db.prepare("INSERT INTO journal_search (journal_search) VALUES ('integrity-check')").run();
  // a call listed as indexed in part holds its arguments' first SEARCH_HEAD_CHARS characters in the index
  const listed = new Set(store.db.prepare('SELECT seq FROM journal_search_rest').pluck().all() as number[]);
  const rows = (store.db.prepare('SELECT seq, tool, arguments, detail FROM journal ORDER BY seq').all() as { seq: number; tool: string; arguments: string | null; detail: string | null }[]).map((r) =>
    listed.has(r.seq) && r.arguments !== null ? { ...r, arguments: [...r.arguments].slice(0, SEARCH_HEAD_CHARS).join('') } : r,
  );
  for (const p of probes) {
    expect(found(store, { text: p }), p).toEqual(scan(store, p));
    const terms = searchTerms(p);
    if (terms === null) continue;
    const raw = store.db.prepare('SELECT rowid FROM journal_search WHERE journal_search MATCH ? ORDER BY rowid').pluck().all(terms);
    const holds = (col: string | null, g: string): boolean => col !== null && col.toLowerCase().includes(g.toLowerCase());
    const expected = rows.filter((r) => askedFor(p).every((g) => holds(r.tool, g) || holds(r.arguments, g) || holds(r.detail, g))).map((r) => r.seq);
    expect(raw, p).toEqual(expected);
  }
}

// ---- a database as schema 9 wrote it --------------------------------------------------------------------

function schema9(path: string): void {
  const old = new Database(path);
  for (const sql of MIGRATIONS.slice(0, 9)) old.exec(sql);
  old.pragma('user_version = 9');
  const insert = old.prepare(`INSERT INTO journal (id, session_id, client, server, tool, arguments, args_truncated, args_bytes, args_sha256, class,
    reasons, decision, decided_by, detail, ticket_id, outcome, result, result_truncated, result_bytes, started_at, asked_at, decided_at,
    forwarded_at, finished_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const hash = 'ab'.repeat(32);
  insert.run('c1', 's0', 'cursor', 'fs', 'write_file', '{"path":"/x","content":"50% off_now"}', 0, 40, hash, 'mutating', '["r1"]', 'allow', 'user', 'approved',
    'tk1', 'ok', '{"content":[]}', 0, 14, 100, 100.5, 101.25, 101.5, 103.75, 2.25);
  insert.run('c2', null, 'zed', 'mail', 'send', '{"to":"é@x"}', 1, null, null, null, null, 'deny', 'estop', 'E-Stop', null, 'not-run', null, null, null, 200, null, null, null, null, null);
  // a hash that is not 64 lowercase hex digits is kept as it was
  insert.run('c3', 's0', 'cursor', 'fs', 'read', null, 0, 2, 'ABCDEF', 'read-only-unchecked', '[]', 'allow', 'rule', '', null, 'pending', null, null, null, 300, null, 300.5, null, null, null);
  insert.run('c4', 's1', 'claude', '日本', 'ツール', '{"q":"naïve"}', 0, 14, 'f'.repeat(64), 'read-only', '["a","b"]', 'allow', 'policy', 'allowed: "quoted"', null,
    'tool-error', 'boom', 1, 4, 400, null, 400, 400.125, 401, 1);
  // a gap in seq
  insert.run('gap', 's1', 'claude', 'fs', 'read', '{}', 0, 2, hash, 'read-only', '[]', 'allow', 'rule', 'gone', null, 'ok', 'x', 0, 1, 350, null, 350, 350, 351, 1);
  old.prepare("DELETE FROM journal WHERE id = 'gap'").run();
  insert.run('c5', 's1', 'claude', 'fs', 'read', '{}', 0, 2, hash, 'read-only', '[]', 'allow', 'rule', 'allowed by rule r1', null, 'ok', 'x', 0, 1, 500, null, 500, 500, 501, 1);
  old.prepare("DELETE FROM journal WHERE id = 'c5'").run(); // the high-water mark past the last row
  const event = old.prepare('INSERT INTO events (at, kind, server, tool, detail) VALUES (?, ?, ?, ?, ?)');
  event.run(150, 'rule-added', null, null, '{"id":"r"}');
  event.run(250, 'call', 'fs', 'write_file', JSON.stringify({ id: 'c1', sessionId: 's0', client: 'cursor', server: 'fs', tool: 'write_file', class: 'mutating', decision: 'allow', decidedBy: 'user', outcome: 'ok', ticketId: 'tk1', startedAt: 100, finishedAt: 103.75, durationMs: 2.25 }));
  event.run(260, 'classified', 'fs', null, '{"tools":3}');
  event.run(270, 'estop-on', null, null, 'null');
  event.run(280, 'gone', null, null, '{}');
  old.prepare("DELETE FROM events WHERE kind = 'gone'").run();
  old.close();
}

function readOld(path: string): { journal: Row[]; events: Row[]; sequences: Row[]; bytes: number } {
  const db = new Database(path, { readonly: true });
  try {
    return {
      journal: db.prepare('SELECT * FROM journal ORDER BY seq').all() as Row[],
      events: db.prepare('SELECT * FROM events ORDER BY seq').all() as Row[],
      sequences: db.prepare('SELECT name, seq FROM sqlite_sequence ORDER BY name').all() as Row[],
      bytes: (db.prepare('SELECT bytes FROM journal_stats').get() as { bytes: number }).bytes,
    };
  } finally {
    db.close();
  }
}

describe('migration 10 from a database written at schema 9', () => {
  test('every call and event reads back as before, through the queries and through the journal and events views', () => {
    const path = dbPath();
    schema9(path);
    const before = readOld(path);
    const store = open(path);
    expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    // through the Store: what the old Store made of each row
    expect(store.history({ limit: 100 }).calls).toEqual([...before.journal].reverse().map(historyItem));
    for (const row of before.journal) expect(store.call(String(row.id))).toEqual(historyItem(row));
    expect(store.history({ limit: 100, summary: true }).calls.map((c) => c.argsSha256)).toEqual(['f'.repeat(64), 'ABCDEF', undefined, 'ab'.repeat(32)]);
    expect(store.db.prepare("SELECT typeof(args_sha256) FROM journal_calls ORDER BY seq").pluck().all()).toEqual(['blob', 'null', 'text', 'blob']);
    expect(store.eventsSince(0, 100)).toEqual(before.events.map(brokerEvent));
    expect(store.events({ limit: 100 }).events).toEqual([...before.events].reverse().map(brokerEvent));
    expect(store.events({ server: 'fs' }).events.map((e) => e.type)).toEqual(['classified', 'call']);
    // through the views: the very rows the old tables held
    expect(store.db.prepare('SELECT * FROM journal ORDER BY seq').all()).toEqual(before.journal);
    expect(store.db.prepare('SELECT * FROM events ORDER BY seq').all()).toEqual(before.events);
    // seqs keep counting from where they were, and the size cap's count is unchanged
    const seq = (name: string): number => Number(before.sequences.find((r) => r.name === name)!.seq);
    expect(store.headSeq()).toBe(seq('events'));
    expect(store.journalBytes()).toBe(before.bytes);
    const [event] = store.writeJournal([rec({ id: 'new', tool: 'write_file', detail: 'after 50% off_now' })]);
    expect(event!.seq).toBe(seq('events') + 1);
    expect(store.call('new')!.seq).toBe(seq('journal') + 1);
    // the old rows are in the search index
    expect(found(store, { text: '50% off_' })).toEqual(['new', 'c1']);
    inStep(store, ['naïve', 'NAÏVE', '"quoted"', 'E-Stop', 'é@x', 'ツール', 'write_f', 'zzz']);
  });

  test('an empty database at schema 9 migrates, and its AUTOINCREMENT marks stay', () => {
    const path = dbPath();
    const old = new Database(path);
    for (const sql of MIGRATIONS.slice(0, 9)) old.exec(sql);
    old.pragma('user_version = 9');
    old.prepare("INSERT INTO events (at, kind, detail) VALUES (1, 'x', '{}')").run();
    old.prepare('DELETE FROM events').run();
    old.close();
    const store = open(path);
    expect(store.headSeq()).toBe(1);
    expect(store.addEvent('y', null, null, {}).seq).toBe(2);
    expect(store.history()).toEqual({ calls: [], nextCursor: null });
  });
});

// ---- a database as schema 10 wrote it -------------------------------------------------------------------

/** Times of every kind: whole ms, to the µs, a clock far from the start's (no exact offset), none. */
function schema10(path: string): void {
  const old = new Database(path);
  for (const sql of MIGRATIONS.slice(0, 10)) old.exec(sql);
  old.pragma('user_version = 10');
  const name = old.prepare('INSERT INTO names (name) VALUES (?) ON CONFLICT(name) DO UPDATE SET name = name RETURNING id').pluck();
  const n = (s: string | null): number | null => (s === null ? null : (name.get(s) as number));
  const call = old.prepare(`INSERT INTO journal_calls (id, session, client, server, tool, arguments, args_truncated, args_bytes, args_sha256, class,
    reasons, decision, decided_by, detail, ticket_id, outcome, result, result_truncated, result_bytes, started_at, asked_at, decided_at,
    forwarded_at, finished_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const search = old.prepare('INSERT INTO journal_search (rowid, tool, arguments, detail) VALUES (?, ?, ?, ?)');
  const t0 = 1_700_000_000_000;
  const rows: [string, number, number | null, number | null, number | null, number | null][] = [
    ['whole', t0, null, t0, t0 + 1, t0 + 2],
    ['micro', t0 + 10, t0 + 10.5, t0 + 11.25, t0 + 11.000123, t0 + 13.987654],
    ['other-clock', t0 + 20, 0.1, 123.456789, t0 + 20, 1e300],
    ['before-start', t0 + 30, t0 + 29, null, null, null],
    ['pending', t0 + 40, null, t0 + 40, null, null],
  ];
  for (const [id, start, asked, decided, forwarded, finished] of rows) {
    const tool = `tool_${id}`;
    const seq = call.run(id, n('s0'), n('cursor'), n('fs'), n(tool), '{"a":1}', 0, 7, null, n('read-only'), n('[]'), n('allow'), n('rule'), 'allowed', null,
      n(id === 'pending' ? 'pending' : 'ok'), id === 'pending' ? null : '"r"', id === 'pending' ? null : 0, 3, start, asked, decided, forwarded, finished, finished === null ? null : 1.5).lastInsertRowid;
    search.run(seq, tool, '{"a":1}', 'allowed');
  }
  old.prepare('UPDATE journal_stats SET bytes = 1234').run();
  const event = old.prepare(`INSERT INTO event_log (at, kind, server, tool, call_id, session, client, class, decision, decided_by, outcome,
    ticket_id, started_at, finished_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  for (const [id, start, , , , finished] of rows) {
    event.run(t0 + 100, n('call'), n('fs'), n(`tool_${id}`), id, n('s0'), n('cursor'), n('read-only'), n('allow'), n('rule'), n('ok'), null, start, finished, 1.5);
  }
  // a call event with no start (a summary whose start was not finite)
  event.run(t0 + 101, n('call'), n('fs'), n('tool_whole'), 'no-start', null, n('cursor'), n('read-only'), n('allow'), n('rule'), n('ok'), null, null, t0 + 5, null);
  old.prepare('INSERT INTO event_log (at, kind, detail) VALUES (?, ?, ?)').run(t0 + 102, n('rule-added'), '{"id":"r"}');
  old.close();
}

describe('migration 11 from a database written at schema 10', () => {
  test('every time reads back as it was, through the queries and through the journal and events views', () => {
    const path = dbPath();
    schema10(path);
    const before = readOld(path);
    const store = open(path);
    expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    // what the Store reads is what the views held before, row by row
    expect(store.history({ limit: 100 }).calls).toEqual([...before.journal].reverse().map(historyItem));
    for (const row of before.journal) expect(store.call(String(row.id))).toEqual(historyItem(row));
    const summaries = store.history({ limit: 100, summary: true }).calls;
    expect(summaries.map((c) => [c.askedAt, c.decidedAt, c.forwardedAt, c.finishedAt])).toEqual(
      [...before.journal].reverse().map((r) => [r.asked_at, r.decided_at, r.forwarded_at, r.finished_at].map((v) => v ?? undefined)),
    );
    expect(store.eventsSince(0, 100)).toEqual(before.events.map(brokerEvent));
    expect(store.db.prepare('SELECT * FROM journal ORDER BY seq').all()).toEqual(before.journal);
    expect(store.db.prepare('SELECT * FROM events ORDER BY seq').all()).toEqual(before.events);
    expect(store.journalBytes()).toBe(before.bytes);
    // offsets where the start gives the time back exactly, the time itself (marked) where it does not
    expect(store.db.prepare("SELECT asked_after, decided_after, forwarded_after, finished_after FROM journal_calls WHERE id = 'other-clock'").raw().get()).toEqual([
      '@0.1', '@123.456789', 0, 1e300, // 1e300 is its own offset: the start adds nothing to it
    ]);
    expect(store.db.prepare("SELECT decided_after, forwarded_after, finished_after FROM journal_calls WHERE id = 'whole'").raw().get()).toEqual([0, 1, 2]);
    // a later copy fills in a time relative to the stored start, and a new call's times read back whole
    const t0 = 1_700_000_000_000;
    store.writeJournal([rec({ id: 'pending', startedAt: t0 + 40, decidedAt: t0 + 40, forwardedAt: t0 + 40.5, finishedAt: 7, outcome: 'ok' })]);
    expect(store.call('pending')).toMatchObject({ decidedAt: t0 + 40, forwardedAt: t0 + 40.5, finishedAt: 7 });
    const [ev] = store.writeJournal([rec({ id: 'new', startedAt: t0, askedAt: t0 + 0.001, decidedAt: 0.3, forwardedAt: t0 + 1, finishedAt: t0 + 2.5, durationMs: 1.5 })]);
    expect(store.call('new')).toMatchObject({ startedAt: t0, askedAt: t0 + 0.001, decidedAt: 0.3, forwardedAt: t0 + 1, finishedAt: t0 + 2.5, durationMs: 1.5 });
    expect(store.eventsSince(ev!.seq - 1, 1)).toEqual([ev]);
    expect(store.db.prepare("SELECT finished_at, decided_at FROM journal WHERE id = 'new'").raw().get()).toEqual([t0 + 2.5, 0.3]);
  });
});

// ---- the index in step --------------------------------------------------------------------------------

describe('the search index follows the journal', () => {
  const probes = ['alpha', 'ALPHA', 'beta gamma', 'allowed by', 'denied: final', 'rule r1', 'pending detail', '"path"', '/a"}'];

  test('through inserts, later copies that change the detail, retention by age and by size, and deletes', () => {
    const store = open();
    store.writeJournal(Array.from({ length: 60 }, (_, i) => rec({ id: `p${i}`, outcome: 'pending', detail: i % 2 ? 'pending detail' : 'allowed by rule r1', arguments: JSON.stringify({ w: i % 3 ? 'alpha' : 'beta gamma' }), startedAt: 1000 + i })));
    inStep(store, probes);
    // a final copy replaces a pending row's detail: the index follows
    store.writeJournal(Array.from({ length: 60 }, (_, i) => rec({ id: `p${i}`, outcome: 'not-run', decision: 'deny', detail: i % 3 ? 'denied: final' : '', startedAt: 1000 + i })));
    inStep(store, probes);
    expect(found(store, { text: 'pending detail' })).toEqual(scan(store, 'pending detail'));
    // retention by age
    expect(store.prune({ maxAgeMs: 100, maxBytes: Infinity, now: 1120 }).journal).toBe(20);
    inStep(store, probes);
    // by size
    store.prune({ maxAgeMs: Infinity, maxBytes: store.journalBytes() - 2000, now: 2000 });
    expect(store.journalCount()).toBeLessThan(40);
    inStep(store, probes);
    // a delete through the journal view
    store.db.prepare("DELETE FROM journal WHERE id LIKE 'p5%'").run();
    inStep(store, probes);
    store.db.prepare('DELETE FROM journal').run();
    inStep(store, probes);
    expect(store.journalBytes()).toBe(0);
  });

  test('a batch that fails leaves neither rows, index entries nor cached names behind', () => {
    const store = open();
    store.writeJournal([rec({ id: 'ok1', tool: 'known' })]);
    const bad = { ...rec({ id: 'bad', tool: 'brand-new-tool', client: 'brand-new-client' }), startedAt: null } as unknown as CallRecord;
    expect(() => store.writeJournal([rec({ id: 'ok2', tool: 'another-new-tool' }), bad])).toThrow();
    expect(store.journalCount()).toBe(1);
    inStep(store, ['new-tool', 'known']);
    expect(store.db.prepare("SELECT COUNT(*) FROM names WHERE name LIKE '%new%'").pluck().get()).toBe(0);
    // the names it tried are stored (and found) when a later write uses them
    store.writeJournal([rec({ id: 'ok3', tool: 'brand-new-tool' })]);
    expect(found(store, { tool: 'brand-new-tool' })).toEqual(['ok3']);
    expect(store.call('ok3')!.tool).toBe('brand-new-tool');
  });
});

describe('long arguments, indexed in two steps', () => {
  /** Arguments of `n` characters (code points) with `marker` at `at`; astral characters so that UTF-16 units and characters differ. */
  const long = (n: number, marker: string, at: number): string => {
    const chars = Array.from({ length: n }, (_, i) => (i % 7 === 0 ? '🎉' : String.fromCharCode(97 + (i % 26))));
    chars.splice(at, marker.length, ...marker);
    return chars.join('');
  };
  const listed = (store: Store) => store.db.prepare('SELECT seq FROM journal_search_rest ORDER BY seq').pluck().all();
  const probes = ['DEEPMARK', 'HEADMARK', 'EDGEMARK', 'final words', 'pending', '🎉ab', 'xyz'];

  test('a call with long arguments is found by any text in them before and after the rest is indexed, as the scan finds it', () => {
    const store = open();
    store.writeJournal([
      rec({ id: 'deep', arguments: long(10_000, 'DEEPMARK', 9_000) }),
      rec({ id: 'head', arguments: long(10_000, 'HEADMARK', 10) }),
      // the marker across the cut: its trigrams are half in the head, half in the rest
      rec({ id: 'edge', arguments: long(9_000, 'EDGEMARK', SEARCH_HEAD_CHARS - 4) }),
      // exactly the head, and one more character: the first is indexed whole, the second listed
      rec({ id: 'exact', arguments: long(SEARCH_HEAD_CHARS, 'DEEPMARK', SEARCH_HEAD_CHARS - 8) }),
      rec({ id: 'one-more', arguments: long(SEARCH_HEAD_CHARS + 1, 'DEEPMARK', SEARCH_HEAD_CHARS - 7) }),
      rec({ id: 'short', arguments: '{"path":"/a","w":"DEEPMARK"}' }),
    ]);
    const seqOf = (id: string) => store.call(id)!.seq;
    expect(listed(store)).toEqual(['deep', 'head', 'edge', 'one-more'].map(seqOf));
    // the rest is not in the index yet: a text only there is found all the same
    expect(store.db.prepare('SELECT rowid FROM journal_search WHERE journal_search MATCH ?').pluck().all(searchTerms('DEEPMARK'))).toEqual(['exact', 'short'].map(seqOf));
    inStep(store, probes);
    expect(found(store, { text: 'DEEPMARK' })).toEqual(['short', 'one-more', 'exact', 'deep']);
    expect(found(store, { text: 'edgemark' })).toEqual(['edge']);
    // the rest indexed, a bounded number of characters at a time (a row at least)
    expect(store.journal.searchRest.waiting()).toBe(4);
    // one at least, then as many as fit (the other three: some 26,400 UTF-16 units)
    expect(store.journal.searchRest.complete(1)).toBe(1);
    expect(store.journal.searchRest.complete(20_000)).toBe(1);
    expect(store.journal.searchRest.complete(30_000)).toBe(2);
    expect(store.journal.searchRest.complete(30_000)).toBe(0);
    expect(listed(store)).toEqual([]);
    inStep(store, probes);
    expect(found(store, { text: 'DEEPMARK' })).toEqual(['short', 'one-more', 'exact', 'deep']);
    expect(found(store, { text: 'DEEPMARK', before: seqOf('exact') })).toEqual(['deep']);
  });

  test('the index follows later copies, retention and deletes of such calls, listed or indexed whole', () => {
    const store = open();
    const write = (from: number) =>
      store.writeJournal(
        Array.from({ length: 12 }, (_, i) =>
          rec({ id: `c${from + i}`, outcome: 'pending', detail: 'pending', arguments: long(6_000, i % 2 ? 'DEEPMARK' : 'HEADMARK', i % 2 ? 5_000 : 3), startedAt: 1000 + from + i }),
        ),
      );
    write(0);
    store.journal.searchRest.complete(30_000);
    write(100);
    // some indexed whole, some listed
    expect(store.journal.searchRest.waiting()).toBeGreaterThan(0);
    expect(store.journal.searchRest.waiting()).toBeLessThan(24);
    inStep(store, probes);
    // a final copy changes the detail of listed and whole rows alike
    store.writeJournal(Array.from({ length: 24 }, (_, i) => rec({ id: `c${i < 12 ? i : 100 + i - 12}`, outcome: 'ok', detail: 'final words', startedAt: 1000 })));
    inStep(store, probes);
    store.journal.searchRest.complete(8_000);
    inStep(store, probes);
    expect(store.prune({ maxAgeMs: 100, maxBytes: Infinity, now: 1105 }).journal).toBeGreaterThan(0);
    inStep(store, probes);
    store.db.prepare("DELETE FROM journal WHERE id IN ('c104', 'c105')").run();
    inStep(store, probes);
    store.db.prepare('DELETE FROM journal').run();
    inStep(store, probes);
    expect(listed(store)).toEqual([]);
    expect(store.db.prepare("SELECT rowid FROM journal_search WHERE journal_search MATCH '\"DEE\"'").all()).toEqual([]);
  });
});

describe('names', () => {
  test("a caller's transaction that rolls back leaves no id behind to be served for another name", () => {
    const store = open();
    expect(() =>
      store.db.transaction(() => {
        store.addEvent('kind-a', 'server-a', 'tool-a', { n: 1 });
        store.writeJournal([rec({ id: 'in-rollback', tool: 'tool-b', server: 'server-a' })]);
        throw new Error('the caller gives up');
      })(),
    ).toThrow('the caller gives up');
    // ids the rolled-back names had are handed out again, to other names
    const e = store.addEvent('kind-c', 'server-c', 'tool-c', { n: 2 });
    store.writeJournal([rec({ id: 'after', tool: 'tool-d', server: 'server-d', client: 'client-d' })]);
    expect(store.eventsSince(0, 10).map((x) => [x.type, x.server, x.tool])).toEqual([['kind-c', 'server-c', 'tool-c'], ['call', 'server-d', 'tool-d']]);
    expect(store.eventsSince(0, 10)[0]).toEqual(e);
    expect(store.call('after')).toMatchObject({ tool: 'tool-d', server: 'server-d', client: 'client-d' });
    expect(store.call('in-rollback')).toBeNull();
    expect(found(store, { server: 'server-a' })).toEqual([]);
    // and inside a caller's transaction that commits, names are stored and read back
    store.db.transaction(() => store.addEvent('kind-e', 'server-e', null, {}))();
    expect(store.events({ server: 'server-e' }).events.map((x) => x.type)).toEqual(['kind-e']);
  });
});

// ---- the same answers as the scan -----------------------------------------------------------------------

describe('text search finds what the scan finds', () => {
  const texts = [
    'plain words here', 'Mixed CASE Words', 'école', 'ÉCOLE', 'naïve café', 'straße', 'STRASSE', '日本語のテキスト', 'emoji 🎉 party 🎉',
    '50% off', '50_off', '5%0', 'a_b%c\\d', 'back\\slash', 'say "hi" and \'bye\'', '""', 'tool:write', 'NEAR(a b)', 'a AND b OR NOT c',
    'prefix* match^', 'inside-wordsubstringhere', 'combining é', 'tab\there', 'line\nbreak', 'x', 'xy', 'xyz', '',
  ];
  const probes = [
    'plain', 'PLAIN', 'words', 'ords her', 'école', 'ÉCOLE', 'École', 'cole', 'COLE', 'naïve', 'NAÏVE', 'ïve', 'straße', 'STRASSE', 'sse',
    '日本語', '本語の', 'テキスト', '🎉', '🎉 party', 'y 🎉', '50%', '%', '_', '50_', '%0', '_b%', 'a_b%c\\d', '\\', '\\s', '"hi"', '"', '""', "'bye'",
    'tool:write', 'tool:', 'NEAR(', 'AND b', 'OR NOT', 'NOT', 'prefix*', '*', 'match^', 'substring', 'wordsub', 'ringhe', 'combining e', 'é',
    'tab\th', 'line\nb', 'x', 'xy', 'xyz', 'yz', 'q', 'zzzz', 'rule', 'write', 'e c', 'ol',
  ];

  function corpus(): Store {
    const store = open();
    const records: CallRecord[] = [];
    texts.forEach((t, i) => {
      // the text in each searched column in turn, and in the result (which is not searched)
      records.push(rec({ id: `a${i}`, arguments: JSON.stringify({ t }), detail: '', tool: 'read', startedAt: 1000 + i }));
      records.push(rec({ id: `d${i}`, arguments: '{}', detail: t, tool: 'read', startedAt: 2000 + i }));
      records.push(rec({ id: `t${i}`, arguments: '{}', detail: '', tool: t || 'empty', startedAt: 3000 + i }));
      records.push(rec({ id: `r${i}`, arguments: '{}', detail: '', tool: 'read', outcome: 'ok', result: t, startedAt: 4000 + i }));
    });
    // raw text as the arguments (cut arguments are kept as text)
    texts.forEach((t, i) => records.push(rec({ id: `x${i}`, arguments: t, argsTruncated: true, detail: 'cut', tool: 'big', startedAt: 5000 + i })));
    store.writeJournal(records);
    return store;
  }

  test('every probe, alone and with each filter and a cursor', () => {
    const store = corpus();
    for (const p of probes) {
      expect(found(store, { text: p }), JSON.stringify(p)).toEqual(scan(store, p));
      expect(found(store, { text: p, tool: 'read' }), JSON.stringify(p)).toEqual(scan(store, p, "tool = 'read'"));
      expect(found(store, { text: p, decision: 'allow', client: 'cursor' }), JSON.stringify(p)).toEqual(scan(store, p, "decision = 'allow' AND client = 'cursor'"));
      const all = scan(store, p);
      if (all.length > 2) {
        const cursor = store.call(all[1]!)!.seq;
        expect(found(store, { text: p, before: cursor }), JSON.stringify(p)).toEqual(all.slice(2));
      }
      expect(found(store, { text: p, from: 2000, to: 3500 }), JSON.stringify(p)).toEqual(scan(store, p, 'started_at BETWEEN 2000 AND 3500'));
      // a filtered search served by the filter's index (few rows: the Store's choice here) and by the search index
      for (const q of [{ text: p, tool: 'read' }, { text: p, decision: 'allow' as const, client: 'cursor' }]) {
        const bySearch = byQuery(store, { ...q, limit: 10_000 }, true);
        expect(bySearch, JSON.stringify(q)).toEqual(byQuery(store, { ...q, limit: 10_000 }, false));
      }
    }
  });

  test('pages of the search walk the same calls as the scan, page by page', () => {
    const store = corpus();
    for (const p of ['e', 'ol', 'read', '{}', '"t"']) {
      const ids: string[] = [];
      let before: number | undefined;
      for (;;) {
        const page = store.history({ text: p, limit: 7, summary: true, ...(before === undefined ? {} : { before }) });
        ids.push(...page.calls.map((c) => c.id));
        if (page.nextCursor === null) break;
        before = page.nextCursor;
      }
      expect(ids, p).toEqual(scan(store, p));
    }
  });

  test('the index is asked for every third trigram and the last; texts it cannot take are scanned', () => {
    expect(searchTerms('ab')).toBeNull();
    expect(searchTerms('a\0bc')).toBeNull();
    expect(searchTerms('abc')).toBe('"abc"');
    expect(searchTerms('abcdefg')).toBe('"abc" AND "def" AND "efg"');
    expect(searchTerms('a"b"c')).toBe('"a""b" AND "b""c"');
    expect(searchTerms('🎉🎉🎉x')).toBe('"🎉🎉🎉" AND "🎉🎉x"');
    const store = corpus();
    const plan = (q: HistoryQuery): string => {
      const { sql, params } = planOf(store, q);
      return (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((r) => r.detail).join('; ');
    };
    expect(plan({ text: 'plain' })).toMatch(/VIRTUAL TABLE INDEX/);
    expect(plan({ text: 'plain' })).not.toMatch(/TEMP B-TREE/);
    expect(plan({ text: 'plain', tool: 'read', before: 50 })).not.toMatch(/TEMP B-TREE|journal_tool/);
    expect(plan({ text: 'pl' })).not.toMatch(/VIRTUAL TABLE/);
  });
});

function byQuery(store: Store, q: HistoryQuery, searchIndex: boolean): string[] {
  const find = (name: string): number | undefined => store.db.prepare('SELECT id FROM names WHERE name = ?').pluck().get(name) as number | undefined;
  const { sql, params } = historyQuery(q, find, false, searchIndex)!;
  return (store.db.prepare(sql).all(params) as { id: string }[]).map((r) => r.id);
}

function planOf(store: Store, q: HistoryQuery): { sql: string; params: Record<string, unknown> } {
  const find = (name: string): number | undefined => store.db.prepare('SELECT id FROM names WHERE name = ?').pluck().get(name) as number | undefined;
  return historyQuery(q, find)!;
}
