/**
 * The event log: the broker's one ordering of what happened. Every event, a journaled call included, gets its
 * `seq` here (AUTOINCREMENT: never reused, even after pruning), and a subscriber catches up with `since` from
 * the last seq it saw. A call's event keeps its summary as columns (event_log, migration 10; its finish as the
 * time after its start, migration 11); any other event its detail as JSON. Kind, server and tool are name ids
 * (names.ts).
 */
import type Database from 'better-sqlite3';
import type { z } from 'zod';
import type { BrokerEvent, EventsQuerySchema } from '../../protocol/api.js';
import type { Names } from './names.js';
import type { CallEvent, StoredCallSummary } from '../../protocol/events.js';
import { eventsQuery, pageSize, type Row } from './queries.js';
import { eventFromRow } from './rows.js';
import type { StatementCache } from './statement-cache.js';
import { afterStart } from './times.js';

export type EventsQuery = z.input<typeof EventsQuerySchema>;

/** A number as the JSON of the summary kept it: what is not finite was null there. */
const finite = (n: number | null): number | null => (n !== null && Number.isFinite(n) ? n : null);

export class EventsTable {
  private readonly s;
  private readonly addOne: (type: string, server: string | null, tool: string | null, text: string, at: number) => number;

  constructor(
    db: Database.Database,
    private readonly now: () => number,
    private readonly cache: StatementCache,
    private readonly names: Names,
  ) {
    this.s = {
      insert: db.prepare('INSERT INTO event_log (at, kind, server, tool, detail) VALUES (?, ?, ?, ?, ?)'),
      insertCall: db.prepare(`INSERT INTO event_log (at, kind, server, tool, call_id, session, client, class, decision, decided_by, outcome,
        ticket_id, started_at, finished_after, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      since: db.prepare('SELECT * FROM event_log WHERE seq > ? ORDER BY seq LIMIT ?'),
      // AUTOINCREMENT's high-water mark: the last seq handed out, even when pruning emptied the table
      headSeq: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'event_log'").pluck(),
    };
    // the names and the event in one transaction: a new name is never left without its event, nor cached
    // when the write failed
    this.addOne = db.transaction((type: string, server: string | null, tool: string | null, text: string, at: number) =>
      Number(this.s.insert.run(at, names.id(type), names.maybe(server), names.maybe(tool), text).lastInsertRowid),
    );
  }

  /** Append an event; returns it as stored (its detail as the JSON it was stored as), with its seq. */
  add(type: string, server: string | null, tool: string | null, detail: unknown, at = this.now()): BrokerEvent {
    const text = JSON.stringify(detail ?? null) ?? 'null';
    const seq = this.names.within(() => this.addOne(type, server, tool, text, at));
    return { seq, at, type, server, tool, detail: JSON.parse(text) as unknown };
  }

  /** The 'call' event of a journaled call, inside the journal's batch transaction. */
  addCall(at: number, d: StoredCallSummary): CallEvent {
    const n = this.names;
    const started = finite(d.startedAt);
    const finished = finite(d.finishedAt);
    // the finish kept after the start (times.ts); whole, marked, should there be no start
    const finishedAfter = finished === null ? null : started === null ? `@${finished}` : afterStart(started, finished);
    const seq = this.s.insertCall.run(
      at, n.id('call'), n.id(d.server), n.id(d.tool), d.id, n.maybe(d.sessionId), n.id(d.client), n.id(d.class), n.id(d.decision),
      n.id(d.decidedBy), n.id(d.outcome), d.ticketId, started, finishedAfter, finite(d.durationMs),
    ).lastInsertRowid;
    return { seq: Number(seq), at, type: 'call', server: d.server, tool: d.tool, detail: d };
  }

  /** Events after `seq`, oldest first: what a subscriber that saw `seq` has missed (page with the last seq). */
  since(seq: number, limit: number): BrokerEvent[] {
    return (this.s.since.all(seq, pageSize(limit)) as Row[]).map((r) => eventFromRow(r, this.names));
  }

  /** Events newest first, optionally of one server; `nextCursor` (for `before`) when there are older ones. */
  page(query: EventsQuery = {}): { events: BrokerEvent[]; nextCursor: number | null } {
    const limit = pageSize(query.limit);
    const built = eventsQuery(query, (name) => this.names.find(name));
    if (built === null) return { events: [], nextCursor: null };
    const rows = this.cache.get(built.sql).all(built.params) as Row[];
    const more = rows.length > limit;
    const events = (more ? rows.slice(0, limit) : rows).map((r) => eventFromRow(r, this.names));
    return { events, nextCursor: more ? events[events.length - 1]!.seq : null };
  }

  /** The seq of the last event ever stored (0 before the first): where a new subscriber's stream starts. */
  headSeq(): number {
    return Number(this.s.headSeq.get() ?? 0);
  }
}
