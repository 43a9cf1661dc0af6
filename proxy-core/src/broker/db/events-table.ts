/**
 * The events table: the broker's one ordering of what happened. Every event, a journaled call included, gets
 * its `seq` here (AUTOINCREMENT: never reused, even after pruning), and a subscriber catches up with `since`
 * from the last seq it saw.
 */
import type Database from 'better-sqlite3';
import type { z } from 'zod';
import type { BrokerEvent, EventsQuerySchema } from '../../protocol/api.js';
import type { CallSummary } from './store.js';
import { brokerEvent, eventsQuery, pageSize, type Row } from './queries.js';
import type { StatementCache } from './statement-cache.js';

export type EventsQuery = z.input<typeof EventsQuerySchema>;

export class EventsTable {
  private readonly s;

  constructor(
    db: Database.Database,
    private readonly now: () => number,
    private readonly cache: StatementCache,
  ) {
    this.s = {
      insert: db.prepare('INSERT INTO events (at, kind, server, tool, detail) VALUES (?, ?, ?, ?, ?)'),
      since: db.prepare('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?'),
      // AUTOINCREMENT's high-water mark: the last seq handed out, even when pruning emptied the table
      headSeq: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck(),
    };
  }

  /** Append an event; returns it as stored (its detail as the JSON it was stored as), with its seq. */
  add(type: string, server: string | null, tool: string | null, detail: unknown, at = this.now()): BrokerEvent {
    const text = JSON.stringify(detail ?? null) ?? 'null';
    const seq = Number(this.s.insert.run(at, type, server, tool, text).lastInsertRowid);
    return { seq, at, type, server, tool, detail: JSON.parse(text) as unknown };
  }

  /** The 'call' event of a journaled call, inside the journal's batch transaction. */
  addCall(at: number, detail: CallSummary): BrokerEvent {
    const seq = this.s.insert.run(at, 'call', detail.server, detail.tool, JSON.stringify(detail)).lastInsertRowid;
    return { seq: Number(seq), at, type: 'call', server: detail.server, tool: detail.tool, detail };
  }

  /** Events after `seq`, oldest first: what a subscriber that saw `seq` has missed (page with the last seq). */
  since(seq: number, limit: number): BrokerEvent[] {
    return (this.s.since.all(seq, pageSize(limit)) as Row[]).map(brokerEvent);
  }

  /** Events newest first, optionally of one server; `nextCursor` (for `before`) when there are older ones. */
  page(query: EventsQuery = {}): { events: BrokerEvent[]; nextCursor: number | null } {
    const limit = pageSize(query.limit);
    const { sql, params } = eventsQuery(query);
    const rows = this.cache.get(sql).all(params) as Row[];
    const more = rows.length > limit;
    const events = (more ? rows.slice(0, limit) : rows).map(brokerEvent);
    return { events, nextCursor: more ? events[events.length - 1]!.seq : null };
  }

  /** The seq of the last event ever stored (0 before the first): where a new subscriber's stream starts. */
  headSeq(): number {
    return Number(this.s.headSeq.get() ?? 0);
  }
}
