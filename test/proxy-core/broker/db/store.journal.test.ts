import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { MIGRATIONS } from '../../../../proxy-core/src/broker/db/migrations.js';
import { historyQuery, likeSubstring } from '../../../../proxy-core/src/broker/db/queries.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import type { CallRecord, HistoryQuery } from '../../../../proxy-core/src/protocol/api.js';
import { callRecord } from '../../../helpers/records.js';
import { tempStores } from '../../../helpers/temp-store.js';

const { dbPath, open } = tempStores('al-journal-');

const rec = (over: Partial<CallRecord> = {}): CallRecord =>
  callRecord({ sessionId: 's1', arguments: '{"path":"/a"}', reasons: ['declares destructiveHint: false'], startedAt: 1000, ...over });

/** The journal's size computed from scratch, the way the triggers count it. */
function recount(store: Store): number {
  return (
    store.db
      .prepare(
        `SELECT COALESCE(SUM(200 + COALESCE(octet_length(arguments), 0) + COALESCE(octet_length(result), 0)
          + COALESCE(octet_length(detail), 0) + COALESCE(octet_length(reasons), 0)), 0) AS n FROM journal`,
      )
      .get() as { n: number }
  ).n;
}

describe('migrating an existing database', () => {
  // the schema versions before this change: 2 is the one that shipped last
  test.each([2, 1])('rows written at schema version %i read back through the new API', (before) => {
    const path = dbPath();
    const old = new Database(path);
    for (const sql of MIGRATIONS.slice(0, before)) old.exec(sql);
    old.pragma(`user_version = ${before}`);
    const insert = old.prepare(`INSERT INTO journal (id, session_id, client, server, tool, arguments, args_truncated, class, reasons,
      decision, decided_by, detail, ticket_id, outcome, started_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    insert.run('old-1', 's0', 'cursor', 'fs', 'write', '{"path":"/x"}', 0, 'mutating', '["r1"]', 'allow', 'user', 'approved', 'tk1', 'ok', 100, 2.5);
    insert.run('old-2', null, 'zed', 'mail', 'send', '{"to":"a"}', 1, null, null, 'deny', 'estop', 'E-Stop', null, 'not-run', 200, null);
    insert.run('old-3', 's0', 'cursor', 'fs', 'read', '{}', 0, 'read-only-unchecked', '[]', 'allow', 'rule', '', null, 'pending', 300, null);
    old.prepare('INSERT INTO events (at, kind, server, tool, detail) VALUES (?, ?, ?, ?, ?)').run(150, 'rule-added', null, null, '{"id":"r"}');
    old.prepare('INSERT INTO events (at, kind, server, tool, detail) VALUES (?, ?, ?, ?, ?)').run(250, 'classified', 'fs', null, '{"tools":3}');
    old.prepare("INSERT INTO rules (id, action, server, tool, client, created_at, note) VALUES ('r', 'deny', 'mail', '*', NULL, 1, NULL)").run();
    old.close();

    const store = open(path);
    expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    const { calls, nextCursor } = store.history({ limit: 10 });
    expect(nextCursor).toBeNull();
    expect(calls.map((c) => c.id)).toEqual(['old-3', 'old-2', 'old-1']);
    // columns the old rows never had are absent, not made up
    expect(calls[2]).toEqual({
      kind: 'call', seq: 1, id: 'old-1', sessionId: 's0', client: 'cursor', server: 'fs', tool: 'write', arguments: '{"path":"/x"}',
      argsTruncated: false, class: 'mutating', reasons: ['r1'], decision: 'allow', decidedBy: 'user', detail: 'approved',
      ticketId: 'tk1', outcome: 'ok', startedAt: 100, durationMs: 2.5,
    });
    expect(store.call('old-2')).toEqual({
      kind: 'call', seq: 2, id: 'old-2', client: 'zed', server: 'mail', tool: 'send', arguments: '{"to":"a"}', argsTruncated: true,
      class: 'unclassifiable', reasons: [], decision: 'deny', decidedBy: 'estop', detail: 'E-Stop', outcome: 'not-run', startedAt: 200,
    });
    expect(store.history({ server: 'mail' }).calls.map((c) => c.id)).toEqual(['old-2']);
    expect(store.history({ text: 'path' }).calls.map((c) => c.id)).toEqual(['old-1']);
    expect(store.events({}).events.map((e) => [e.seq, e.type, e.server, e.detail])).toEqual([
      [2, 'classified', 'fs', { tools: 3 }],
      [1, 'rule-added', null, { id: 'r' }],
    ]);
    expect(store.headSeq()).toBe(2);
    expect(store.rules().map((r) => r.id)).toEqual(['r']);
    // the size total starts from the rows already there
    expect(store.journalBytes()).toBe(recount(store));
    expect(store.journalBytes()).toBeGreaterThan(600);

    // an old pending row is finished by a new copy, which fills the new columns
    const [ev] = store.writeJournal([
      rec({ id: 'old-3', tool: 'read', class: 'read-only-unchecked', outcome: 'ok', result: '{"content":[]}', resultBytes: 14, finishedAt: 310, durationMs: 4 }),
    ]);
    expect(ev!.seq).toBe(3);
    expect(store.call('old-3')).toMatchObject({ seq: 3, outcome: 'ok', result: '{"content":[]}', resultTruncated: false, finishedAt: 310, durationMs: 4 });
    expect(store.journalBytes()).toBe(recount(store));
  });
});

describe('writeJournal', () => {
  // each case: the copies written in order (one batch each, or all in one batch), then what the row holds
  const cases: { name: string; copies: Partial<CallRecord>[]; expect: Record<string, unknown>; absent?: string[] }[] = [
    { name: 'pending then final', copies: [{}, { outcome: 'ok', durationMs: 3 }], expect: { outcome: 'ok', durationMs: 3 } },
    { name: 'a late pending copy never turns final back', copies: [{}, { outcome: 'ok', durationMs: 3 }, {}], expect: { outcome: 'ok', durationMs: 3 } },
    { name: 'final first, pending after', copies: [{ outcome: 'tool-error' }, {}], expect: { outcome: 'tool-error' } },
    { name: 'the first final outcome stays', copies: [{ outcome: 'ok' }, { outcome: 'unknown' }], expect: { outcome: 'ok' } },
    {
      name: 'result and times fill in, never cleared',
      copies: [
        { askedAt: 1001, decidedAt: 1005 },
        { outcome: 'ok', forwardedAt: 1006, finishedAt: 1010, durationMs: 4, result: '{"ok":1}', resultTruncated: true, resultBytes: 99000 },
        { outcome: 'ok', result: '{"other":2}', resultTruncated: false, resultBytes: 3, askedAt: 5, finishedAt: 7, durationMs: 1 },
      ],
      expect: { askedAt: 1001, decidedAt: 1005, forwardedAt: 1006, finishedAt: 1010, durationMs: 4, result: '{"ok":1}', resultTruncated: true, resultBytes: 99000 },
    },
    {
      name: 'hashes, sizes, ticket and session fill in',
      copies: [{ sessionId: undefined }, { outcome: 'ok', sessionId: 's9', ticketId: 'tk', argsBytes: 13, argsSha256: 'f'.repeat(64) }],
      expect: { sessionId: 's9', ticketId: 'tk', argsBytes: 13, argsSha256: 'f'.repeat(64) },
    },
    {
      name: 'the final copy says how it was decided and what happened',
      copies: [{ detail: 'allowed by rule' }, { outcome: 'unknown', decidedBy: 'user', detail: 'allowed by rule; server exited before answering' }],
      expect: { decidedBy: 'user', detail: 'allowed by rule; server exited before answering' },
    },
    { name: 'an empty detail never clears one', copies: [{ detail: 'asked' }, { outcome: 'ok', detail: '' }], expect: { detail: 'asked' } },
    {
      name: 'what was called is fixed by the first copy',
      copies: [{}, { outcome: 'ok', arguments: '{"path":"/other"}', tool: 'other', class: 'destructive', startedAt: 5 }],
      expect: { arguments: '{"path":"/a"}', tool: 'write', class: 'mutating', startedAt: 1000 },
    },
    { name: 'no result: none made up', copies: [{}, { outcome: 'cancelled' }], expect: { outcome: 'cancelled' }, absent: ['result', 'resultTruncated', 'resultBytes', 'finishedAt'] },
    {
      name: 'journaled cancelled (E-Stop answered the client), then the server result arrived: the outcome is what the server did',
      copies: [{}, { outcome: 'cancelled', detail: 'ended while running (estop)' }, { outcome: 'ok', result: '{"ok":1}', finishedAt: 1010, detail: 'ended while running (estop); the server answered afterwards (ok)' }],
      expect: { outcome: 'ok', result: '{"ok":1}', finishedAt: 1010, detail: 'ended while running (estop); the server answered afterwards (ok)' },
    },
    { name: 'cancelled, then a tool error: a tool error', copies: [{ outcome: 'cancelled' }, { outcome: 'tool-error' }], expect: { outcome: 'tool-error' } },
    { name: 'cancelled, then an error answer: still cancelled', copies: [{ outcome: 'cancelled' }, { outcome: 'rpc-error' }], expect: { outcome: 'cancelled' } },
    { name: 'another final outcome never turns into ok', copies: [{ outcome: 'unknown' }, { outcome: 'ok' }], expect: { outcome: 'unknown' } },
  ];
  for (const c of cases) {
    for (const batched of [false, true]) {
      test(`${c.name}${batched ? ' (one batch)' : ''}`, () => {
        const store = open();
        const copies = c.copies.map((o) => rec(o));
        if (batched) store.writeJournal(copies);
        else for (const copy of copies) store.writeJournal([copy]);
        const item = store.call('c1')!;
        expect(item).toMatchObject(c.expect);
        for (const key of c.absent ?? []) expect(item).not.toHaveProperty(key);
        expect(store.journalCount()).toBe(1);
        expect(store.journalBytes()).toBe(recount(store));
      });
    }
  }

  test('appends one call event per record written, with its seq, in the same order as every other event', () => {
    const store = open();
    const first = store.addEvent('estop-on', null, null, {});
    const events = store.writeJournal([
      rec({ id: 'a', arguments: '{"secret":"s3cr3t"}', startedAt: 10, ticketId: 'tk1' }),
      rec({ id: 'b', server: 'mail', tool: 'send', decision: 'deny', decidedBy: 'estop', outcome: 'not-run', startedAt: 11 }),
      rec({ id: 'a', outcome: 'ok', result: '{"secret":"r3sult"}', finishedAt: 20, durationMs: 9, startedAt: 10 }),
    ]);
    expect(first.seq).toBe(1);
    expect(events.map((e) => e.seq)).toEqual([2, 3, 4]);
    expect(events.map((e) => [e.type, e.server, e.tool])).toEqual([
      ['call', 'fs', 'write'],
      ['call', 'mail', 'send'],
      ['call', 'fs', 'write'],
    ]);
    expect(events[0]!.detail).toEqual({
      id: 'a', sessionId: 's1', client: 'cursor', server: 'fs', tool: 'write', class: 'mutating', decision: 'allow', decidedBy: 'rule',
      outcome: 'pending', ticketId: 'tk1', startedAt: 10, finishedAt: null, durationMs: null,
    });
    // the final copy's event, read back from the row, names the session too (a live list can roll it back)
    expect(events[2]!.detail).toMatchObject({ id: 'a', sessionId: 's1', outcome: 'ok', ticketId: 'tk1', finishedAt: 20, durationMs: 9 });
    // no arguments or result in the stream
    for (const e of events) expect(JSON.stringify(e)).not.toMatch(/s3cr3t|r3sult/);
    // what the writer got back is exactly what a subscriber catching up reads
    expect(store.eventsSince(1, 100)).toEqual(events);
    expect(store.headSeq()).toBe(4);
    expect(store.addEvent('estop-off', null, null, { by: 'cli' }).seq).toBe(5);
  });

  test("a late copy's event says what the journal holds, not what the copy claimed", () => {
    const store = open();
    store.writeJournal([rec({ outcome: 'ok', finishedAt: 5 })]);
    const [late] = store.writeJournal([rec()]);
    expect(late!.detail).toMatchObject({ outcome: 'ok', finishedAt: 5 });
  });

  test('one transaction: a batch with a bad record writes nothing, not even events', () => {
    const store = open();
    store.writeJournal([rec({ id: 'ok' })]);
    const bad = rec({ id: 'bad', client: undefined as unknown as string });
    expect(() => store.writeJournal([rec({ id: 'x' }), bad])).toThrow(/NOT NULL/);
    expect(store.journalCount()).toBe(1);
    expect(store.headSeq()).toBe(1);
    expect(store.journalBytes()).toBe(recount(store));
    expect(store.writeJournal([])).toEqual([]);
  });
});

describe("the filing's hook", () => {
  const side = (store: Store) => store.db.prepare('SELECT id FROM side ORDER BY rowid').pluck().all();

  test('what it writes commits with the calls it is handed; a disk error it throws files nothing, a fault of its own only what it wrote', () => {
    const store = open();
    store.db.exec('CREATE TABLE side (id TEXT)');
    const insert = store.db.prepare('INSERT INTO side VALUES (?)');
    store.filing = (events) => {
      for (const e of events) insert.run(e.detail.id);
    };
    store.writeJournal([rec({ id: 'a' }), rec({ id: 'b' })]);
    expect(side(store)).toEqual(['a', 'b']);
    store.filing = (events) => {
      insert.run(events[0]!.detail.id);
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    };
    expect(() => store.writeJournal([rec({ id: 'c' })])).toThrow(/disk is full/);
    expect(side(store)).toEqual(['a', 'b']);
    expect(store.journalCount()).toBe(2);
    // a fault of the hook's own never keeps calls out of the journal: they are filed, without what it wrote
    store.filing = (events) => {
      insert.run(events[0]!.detail.id);
      throw new Error('the hook failed');
    };
    expect(store.writeJournal([rec({ id: 'd' })]).map((e) => e.detail.id)).toEqual(['d']);
    expect(side(store)).toEqual(['a', 'b']);
    expect(store.journalCount()).toBe(3);
    // an empty batch files nothing and hands nothing over
    store.filing = () => {
      throw new Error('called for nothing');
    };
    expect(store.writeJournal([])).toEqual([]);
  });

  test("a transaction the database rolls back under it (a full disk) fails the filing: the intake's mark stays before the calls", () => {
    const store = open();
    store.intake.open();
    const entries = [rec({ id: 'm1' }), rec({ id: 'm2' })];
    store.intake.append([{ session: 's1', client: 'c', server: 'fs', at: 5, entries: Buffer.from(JSON.stringify(entries)), n: 2 }]);
    const upTo = store.intake.newestSeq();
    const mark = () => store.db.prepare('SELECT seq FROM intake_mark WHERE id = 1').pluck().get();
    // what SQLite may do to a whole transaction on an error it cannot undo one statement of
    store.filing = () => store.db.exec('ROLLBACK');
    expect(() => store.moveIntake([{ records: entries, at: 5 }], upTo)).toThrow(/rolled back by the database/);
    // nothing committed on its own after the rollback: neither the mark past the calls nor anything else
    expect(mark()).toBe(0);
    expect(store.intake.size).toBe(2);
    expect(store.journalCount()).toBe(0);
    expect(() => store.writeJournal([rec({ id: 'w' })])).toThrow(/rolled back by the database/);
    expect(store.journalCount()).toBe(0);
    // tried again once the database takes the write
    store.filing = () => {};
    expect(store.moveIntake([{ records: entries, at: 5 }], upTo).map((e) => e.detail.id)).toEqual(['m1', 'm2']);
    expect(mark()).toBe(upTo);
    expect(store.intake.size).toBe(0);
  });
});

describe('events', () => {
  test('addEvent returns the stored event; eventsSince catches up in order; events pages newest first', () => {
    const store = open();
    expect(store.headSeq()).toBe(0);
    const added = [];
    for (let i = 0; i < 7; i++) added.push(store.addEvent(i % 2 ? 'classified' : 'trust-on', i % 2 ? 'fs' : 'mail', i === 3 ? 'peek' : null, { i, skip: undefined }));
    expect(added.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(added[3]).toMatchObject({ type: 'classified', server: 'fs', tool: 'peek', detail: { i: 3 } });
    expect(added[3]!.detail).not.toHaveProperty('skip');
    expect(store.addEvent('odd', null, null, undefined).detail).toBeNull();

    expect(store.eventsSince(0, 3)).toEqual(added.slice(0, 3));
    expect(store.eventsSince(3, 100)).toEqual([...added.slice(3), expect.objectContaining({ seq: 8 })]);
    expect(store.eventsSince(8, 100)).toEqual([]);

    const page1 = store.events({ limit: 3 });
    expect(page1.events.map((e) => e.seq)).toEqual([8, 7, 6]);
    expect(page1.nextCursor).toBe(6);
    const page2 = store.events({ limit: 3, before: page1.nextCursor! });
    expect(page2.events.map((e) => e.seq)).toEqual([5, 4, 3]);
    const page3 = store.events({ limit: 3, before: page2.nextCursor! });
    expect(page3).toEqual({ events: [added[1], added[0]], nextCursor: null });
    expect(store.events({ server: 'fs', limit: 2 })).toEqual({ events: [added[5], added[3]], nextCursor: 4 });
    expect(store.events({ server: 'fs', before: 4 }).events.map((e) => e.seq)).toEqual([2]);
  });

  test('seq is never reused: the head survives pruning every event and reopening', () => {
    const path = dbPath();
    const store = open(path);
    store.addEvent('a', null, null, {});
    store.addEvent('b', null, null, {});
    store.db.exec('DELETE FROM events');
    store.close();
    const again = open(path);
    expect(again.headSeq()).toBe(2);
    expect(again.addEvent('c', null, null, {}).seq).toBe(3);
  });
});

describe('history', () => {
  /** 60 calls over three servers, tools, clients and outcomes, one per second. */
  function seeded(): Store {
    const store = open();
    const records: CallRecord[] = [];
    for (let i = 1; i <= 60; i++) {
      records.push(
        rec({
          id: `c${i}`,
          server: ['fs', 'mail', 'db'][i % 3]!,
          tool: ['read', 'write', 'drop_table'][i % 5 % 3]!,
          client: i % 2 ? 'cursor' : 'zed',
          decision: i % 7 === 0 ? 'deny' : 'allow',
          decidedBy: i % 7 === 0 ? 'user' : 'rule',
          outcome: i % 7 === 0 ? 'not-run' : i % 11 === 0 ? 'tool-error' : 'ok',
          arguments: JSON.stringify({ n: i, q: i === 42 ? '50%_off' : i === 43 ? '50 percent off' : `v${i}` }),
          detail: i === 13 ? 'Unlucky Thirteen' : '',
          startedAt: 1000 * i,
        }),
      );
    }
    store.writeJournal(records);
    return store;
  }

  /** Every page, following the cursor. */
  function all(store: Store, q: HistoryQuery): string[] {
    const ids: string[] = [];
    let before: number | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const { calls, nextCursor } = store.history({ ...q, ...(before === undefined ? {} : { before }) });
      expect(calls.length).toBeLessThanOrEqual(q.limit ?? 50);
      ids.push(...calls.map((c) => c.id));
      if (nextCursor === null) return ids;
      before = nextCursor;
    }
    throw new Error('cursor never ended');
  }

  const range = (from: number, to: number, keep: (i: number) => boolean = () => true) => {
    const out: string[] = [];
    for (let i = to; i >= from; i--) if (keep(i)) out.push(`c${i}`);
    return out;
  };
  const filters: { name: string; q: HistoryQuery; ids: string[] }[] = [
    { name: 'none', q: {}, ids: range(1, 60) },
    { name: 'server', q: { server: 'mail' }, ids: range(1, 60, (i) => i % 3 === 1) },
    { name: 'tool', q: { tool: 'drop_table' }, ids: range(1, 60, (i) => i % 5 % 3 === 2) },
    { name: 'client', q: { client: 'zed' }, ids: range(1, 60, (i) => i % 2 === 0) },
    { name: 'decision', q: { decision: 'deny' }, ids: range(1, 60, (i) => i % 7 === 0) },
    { name: 'decidedBy', q: { decidedBy: 'user' }, ids: range(1, 60, (i) => i % 7 === 0) },
    { name: 'outcome', q: { outcome: 'tool-error' }, ids: range(1, 60, (i) => i % 7 !== 0 && i % 11 === 0) },
    { name: 'from/to, inclusive', q: { from: 10_000, to: 20_000 }, ids: range(10, 20) },
    { name: 'from only', q: { from: 30_000 }, ids: range(30, 60) },
    { name: 'to only', q: { to: 5_500 }, ids: range(1, 5) },
    { name: 'from/to + text', q: { from: 40_000, to: 49_000, text: '"n":4' }, ids: range(40, 49) },
    { name: 'server + tool + client', q: { server: 'fs', tool: 'read', client: 'cursor' }, ids: range(1, 60, (i) => i % 3 === 0 && i % 5 % 3 === 0 && i % 2 === 1) },
    { name: 'server + decision + time', q: { server: 'db', decision: 'allow', to: 30_000 }, ids: range(1, 30, (i) => i % 3 === 2 && i % 7 !== 0) },
    { name: 'text in the arguments', q: { text: '"n":4' }, ids: ['c49', 'c48', 'c47', 'c46', 'c45', 'c44', 'c43', 'c42', 'c41', 'c40', 'c4'] },
    { name: 'text in the tool', q: { text: 'drop_' }, ids: range(1, 60, (i) => i % 5 % 3 === 2) },
    { name: 'text in the detail, any case', q: { text: 'unlucky thirteen' }, ids: ['c13'] },
    { name: '% and _ are literal', q: { text: '50%_' }, ids: ['c42'] },
    { name: 'a lone % matches only a %', q: { text: '%' }, ids: ['c42'] },
    { name: 'a lone _ matches only an _', q: { text: '_' }, ids: range(1, 60, (i) => i === 42 || i % 5 % 3 === 2) },
    { name: 'a backslash is literal', q: { text: '\\' }, ids: [] },
    { name: 'nothing matches', q: { server: 'nope' }, ids: [] },
  ];
  for (const f of filters) {
    test(`filter: ${f.name}, every page through the cursor`, () => {
      const store = seeded();
      for (const limit of [1, 7, 50, 10_000]) expect(all(store, { ...f.q, limit })).toEqual(f.ids);
    });
  }

  test('the cursor is the last seq of the page, null on the last page', () => {
    const store = seeded();
    const p1 = store.history({ limit: 25 });
    expect(p1.calls[0]).toMatchObject({ kind: 'call', seq: 60, id: 'c60' });
    expect(p1.nextCursor).toBe(36);
    expect(store.history({ limit: 25, before: 36 }).calls[0]!.seq).toBe(35);
    expect(store.history({ limit: 10, before: 11 }).nextCursor).toBeNull();
    expect(store.history({ before: 1 })).toEqual({ calls: [], nextCursor: null });
  });

  test('call(id) is the detail view; null for an unknown id', () => {
    const store = seeded();
    expect(store.call('c42')).toMatchObject({ seq: 42, id: 'c42', arguments: '{"n":42,"q":"50%_off"}' });
    expect(store.call('nope')).toBeNull();
  });

  test('like patterns escape %, _ and the escape character itself', () => {
    expect(likeSubstring('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });

  // decision, decidedBy and outcome have a handful of values each: they are filtered while walking seq (an
  // index on them would cost every journal write more than it saves a history page)
  test('every filter is served in seq order with no sort; server, tool and client by their index', () => {
    const store = seeded();
    const queries: HistoryQuery[] = [
      {},
      { before: 10 },
      { server: 'a', before: 10 },
      { tool: 'a', before: 10 },
      { client: 'a', before: 10 },
      { decision: 'deny', before: 10 },
      { decidedBy: 'user', before: 10 },
      { outcome: 'ok', before: 10 },
      { server: 'a', decision: 'allow', outcome: 'ok', before: 10 },
      { tool: 'a', server: 'b', client: 'c', decidedBy: 'rule', from: 1, to: 2, text: 'x', before: 10 },
      { from: 1, to: 2 },
      { text: 'x' },
    ];
    const expectIndex: Record<string, string> = { tool: 'journal_tool', server: 'journal_server', client: 'journal_client' };
    // every name is known here (the plan does not depend on which id it is)
    const anyName = (): number => 1;
    for (const q of queries) {
      const { sql, params } = historyQuery(q, anyName)!;
      const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((r) => r.detail).join('; ');
      expect(plan, JSON.stringify(q)).not.toMatch(/TEMP B-TREE/);
      const first = ['tool', 'server', 'client'].find((k) => k in q);
      if (first) expect(plan, JSON.stringify(q)).toContain(`USING INDEX ${expectIndex[first]}`);
      else if ('before' in q) expect(plan).toMatch(/rowid</);
    }
  });

  test('a time range can be looked up in the started_at index, sorting only the seqs found there', () => {
    const store = seeded();
    const { sql, params } = historyQuery({ from: 1, to: 2, before: 10, text: 'x' }, () => 1, true)!;
    const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((r) => r.detail).join('; ');
    expect(plan).toMatch(/USING (COVERING )?INDEX journal_started \(started_at>\? AND started_at<\?\)/);
    expect(plan).toContain('INTEGER PRIMARY KEY (rowid=?)');
    // with an equality filter that filter's index is used, whatever was asked
    expect(historyQuery({ server: 'a', from: 1 }, () => 1, true)!.sql).not.toContain('journal_started');
  });

  test('both ways of serving a time range give the same pages', () => {
    const store = seeded();
    const ranges: HistoryQuery[] = [{ from: 10_000, to: 20_000 }, { from: 30_000 }, { to: 5_500 }, { from: 0 }, { to: 1e15 }, { from: 59_500 }, { from: 40_000, text: '"n":5' }];
    for (const r of ranges) {
      for (const limit of [1, 7, 50]) {
        for (const before of [undefined, 45, 12]) {
          const q: HistoryQuery = { ...r, limit, ...(before === undefined ? {} : { before }) };
          const [a, b] = [false, true].map((byIndex) => {
            const find = (name: string): number | undefined => store.db.prepare('SELECT id FROM names WHERE name = ?').pluck().get(name) as number | undefined;
            const { sql, params } = historyQuery(q, find, byIndex)!;
            return (store.db.prepare(sql).all(params) as { id: string }[]).map((x) => x.id);
          });
          expect(b, JSON.stringify(q)).toEqual(a);
        }
      }
    }
  });

  test('the journal size counts UTF-8 bytes the same way on insert, update and delete', () => {
    const store = open();
    const texts = ['plain', 'héllo wörld', '日本語のテキスト', 'emoji 🎉🎉', 'lone \ud800 surrogate', ''];
    store.writeJournal(texts.map((t, i) => rec({ id: `u${i}`, arguments: JSON.stringify({ t }), detail: t, reasons: [t] })));
    expect(store.journalBytes()).toBe(recount(store));
    store.writeJournal(texts.map((t, i) => rec({ id: `u${i}`, outcome: 'ok', result: t + t, detail: `${t}!` })));
    expect(store.journalBytes()).toBe(recount(store));
    store.writeJournal(texts.map((t, i) => rec({ id: `v${i}`, outcome: 'ok', result: t, arguments: t })));
    expect(store.journalBytes()).toBe(recount(store));
    store.db.prepare("DELETE FROM journal WHERE id LIKE 'u%'").run();
    expect(store.journalBytes()).toBe(recount(store));
    store.db.prepare('DELETE FROM journal').run();
    expect(store.journalBytes()).toBe(0);
  });
});
