/**
 * Everything the broker must not forget, in SQLite (WAL). Journal writes are batched into one transaction
 * per tick by the caller; every other write is small and immediate.
 *
 * The events table is the broker's one ordering of what happened: every event, a journaled call included,
 * gets its `seq` there (AUTOINCREMENT: never reused, even after pruning), and a subscriber catches up with
 * `eventsSince` from the last seq it saw.
 */
import Database from 'better-sqlite3';
import { z } from 'zod';
import type { Verdict } from '../../classify/classify.js';
import { ArgConditionSchema, type BrokerEvent, type CallRecord, type EventsQuerySchema, type HistoryItem, type HistoryQuery, type Remember, type SessionInfo, type Ticket } from '../../protocol/api.js';
import type { Rule, RuleAction } from '../../policy/rules.js';
import { MIGRATIONS } from './migrations.js';
import { chmodDatabaseFiles, databaseError, openPrivateDatabase } from './files.js';
import { brokerEvent, eventsQuery, hasEqualityFilter, hasTimeRange, historyItem, historyQuery, pageSize, parseJson, type Row } from './queries.js';
import { isDiskError } from '../disk-guard.js';
import { JOURNAL_ROW_OVERHEAD, Pruner, type PruneOptions, type PruneResult } from './retention.js';

export type EventsQuery = z.input<typeof EventsQuerySchema>;

interface JournalStatements {
  insertJournal: Database.Statement;
  updateJournal: Database.Statement;
  insertEvent: Database.Statement;
  addJournalBytes: Database.Statement;
}

/** What the 'call' event of a journaled call says: enough for a live list, never the arguments or result. */
export interface CallSummary {
  id: string;
  /** The wrapper session the call ran in (a rollback's unit); absent when the wrapper did not say. */
  sessionId?: string;
  client: string;
  server: string;
  tool: string;
  class: string;
  decision: string;
  decidedBy: string;
  outcome: string;
  ticketId: string | null;
  startedAt: number;
  finishedAt: number | null;
  durationMs: number | null;
}

export class Store {
  readonly db: Database.Database;
  private readonly stmts;
  private readonly statements = new Map<string, Database.Statement>();
  private prunerInstance: Pruner | undefined;

  /** Opens (creating when absent) the database at `path`; its files are 0600 and any failure names the file. */
  constructor(path: string) {
    this.db = openPrivateDatabase(path);
    try {
      this.db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode survives a process crash; only an OS crash can lose the last commits.
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('busy_timeout = 5000');
      this.migrate();
      // SQLite quietly falls back to read-only when it cannot open the file for writing: a real write (the
      // schema version, unchanged) finds out now, not at the first E-Stop that could not be saved
      try {
        this.db.pragma(`user_version = ${this.db.pragma('user_version', { simple: true }) as number}`);
      } catch (err) {
        // a full disk is not a read-only file: the broker starts, and says the disk is full (disk-guard.ts)
        if (!isDiskError(err)) throw err;
      }
      // SQLite gives the -wal and -shm files the database's own 0600 mode; older ones are tightened here
      chmodDatabaseFiles(path);
    } catch (err) {
      this.db.close();
      throw databaseError(path, err);
    }
    try {
      this.stmts = this.prepare();
    } catch (err) {
      // a schema version that claims tables the file does not have: close, and name the file
      this.db.close();
      throw databaseError(path, err);
    }
  }

