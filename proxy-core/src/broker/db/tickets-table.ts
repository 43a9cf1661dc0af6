/** Held calls as tickets: what was asked, and how each ended (never pruned). */
import type Database from 'better-sqlite3';
import type { Remember, Ticket } from '../../protocol/api.js';

export class TicketsTable {
  private readonly s;

  constructor(
    db: Database.Database,
    private readonly now: () => number,
  ) {
    this.s = {
      insert: db.prepare(`INSERT INTO tickets (id, session_id, client, server, tool, arguments, args_truncated, args_bytes, args_sha256, class, reasons, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      end: db.prepare('UPDATE tickets SET ended_at = ?, resolution = ?, remember = ?, reason = ? WHERE id = ? AND ended_at IS NULL'),
      closeOrphans: db.prepare("UPDATE tickets SET ended_at = ?, resolution = 'broker-restart' WHERE ended_at IS NULL"),
    };
  }

  insert(t: Ticket): void {
    // cut arguments are kept as the text they are (already bounded); whole ones as their JSON
    const args = t.argsTruncated && typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments ?? {});
    this.s.insert.run(t.id, t.sessionId, t.client, t.server, t.tool, args, t.argsTruncated ? 1 : 0, t.argsBytes, t.argsSha256, t.class, JSON.stringify(t.reasons), t.createdAt);
  }

  end(id: string, resolution: string, remember: Remember | null, reason: string | null): void {
    this.s.end.run(this.now(), resolution, remember, reason, id);
  }

  /** Tickets a dead broker left open can no longer be answered: their wrappers already failed closed. */
  closeOrphans(): number {
    return this.s.closeOrphans.run(this.now()).changes;
  }
}
