/**
 * The journal (journal_calls, migration 10): one row per call, written in batches (one transaction per tick, by
 * the caller) with its search index row and one 'call' event per record in the same transaction; history's
 * pages, filters and text search (queries.ts); the retention cap's running size (journal_stats) and pruning
 * (retention.ts). Names are stored as ids (names.ts) and read back as text (rows.ts).
 */
import type Database from 'better-sqlite3';
import type { CallRecord, HistoryItem, HistoryQuery } from '../../protocol/api.js';
import type { CallEvent, StoredCallSummary } from '../../protocol/events.js';
import type { EventsTable } from './events-table.js';
import { firstEquality, hasEqualityFilter, hasTimeRange, historyItem, historyQuery, pageSize, type Row } from './queries.js';
import { callRow, hashBytes } from './rows.js';
import { JOURNAL_ROW_OVERHEAD, Pruner, type PruneOptions, type PruneResult } from './retention.js';
import type { Names } from './names.js';
import type { StatementCache } from './statement-cache.js';
import { afterStart, afterStartSql, fromStart } from './times.js';
import { SearchRest } from './search-rest.js';

/**
 * A statement written with @names, bound by position: better-sqlite3 binds an array some 2 µs a row faster than
 * an object of twenty-odd names. `order` gives, for each ?, the name it stands for.
 */
function byPosition(sql: string): { sql: string; order: readonly string[] } {
  const order: string[] = [];
  return { sql: sql.replace(/@(\w+)/g, (_, name: string) => (order.push(name), '?')), order };
}

  // A later copy only moves a call forward: the outcome leaves 'pending' once and then stays (but a call
  // journaled 'cancelled' whose result arrived after all takes the server's outcome: it ran), the final
  // copy's decision and (non-empty) detail replace the pending one's, results, hashes and times fill in
  // where still unknown, and nothing known is cleared. What was called (tool, arguments, class, reasons,
  // start) is the first copy's; the times are kept after the row's start (times.ts). RETURNING gives the
  // merged row for the call's event. @pending and @cancelled are the ids of those outcomes.
const UPDATE_JOURNAL = byPosition(`
  UPDATE journal_calls SET
    session = COALESCE(session, @session),
    args_bytes = COALESCE(args_bytes, @argsBytes),
    args_sha256 = COALESCE(args_sha256, @argsSha256),
    ticket_id = COALESCE(ticket_id, @ticketId),
    decision = CASE WHEN outcome = @pending AND @final THEN @decision ELSE decision END,
    decided_by = CASE WHEN outcome = @pending AND @final THEN @decidedBy ELSE decided_by END,
    detail = CASE WHEN (outcome = @pending OR (outcome = @cancelled AND @late)) AND @newDetail THEN @detail ELSE detail END,
    outcome = CASE WHEN outcome = @pending OR (outcome = @cancelled AND @late) THEN @outcome ELSE outcome END,
    result = COALESCE(result, @result),
    result_truncated = CASE WHEN result IS NULL THEN @resultTruncated ELSE result_truncated END,
    result_bytes = COALESCE(result_bytes, @resultBytes),
    asked_after = COALESCE(asked_after, ${afterStartSql('started_at', '@askedAt')}),
    decided_after = COALESCE(decided_after, ${afterStartSql('started_at', '@decidedAt')}),
    forwarded_after = COALESCE(forwarded_after, ${afterStartSql('started_at', '@forwardedAt')}),
    finished_after = COALESCE(finished_after, ${afterStartSql('started_at', '@finishedAt')}),
    duration_ms = COALESCE(duration_ms, @durationMs)
  WHERE id = @id
  RETURNING client, server, tool, class, decision, decided_by, outcome, ticket_id, started_at, finished_after, duration_ms, session`);

/** A call's arguments in a few words (classify/arg-summary.ts, with what the broker knows of its tool). */
export type Brief = (call: HistoryItem, argumentsText: string) => string;

/** Rows an equality filter may give for the text to be checked on them rather than found by the search index. */
const SEARCH_BY_INDEX = 5000;

