/** The wrapper sessions the broker has seen: when each opened and ended (never pruned). */
import type Database from 'better-sqlite3';
import type { SessionInfo } from '../../protocol/api.js';

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
    };
  }

  open(s: SessionInfo): void {
    this.s.insert.run(s.id, s.client, s.server, JSON.stringify(s.command), s.pid, s.since);
  }

  end(id: string): void {
    this.s.end.run(this.now(), id);
  }

  /** Sessions left open by a broker that died: they ended when it did. */
  endAll(): void {
    this.s.endAll.run(this.now());
  }
}
