/**
 * Everything the broker must not forget, in SQLite (WAL). Journal writes are batched into one transaction
 * per tick by the caller; every other write is small and immediate.
 */
import Database from 'better-sqlite3';
import type { Verdict } from '../classify/classify.js';
import type { EventItem, HistoryItem, JournalEntry, Remember, SessionInfo, Ticket } from '../ipc/protocol.js';
import type { Rule, RuleAction } from '../policy/rules.js';
import { MIGRATIONS } from './migrations.js';
import { chmodDatabaseFiles, databaseError, openPrivateDatabase } from './db-files.js';

type Row = Record<string, unknown>;

function parseJson(text: unknown, fallback: unknown = null): unknown {
  if (typeof text !== 'string') return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

export class Store {
  readonly db: Database.Database;
  private readonly stmts;

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
      this.db.pragma(`user_version = ${this.db.pragma('user_version', { simple: true }) as number}`);
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
    return {
      getSetting: db.prepare('SELECT value FROM settings WHERE key = ?'),
      setSetting: db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      upsertJournal: db.prepare(`
        INSERT INTO journal (id, session_id, client, server, tool, arguments, args_truncated, class, reasons, decision,
          decided_by, detail, ticket_id, outcome, started_at, duration_ms)
        VALUES (@id, @sessionId, @client, @server, @tool, @arguments, @argsTruncated, @class, @reasons, @decision,
          @decidedBy, @detail, @ticketId, @outcome, @startedAt, @durationMs)
        ON CONFLICT(id) DO UPDATE SET
          outcome = CASE WHEN excluded.outcome = 'pending' THEN journal.outcome ELSE excluded.outcome END,
          duration_ms = COALESCE(excluded.duration_ms, journal.duration_ms)`),
      insertEvent: db.prepare('INSERT INTO events (at, kind, server, tool, detail) VALUES (?, ?, ?, ?, ?)'),
      insertSession: db.prepare('INSERT INTO sessions (id, client, server, command, pid, started_at) VALUES (?, ?, ?, ?, ?, ?)'),
      endSession: db.prepare('UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL'),
      upsertTool: db.prepare(`INSERT INTO tools (server, name, class, reasons, declared, updated_at) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT(server, name) DO UPDATE SET class = excluded.class, reasons = excluded.reasons,
          declared = excluded.declared, updated_at = excluded.updated_at`),
      deleteTools: db.prepare('DELETE FROM tools WHERE server = ?'),
      listTools: db.prepare('SELECT * FROM tools WHERE server = ? ORDER BY name'),
      insertTicket: db.prepare(`INSERT INTO tickets (id, session_id, client, server, tool, arguments, args_truncated, args_bytes, args_sha256, class, reasons, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      endTicket: db.prepare('UPDATE tickets SET ended_at = ?, resolution = ?, remember = ?, reason = ? WHERE id = ? AND ended_at IS NULL'),
      listRules: db.prepare('SELECT * FROM rules ORDER BY created_at, id'),
      insertRule: db.prepare('INSERT INTO rules (id, action, server, tool, client, created_at, note) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      deleteRule: db.prepare('DELETE FROM rules WHERE id = ?'),
      getTrust: db.prepare('SELECT trust_read_only_hints AS t FROM server_settings WHERE server = ?'),
      setTrust: db.prepare(`INSERT INTO server_settings (server, trust_read_only_hints) VALUES (?, ?)
        ON CONFLICT(server) DO UPDATE SET trust_read_only_hints = excluded.trust_read_only_hints`),
      listTrust: db.prepare('SELECT server FROM server_settings WHERE trust_read_only_hints = 1 ORDER BY server'),
      withdraw: db.prepare('INSERT OR IGNORE INTO withdrawn_claims (server, tool, evidence, at) VALUES (?, ?, ?, ?)'),
      listWithdrawn: db.prepare('SELECT tool, evidence FROM withdrawn_claims WHERE server = ?'),
      history: db.prepare('SELECT * FROM journal WHERE (@server IS NULL OR server = @server) ORDER BY seq DESC LIMIT @limit'),
      events: db.prepare('SELECT * FROM events WHERE (@server IS NULL OR server = @server) ORDER BY seq DESC LIMIT @limit'),
      countJournal: db.prepare('SELECT COUNT(*) AS n FROM journal'),
    };
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

  /** Write a batch of journal entries in one transaction; later copies of an entry only fill in its outcome. */
  writeJournal(entries: readonly JournalEntry[]): void {
    const upsert = this.stmts.upsertJournal;
    this.db.transaction((batch: readonly JournalEntry[]) => {
      for (const e of batch) {
        upsert.run({
          id: e.id,
          sessionId: e.sessionId ?? null,
          client: e.client,
          server: e.server,
          tool: e.tool,
          arguments: e.arguments,
          argsTruncated: e.argsTruncated ? 1 : 0,
          class: e.class,
          reasons: JSON.stringify(e.reasons),
          decision: e.decision,
          decidedBy: e.decidedBy,
          detail: e.detail,
          ticketId: e.ticketId ?? null,
          outcome: e.outcome,
          startedAt: e.startedAt,
          durationMs: e.durationMs ?? null,
        });
      }
    })(entries);
  }

  addEvent(kind: string, server: string | null, tool: string | null, detail: unknown): void {
    this.stmts.insertEvent.run(Date.now(), kind, server, tool, JSON.stringify(detail));
  }

  openSession(s: SessionInfo): void {
    this.stmts.insertSession.run(s.id, s.client, s.server, JSON.stringify(s.command), s.pid, s.since);
  }

  endSession(id: string): void {
    this.stmts.endSession.run(Date.now(), id);
  }

  /** Sessions left open by a broker that died: they ended when it did. */
  endAllSessions(): void {
    this.db.prepare('UPDATE sessions SET ended_at = ? WHERE ended_at IS NULL').run(Date.now());
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
    return this.db.prepare("UPDATE tickets SET ended_at = ?, resolution = 'broker-restart' WHERE ended_at IS NULL").run(Date.now()).changes;
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
      return rule;
    });
  }

  addRule(rule: Rule): void {
    this.stmts.insertRule.run(rule.id, rule.action, rule.server, rule.tool, rule.client ?? null, rule.createdAt, rule.note ?? null);
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

  history(limit: number, server: string | null): HistoryItem[] {
    return (this.stmts.history.all({ limit, server }) as Row[]).map((r) => {
      const item: HistoryItem = {
        kind: 'call',
        id: String(r.id),
        client: String(r.client),
        server: String(r.server),
        tool: String(r.tool),
        arguments: String(r.arguments ?? ''),
        argsTruncated: r.args_truncated === 1,
        class: r.class as HistoryItem['class'],
        reasons: parseJson(r.reasons, []) as string[],
        decision: r.decision as HistoryItem['decision'],
        decidedBy: r.decided_by as HistoryItem['decidedBy'],
        detail: String(r.detail ?? ''),
        outcome: r.outcome as HistoryItem['outcome'],
        startedAt: Number(r.started_at),
      };
      if (r.session_id) item.sessionId = String(r.session_id);
      if (r.ticket_id) item.ticketId = String(r.ticket_id);
      if (typeof r.duration_ms === 'number') item.durationMs = r.duration_ms;
      return item;
    });
  }

  events(limit: number, server: string | null): EventItem[] {
    return (this.stmts.events.all({ limit, server }) as Row[]).map((r) => ({
      kind: 'event',
      at: Number(r.at),
      event: String(r.kind),
      server: r.server === null ? null : String(r.server),
      tool: r.tool === null ? null : String(r.tool),
      detail: parseJson(r.detail),
    }));
  }

  journalCount(): number {
    return (this.stmts.countJournal.get() as { n: number }).n;
  }
}
