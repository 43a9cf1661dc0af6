/** The wrapper sessions the broker has seen: when each opened and ended (never pruned). */
import type Database from 'better-sqlite3';
import type { SessionInfo } from '../../protocol/api.js';

/** A session as Activity names it: who, which server, from when to when (null: still connected). */
export interface SessionRecord {
  id: string;
  client: string;
  server: string;
  startedAt: number;
  endedAt: number | null;
}

export class SessionsTable {
  private readonly s;

  constructor(
    db: Database.Database,
    private readonly now: () => number,
  ) {
    this.s = {
      insert: db.prepare('INSERT INTO sessions (id, client, server, command, pid, started_at) VALUES (?, ?, ?, ?, ?, ?)'),
      end: db.prepare('UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL'),
      endAll: db.prepare('UPDATE sessions SET ended_at = ? WHERE ended_at IS NULL'),
      byId: db.prepare('SELECT id, client, server, started_at, ended_at FROM sessions WHERE id = ?'),
      latest: db.prepare('SELECT id, client, server, started_at, ended_at FROM sessions ORDER BY started_at DESC, rowid DESC LIMIT ?'),
      latestOf: db.prepare('SELECT id, client, server, started_at, ended_at FROM sessions WHERE client = ? ORDER BY started_at DESC, rowid DESC LIMIT ?'),
    };
  }

  open(s: SessionInfo): void {
    this.s.insert.run(s.id, s.client, s.server, JSON.stringify(s.command), s.pid, s.since);
  }

  end(id: string): void {
    this.s.end.run(this.now(), id);
  }

  /** One session by its id, or the latest ones (of one client, or any), newest first. */
  list(q: { id?: string | undefined; client?: string | undefined; limit: number }): SessionRecord[] {
    const rows = (q.id !== undefined ? this.s.byId.all(q.id) : q.client !== undefined ? this.s.latestOf.all(q.client, q.limit) : this.s.latest.all(q.limit)) as Record<string, unknown>[];
    return rows.map((r) => ({
      id: String(r.id),
      client: String(r.client),
      server: String(r.server),
      startedAt: Number(r.started_at),
      endedAt: typeof r.ended_at === 'number' ? r.ended_at : null,
    }));
  }

  /** Sessions left open by a broker that died: they ended when it did. */
  endAll(): void {
    this.s.endAll.run(this.now());
  }
}