  private prepare() {
    const db = this.db;
    const s = {
      getSetting: db.prepare('SELECT value FROM settings WHERE key = ?'),
      setSetting: db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      // The first copy of a call inserts it; DO NOTHING (not DO UPDATE: an upsert on a table with triggers and
      // these indexes costs 3-4x more per insert) leaves a later copy to updateJournal.
      insertJournal: db.prepare(`
        INSERT INTO journal (id, session_id, client, server, tool, arguments, args_truncated, args_bytes, args_sha256, class,
          reasons, decision, decided_by, detail, ticket_id, outcome, result, result_truncated, result_bytes,
          started_at, asked_at, decided_at, forwarded_at, finished_at, duration_ms)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO NOTHING`),
      // A later copy only moves a call forward: the outcome leaves 'pending' once and then stays (but a call
      // journaled 'cancelled' whose result arrived after all takes the server's outcome: it ran), the final
      // copy's decision and (non-empty) detail replace the pending one's, results, hashes and times fill in
      // where still unknown, and nothing known is cleared. What was called (tool, arguments, class, reasons,
      // start) is the first copy's. RETURNING gives the merged row for the call's event.
      updateJournal: db.prepare(`
        UPDATE journal SET
          session_id = COALESCE(session_id, ?),
          args_bytes = COALESCE(args_bytes, ?),
          args_sha256 = COALESCE(args_sha256, ?),
          ticket_id = COALESCE(ticket_id, ?),
          decision = CASE WHEN outcome = 'pending' AND ? THEN ? ELSE decision END,
          decided_by = CASE WHEN outcome = 'pending' AND ? THEN ? ELSE decided_by END,
          detail = CASE WHEN (outcome = 'pending' OR (outcome = 'cancelled' AND ?)) AND ? THEN ? ELSE detail END,
          outcome = CASE WHEN outcome = 'pending' OR (outcome = 'cancelled' AND ?) THEN ? ELSE outcome END,
          result = COALESCE(result, ?),
          result_truncated = CASE WHEN result IS NULL THEN ? ELSE result_truncated END,
          result_bytes = COALESCE(result_bytes, ?),
          asked_at = COALESCE(asked_at, ?),
          decided_at = COALESCE(decided_at, ?),
          forwarded_at = COALESCE(forwarded_at, ?),
          finished_at = COALESCE(finished_at, ?),
          duration_ms = COALESCE(duration_ms, ?)
        WHERE id = ?
        RETURNING client, server, tool, class, decision, decided_by, outcome, ticket_id, started_at, finished_at, duration_ms, session_id`).raw(),
      addJournalBytes: db.prepare('UPDATE journal_stats SET bytes = bytes + ? WHERE id = 1'),
      insertEvent: db.prepare('INSERT INTO events (at, kind, server, tool, detail) VALUES (?, ?, ?, ?, ?)'),
      insertSession: db.prepare('INSERT INTO sessions (id, client, server, command, pid, started_at) VALUES (?, ?, ?, ?, ?, ?)'),
      endSession: db.prepare('UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL'),
      endAllSessions: db.prepare('UPDATE sessions SET ended_at = ? WHERE ended_at IS NULL'),
      upsertTool: db.prepare(`INSERT INTO tools (server, name, class, reasons, declared, updated_at) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT(server, name) DO UPDATE SET class = excluded.class, reasons = excluded.reasons,
          declared = excluded.declared, updated_at = excluded.updated_at`),
      deleteTools: db.prepare('DELETE FROM tools WHERE server = ?'),
      listTools: db.prepare('SELECT * FROM tools WHERE server = ? ORDER BY name'),
      insertTicket: db.prepare(`INSERT INTO tickets (id, session_id, client, server, tool, arguments, args_truncated, args_bytes, args_sha256, class, reasons, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      endTicket: db.prepare('UPDATE tickets SET ended_at = ?, resolution = ?, remember = ?, reason = ? WHERE id = ? AND ended_at IS NULL'),
      closeOrphanTickets: db.prepare("UPDATE tickets SET ended_at = ?, resolution = 'broker-restart' WHERE ended_at IS NULL"),
      listRules: db.prepare('SELECT * FROM rules ORDER BY created_at, id'),
      insertRule: db.prepare('INSERT INTO rules (id, action, server, tool, client, created_at, note, args, undoable) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'),
      deleteRule: db.prepare('DELETE FROM rules WHERE id = ?'),
      getTrust: db.prepare('SELECT trust_read_only_hints AS t FROM server_settings WHERE server = ?'),
      setTrust: db.prepare(`INSERT INTO server_settings (server, trust_read_only_hints) VALUES (?, ?)
        ON CONFLICT(server) DO UPDATE SET trust_read_only_hints = excluded.trust_read_only_hints`),
      listTrust: db.prepare('SELECT server FROM server_settings WHERE trust_read_only_hints = 1 ORDER BY server'),
      withdraw: db.prepare('INSERT OR IGNORE INTO withdrawn_claims (server, tool, evidence, at) VALUES (?, ?, ?, ?)'),
      listWithdrawn: db.prepare('SELECT tool, evidence FROM withdrawn_claims WHERE server = ?'),
      call: db.prepare('SELECT * FROM journal WHERE id = ?'),
      startedAtBelow: db.prepare('SELECT started_at FROM journal WHERE seq < ? ORDER BY seq DESC LIMIT 1 OFFSET ?').pluck(),
      eventsSince: db.prepare('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?'),
      // AUTOINCREMENT's high-water mark: the last seq handed out, even when pruning emptied the table
      headSeq: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck(),
      countJournal: db.prepare('SELECT COUNT(*) AS n FROM journal').pluck(),
    };
    return { ...s, writeJournal: db.transaction((records: readonly CallRecord[]) => this.journalBatch(s, records)) };
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new Error(`the database was written by a newer Airlock (schema ${version}, this one knows ${MIGRATIONS.length}); refusing to touch it`);
    }
    for (let i = version; i < MIGRATIONS.length; i++) {
      const sql = MIGRATIONS[i]!;
      this.db.transaction(() => {
        this.db.exec(sql);
        this.db.pragma(`user_version = ${i + 1}`);
      })();
    }
  }

  close(): void {
    this.db.close();
  }

  getSetting(key: string): string | undefined {
    const row = this.stmts.getSetting.get(key) as { value: string } | undefined;
    return row?.value;
  }

  setSetting(key: string, value: string): void {
    this.stmts.setSetting.run(key, value);
  }

  // ---- journal ---------------------------------------------------------------------------------------

  /**
   * Write a batch of call records in one transaction, and in it one 'call' event per record (a summary of
   * the call as stored after the write, never its arguments or result). Returns those events, in order, with
   * their seq. A later copy of a record (same id) moves it forward, never back (see upsertJournal).
   */
  writeJournal(records: readonly CallRecord[]): BrokerEvent[] {
    if (records.length === 0) return [];
    return this.stmts.writeJournal(records);
  }

  private journalBatch(s: JournalStatements, records: readonly CallRecord[]): BrokerEvent[] {
    const at = Date.now();
    const out: BrokerEvent[] = new Array(records.length);
    let added = 0;
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      const reasons = JSON.stringify(r.reasons);
      const inserted =
        s.insertJournal.run(
          r.id,
          r.sessionId ?? null,
          r.client,
          r.server,
          r.tool,
          r.arguments,
          r.argsTruncated ? 1 : 0,
          r.argsBytes ?? null,
          r.argsSha256 ?? null,
          r.class,
          reasons,
          r.decision,
          r.decidedBy,
          r.detail,
          r.ticketId ?? null,
          r.outcome,
          r.result ?? null,
          r.result === undefined ? null : r.resultTruncated ? 1 : 0,
          r.resultBytes ?? null,
          r.startedAt,
          r.askedAt ?? null,
          r.decidedAt ?? null,
          r.forwardedAt ?? null,
          r.finishedAt ?? null,
          r.durationMs ?? null,
        ).changes === 1;
      let detail: CallSummary;
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
        const row = s.updateJournal.get(
          r.sessionId ?? null,
          r.argsBytes ?? null,
          r.argsSha256 ?? null,
          r.ticketId ?? null,
          final,
          r.decision,
          final,
          r.decidedBy,
          late,
          final && r.detail !== '' ? 1 : 0,
          r.detail,
          late,
          r.outcome,
          r.result ?? null,
          r.result === undefined ? null : r.resultTruncated ? 1 : 0,
          r.resultBytes ?? null,
          r.askedAt ?? null,
          r.decidedAt ?? null,
          r.forwardedAt ?? null,
          r.finishedAt ?? null,
          r.durationMs ?? null,
          r.id,
        ) as unknown[] | undefined;
        if (!row) throw new Error(`journal entry ${r.id} was neither inserted nor found`);
        const sessionId = row[11] as string | null;
        detail = {
          id: r.id,
          ...(sessionId !== null ? { sessionId } : {}),
          client: row[0] as string,
          server: row[1] as string,
          tool: row[2] as string,
          class: row[3] as string,
          decision: row[4] as string,
          decidedBy: row[5] as string,
          outcome: row[6] as string,
          ticketId: row[7] as string | null,
          startedAt: row[8] as number,
          finishedAt: row[9] as number | null,
          durationMs: row[10] as number | null,
        };
      }
      const seq = s.insertEvent.run(at, 'call', detail.server, detail.tool, JSON.stringify(detail)).lastInsertRowid;
      out[i] = { seq: Number(seq), at, type: 'call', server: detail.server, tool: detail.tool, detail };
    }
    if (added > 0) s.addJournalBytes.run(added);
    return out;
  }

  /**
   * Journaled calls, newest first, filtered; `nextCursor` (the seq to pass as `before`) when there are older
   * ones. `text` is a case-insensitive (ASCII) substring of the tool, the arguments or the detail, taken
   * literally (% and _ are not wildcards); `from` and `to` bound the call's start, both inclusive.
   */
  history(query: HistoryQuery = {}): { calls: HistoryItem[]; nextCursor: number | null } {
    const limit = pageSize(query.limit);
    const { sql, params } = historyQuery(query, this.timeIndexPays(query, limit));
    const rows = this.cached(sql).all(params) as Row[];
    const more = rows.length > limit;
    const calls = (more ? rows.slice(0, limit) : rows).map(historyItem);
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
    const top = this.stmts.startedAtBelow.get(before, 0) as number | undefined;
    if (top === undefined) return false;
    if (q.to !== undefined && q.to !== null && top > q.to) return true;
    const page = this.stmts.startedAtBelow.get(before, limit) as number | undefined;
    return page !== undefined && q.from !== undefined && q.from !== null && page < q.from;
  }

  /** One journaled call by its id (the detail view), or null. */
  call(id: string): HistoryItem | null {
    const row = this.stmts.call.get(id) as Row | undefined;
    return row ? historyItem(row) : null;
  }

  journalCount(): number {
    return Number(this.stmts.countJournal.get());
  }

  /** The journal's approximate size in bytes, as the retention cap measures it (a running total: O(1)). */
  journalBytes(): number {
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
    return (this.prunerInstance ??= new Pruner(this.db));
  }

  /** History and events statements, one per combination of filters present (a handful in practice). */
  private cached(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  // ---- events ----------------------------------------------------------------------------------------

  /** Append an event; returns it as stored (its detail as the JSON it was stored as), with its seq. */
  addEvent(type: string, server: string | null, tool: string | null, detail: unknown, at = Date.now()): BrokerEvent {
    const text = JSON.stringify(detail ?? null) ?? 'null';
    const seq = Number(this.stmts.insertEvent.run(at, type, server, tool, text).lastInsertRowid);
    return { seq, at, type, server, tool, detail: JSON.parse(text) as unknown };
  }

  /** Events after `seq`, oldest first: what a subscriber that saw `seq` has missed (page with the last seq). */
  eventsSince(seq: number, limit: number): BrokerEvent[] {
    return (this.stmts.eventsSince.all(seq, pageSize(limit)) as Row[]).map(brokerEvent);
  }

  /** Events newest first, optionally of one server; `nextCursor` (for `before`) when there are older ones. */
  events(query: EventsQuery = {}): { events: BrokerEvent[]; nextCursor: number | null } {
    const limit = pageSize(query.limit);
    const { sql, params } = eventsQuery(query);
    const rows = this.cached(sql).all(params) as Row[];
    const more = rows.length > limit;
    const events = (more ? rows.slice(0, limit) : rows).map(brokerEvent);
    return { events, nextCursor: more ? events[events.length - 1]!.seq : null };
  }

  /** The seq of the last event ever stored (0 before the first): where a new subscriber's stream starts. */
  headSeq(): number {
    return Number(this.stmts.headSeq.get() ?? 0);
  }

  // ---- sessions, catalog, tickets, rules, trust, withdrawn claims ------------------------------------

  openSession(s: SessionInfo): void {
    this.stmts.insertSession.run(s.id, s.client, s.server, JSON.stringify(s.command), s.pid, s.since);
  }

  endSession(id: string): void {
    this.stmts.endSession.run(Date.now(), id);
  }

  /** Sessions left open by a broker that died: they ended when it did. */
  endAllSessions(): void {
    this.stmts.endAllSessions.run(Date.now());
  }

  replaceCatalog(server: string, verdicts: Iterable<Verdict>): void {
    const now = Date.now();
    this.db.transaction(() => {
      this.stmts.deleteTools.run(server);
      for (const v of verdicts) {
        this.stmts.upsertTool.run(server, v.name, v.class, JSON.stringify(v.reasons), v.declared === undefined ? null : JSON.stringify(v.declared), now);
      }
    })();
  }

  catalog(server: string): { name: string; class: string; reasons: string[]; declared: unknown }[] {
    return (this.stmts.listTools.all(server) as Row[]).map((r) => ({
      name: String(r.name),
      class: String(r.class),
      reasons: parseJson(r.reasons, []) as string[],
      declared: parseJson(r.declared, undefined),
    }));
  }

  insertTicket(t: Ticket): void {
    // cut arguments are kept as the text they are (already bounded); whole ones as their JSON
    const args = t.argsTruncated && typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments ?? {});
    this.stmts.insertTicket.run(t.id, t.sessionId, t.client, t.server, t.tool, args, t.argsTruncated ? 1 : 0, t.argsBytes, t.argsSha256, t.class, JSON.stringify(t.reasons), t.createdAt);
  }

  endTicket(id: string, resolution: string, remember: Remember | null, reason: string | null): void {
    this.stmts.endTicket.run(Date.now(), resolution, remember, reason, id);
  }

  /** Tickets a dead broker left open can no longer be answered: their wrappers already failed closed. */
  closeOrphanTickets(): number {
    return this.stmts.closeOrphanTickets.run(Date.now()).changes;
  }

  rules(): Rule[] {
    return (this.stmts.listRules.all() as Row[]).map((r) => {
      const rule: Rule = {
        id: String(r.id),
        action: r.action as RuleAction,
        server: String(r.server),
        tool: String(r.tool),
        createdAt: Number(r.created_at),
      };
      if (r.client !== null && r.client !== undefined) rule.client = String(r.client);
      if (r.note !== null && r.note !== undefined) rule.note = String(r.note);
      if (r.args !== null && r.args !== undefined) {
        const args = z.array(ArgConditionSchema).safeParse(parseJson(r.args));
        // conditions that cannot be read: an allow is dropped (nothing proves it applies); a deny or an ask
        // is kept without them, which only makes it apply more widely
        if (args.success) rule.args = args.data;
        else if (rule.action === 'allow') return null;
      }
      if (r.undoable === 0 || r.undoable === 1) rule.undoable = r.undoable === 1;
      // any other value cannot be read: an allow is dropped, a deny or an ask applies to every call
      else if (r.undoable !== null && r.undoable !== undefined && rule.action === 'allow') return null;
      return rule;
    }).filter((r): r is Rule => r !== null);
  }

  addRule(rule: Rule): void {
    const undoable = rule.undoable === undefined ? null : rule.undoable ? 1 : 0;
    this.stmts.insertRule.run(rule.id, rule.action, rule.server, rule.tool, rule.client ?? null, rule.createdAt, rule.note ?? null, rule.args?.length ? JSON.stringify(rule.args) : null, undoable);
  }

  removeRule(id: string): boolean {
    return this.stmts.deleteRule.run(id).changes > 0;
  }

  trusts(server: string): boolean {
    const row = this.stmts.getTrust.get(server) as { t: number } | undefined;
    return row?.t === 1;
  }

  setTrust(server: string, on: boolean): void {
    this.stmts.setTrust.run(server, on ? 1 : 0);
  }

  trustedServers(): string[] {
    return (this.stmts.listTrust.all() as { server: string }[]).map((r) => r.server);
  }

  /** Record a withdrawn read-only claim; false when it was already withdrawn. */
  withdrawClaim(server: string, tool: string, evidence: string): boolean {
    return this.stmts.withdraw.run(server, tool, evidence, Date.now()).changes > 0;
  }

  withdrawn(server: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const r of this.stmts.listWithdrawn.all(server) as { tool: string; evidence: string }[]) out[r.tool] = r.evidence;
    return out;
  }
}