export class JournalTable {
  private readonly s;
  private prunerInstance: Pruner | undefined;
  /** The search index's entries of calls with long arguments, completed later (search-rest.ts). */
  readonly searchRest: SearchRest;
  /** Retention deleted rows of a log up to a seq, in its transaction (the Store keeps the low-water mark). */
  pruned: (log: 'journal' | 'events', seq: number) => void = () => {};

  constructor(
    private readonly db: Database.Database,
    private readonly events: EventsTable,
    private readonly cache: StatementCache,
    private readonly names: Names,
  ) {
    this.searchRest = new SearchRest(db);
    this.s = {
      // The first copy of a call inserts it; DO NOTHING (not DO UPDATE: an upsert on a table with triggers and
      // these indexes costs 3-4x more per insert) leaves a later copy to updateJournal. Names are ids (names.ts).
      insertJournal: db.prepare(`
        INSERT INTO journal_calls (id, session, client, server, tool, arguments, args_truncated, args_bytes, args_sha256, class,
          reasons, decision, decided_by, detail, ticket_id, outcome, result, result_truncated, result_bytes,
          started_at, asked_after, decided_after, forwarded_after, finished_after, duration_ms)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO NOTHING`),
      updateJournal: db.prepare(UPDATE_JOURNAL.sql).raw(),
      addJournalBytes: db.prepare('UPDATE journal_stats SET bytes = bytes + ? WHERE id = 1'),
      call: db.prepare('SELECT * FROM journal_calls WHERE id = ?'),
      startedAtBelow: db.prepare('SELECT started_at FROM journal_calls WHERE seq < ? ORDER BY seq DESC LIMIT 1 OFFSET ?').pluck(),
      countJournal: db.prepare('SELECT COUNT(*) AS n FROM journal_calls').pluck(),
      giveBackSeq: db.prepare("UPDATE sqlite_sequence SET seq = seq - 1 WHERE name = 'journal_calls'"),
    };
  }

  /**
   * Write call records inside the caller's transaction (names through `Names.within` by the caller: Store's
   * moveIntake and writeJournal), and with them one 'call' event per record (a summary of the call as stored after
   * the write, never its arguments or result). Returns those events, in order, with their seq. A later copy of a
   * record (same id) moves it forward, never back (see updateJournal). The events carry `at`: when the broker
   * received the records.
   */
  insertRows(records: readonly CallRecord[], at: number): CallEvent[] {
    return this.journalBatch(records, at);
  }

  private journalBatch(records: readonly CallRecord[], at: number): CallEvent[] {
    const s = this.s;
    const out: CallEvent[] = new Array(records.length);
    let added = 0;
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      const reasons = JSON.stringify(r.reasons);
      const n = this.names;
      const ins = s.insertJournal.run(
        r.id,
        n.maybe(r.sessionId),
        n.id(r.client),
        n.id(r.server),
        n.id(r.tool),
        r.arguments,
        r.argsTruncated ? 1 : 0,
        r.argsBytes ?? null,
        hashBytes(r.argsSha256),
        n.id(r.class),
        n.id(reasons),
        n.id(r.decision),
        n.id(r.decidedBy),
        r.detail,
        r.ticketId ?? null,
        n.id(r.outcome),
        r.result ?? null,
        r.result === undefined ? null : r.resultTruncated ? 1 : 0,
        r.resultBytes ?? null,
        r.startedAt,
        afterStart(r.startedAt, r.askedAt),
        afterStart(r.startedAt, r.decidedAt),
        afterStart(r.startedAt, r.forwardedAt),
        afterStart(r.startedAt, r.finishedAt),
        r.durationMs ?? null,
      );
      const inserted = ins.changes === 1;
      // a copy that inserted nothing still took a seq (SQLite gives it before it sees the conflict): given back,
      // so the seqs stay without gaps and a gap means deleted rows (log-marks.ts). Only this writer inserts.
      if (!inserted) s.giveBackSeq.run();
      // the search index's row of a call just inserted, in the same transaction (migration 10): long arguments in two steps
      if (inserted) this.searchRest.add(ins.lastInsertRowid, r.tool, r.arguments, r.detail);
      let detail: StoredCallSummary;
      if (inserted) {
        // what the row holds is this record: its summary needs no read back
        added += JOURNAL_ROW_OVERHEAD + Buffer.byteLength(r.arguments) + Buffer.byteLength(r.detail) + Buffer.byteLength(reasons) + (r.result === undefined ? 0 : Buffer.byteLength(r.result));
        detail = {
          id: r.id,
          ...(r.sessionId !== undefined ? { sessionId: r.sessionId } : {}),
          client: r.client,
          server: r.server,
          tool: r.tool,
          class: r.class,
          decision: r.decision,
          decidedBy: r.decidedBy,
          outcome: r.outcome,
          ticketId: r.ticketId ?? null,
          startedAt: r.startedAt,
          finishedAt: r.finishedAt ?? null,
          durationMs: r.durationMs ?? null,
        };
      } else {
        // a final copy (any outcome but pending) may replace a pending row's decision and detail
        const final = r.outcome !== 'pending' ? 1 : 0;
        // the server's result came after E-Stop (or the client) cancelled the call: what the server did wins
        const late = r.outcome === 'ok' || r.outcome === 'tool-error' ? 1 : 0;
        const values: Record<string, unknown> = {
          session: n.maybe(r.sessionId),
          argsBytes: r.argsBytes ?? null,
          argsSha256: hashBytes(r.argsSha256),
          ticketId: r.ticketId ?? null,
          pending: n.id('pending'),
          cancelled: n.id('cancelled'),
          final,
          decision: n.id(r.decision),
          decidedBy: n.id(r.decidedBy),
          late,
          newDetail: final && r.detail !== '' ? 1 : 0,
          detail: r.detail,
          outcome: n.id(r.outcome),
          result: r.result ?? null,
          resultTruncated: r.result === undefined ? null : r.resultTruncated ? 1 : 0,
          resultBytes: r.resultBytes ?? null,
          askedAt: r.askedAt ?? null,
          decidedAt: r.decidedAt ?? null,
          forwardedAt: r.forwardedAt ?? null,
          finishedAt: r.finishedAt ?? null,
          durationMs: r.durationMs ?? null,
          id: r.id,
        };
        const row = s.updateJournal.get(UPDATE_JOURNAL.order.map((k) => values[k])) as unknown[] | undefined;
        if (!row) throw new Error(`journal entry ${r.id} was neither inserted nor found`);
        const sessionId = n.name(row[11]);
        detail = {
          id: r.id,
          ...(sessionId !== null ? { sessionId } : {}),
          client: n.name(row[0]) as string,
          server: n.name(row[1]) as string,
          tool: n.name(row[2]) as string,
          class: n.name(row[3]) as StoredCallSummary['class'],
          decision: n.name(row[4]) as StoredCallSummary['decision'],
          decidedBy: n.name(row[5]) as StoredCallSummary['decidedBy'],
          outcome: n.name(row[6]) as StoredCallSummary['outcome'],
          ticketId: row[7] as string | null,
          startedAt: row[8] as number,
          finishedAt: fromStart(row[8], row[9]),
          durationMs: row[10] as number | null,
        };
      }
      out[i] = this.events.addCall(at, detail);
    }
    if (added > 0) s.addJournalBytes.run(added);
    return out;
  }

  /**
   * Journaled calls, newest first, filtered; `nextCursor` (the seq to pass as `before`) when there are older
   * ones. `text` is a case-insensitive (ASCII) substring of the tool, the arguments or the detail, taken
   * literally (% and _ are not wildcards); `from` and `to` bound the call's start, both inclusive.
   */
  history(query: HistoryQuery = {}, brief?: Brief): { calls: HistoryItem[]; nextCursor: number | null } {
    const limit = pageSize(query.limit);
    const built = historyQuery(query, (name) => this.names.find(name), this.timeIndexPays(query, limit), !this.fewByEquality(query));
    if (built === null) return { calls: [], nextCursor: null };
    let rows = this.cache.get(built.sql).all(built.params) as Row[];
    if (built.rest !== undefined) {
      // the calls whose long arguments the index holds in part: merged in, newest first (a call can be in both)
      const extra = (this.cache.get(built.rest).all(built.params) as Row[]).filter((r) => !rows.some((x) => x.seq === r.seq));
      if (extra.length) rows = [...rows, ...extra].sort((a, b) => Number(b.seq) - Number(a.seq)).slice(0, limit + 1);
    }
    const more = rows.length > limit;
    const calls = (more ? rows.slice(0, limit) : rows).map((r) => {
      const item = historyItem(callRow(r, this.names));
      if (brief) {
        // a summary row holds the head of the arguments alone (queries.ts ARGS_HEAD), enough for the words
        const args = typeof r.arguments === 'string' ? r.arguments : typeof r.args_head === 'string' ? r.args_head : '';
        const words = brief(item, args);
        if (words) item.argSummary = words;
      }
      return item;
    });
    return { calls, nextCursor: more ? calls[calls.length - 1]!.seq : null };
  }

  /**
   * For a time range with no equality filter: walking seq down pays when the first call below the cursor is
   * in the range and so is the call a page further down (calls are journaled in about the order they
   * start, so the page is about the next `limit` rows); otherwise the started_at index does. Two rowid
   * lookups decide.
   */
  private timeIndexPays(q: HistoryQuery, limit: number): boolean {
    if (!hasTimeRange(q) || hasEqualityFilter(q)) return false;
    const before = q.before ?? Number.MAX_SAFE_INTEGER;
    const top = this.s.startedAtBelow.get(before, 0) as number | undefined;
    if (top === undefined) return false;
    if (q.to !== undefined && q.to !== null && top > q.to) return true;
    const page = this.s.startedAtBelow.get(before, limit) as number | undefined;
    return page !== undefined && q.from !== undefined && q.from !== null && page < q.from;
  }

  /**
   * With a text and an equality filter: whether that filter's index gives few rows (under SEARCH_BY_INDEX,
   * counted in the index alone), so checking the text on each of them beats walking the search index's
   * candidates (a common text under a rare tool would walk most of the journal).
   */
  private fewByEquality(q: HistoryQuery): boolean {
    if (q.text === undefined || q.text === null || q.text === '') return false;
    const first = firstEquality(q);
    if (first === null) return false;
    const [column, value, kind] = first;
    if (column === 'id') return true;
    const id = kind === 'name' ? this.names.find(value) : value;
    if (id === undefined) return true;
    const count = this.cache.get(`SELECT COUNT(*) FROM (SELECT 1 FROM journal_calls WHERE ${column} = ? LIMIT ${SEARCH_BY_INDEX})`).pluck().get(id) as number;
    return count < SEARCH_BY_INDEX;
  }

  /** One journaled call by its id (the detail view), or null. */
  call(id: string): HistoryItem | null {
    const row = this.s.call.get(id) as Row | undefined;
    return row ? historyItem(callRow(row, this.names)) : null;
  }

  count(): number {
    return Number(this.s.countJournal.get());
  }

  /** The journal's approximate size in bytes, as the retention cap measures it (a running total: O(1)). */
  bytes(): number {
    return this.pruner().journalBytes();
  }

  /**
   * Delete at most `batch` (default PRUNE_BATCH, 500) journal entries and as many events, oldest first:
   * entries that started before `now - maxAgeMs`, then the oldest entries while the journal is over
   * `maxBytes`, and events from before `now - maxAgeMs` or before the newest entry the size cap ever pruned.
   * One short transaction; `done` is false while there is more to delete. See retention.ts for a timer.
   */
  prune(opts: PruneOptions): PruneResult {
    return this.pruner().prune(opts);
  }

  private pruner(): Pruner {
    return (this.prunerInstance ??= new Pruner(this.db, (log, seq) => this.pruned(log, seq)));
  }
}
