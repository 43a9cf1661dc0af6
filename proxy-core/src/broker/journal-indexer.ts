/**
 * Moves what the journal took in (db/intake-log.ts) into the journal proper: each batch's entries checked (an
 * entry that is not a call record is refused on its own, recorded as an event), written with their events, and
 * the intake's mark of what is filed moved past them, in one transaction of at most MAX_ENTRIES_PER_COMMIT
 * entries and MAX_BYTES_PER_COMMIT bytes of them (one batch is never split).
 * After the commit, in the same tick: the events published, the calls handed to undo (undo/undo.ts `journaled`),
 * so that undo records what a call left only for a call the journal holds, and the records to the audit export.
 * A failed move leaves the batches where they are, to be moved the next time (journal-writer.ts says when).
 */
import type { BrokerEvent, CallRecord } from '../protocol/api.js';
import type { CallEvent, StoredCallSummary } from '../protocol/events.js';
import type { IntakeRow } from './db/intake-log.js';
import type { IntakeGroup, Store } from './db/store.js';
import { batchEntries } from './batch-entries.js';
import { checkEntry } from './validate.js';

/**
 * Entries one transaction takes at most. What waits beyond it is moved a turn of the event loop later, so
 * heartbeats, tickets and the wrappers' next batches go in between: one transaction of every wrapper's backlog
 * held the broker for more than a second. A batch that comes while one runs is acknowledged only after it, and a
 * wrapper killed meanwhile loses what it held: 500 entries are some 10 to 40 ms, and cost a call no more to file
 * than larger transactions do.
 */
export const MAX_ENTRIES_PER_COMMIT = 500;
/**
 * Entry bytes one transaction takes at most (a batch past it goes alone). Filing costs with the text indexed as
 * well as with the rows: 500 calls that each wrote a file of 100 KB (64 KB of arguments kept and indexed apiece)
 * held the broker for 0.8 s, near the second after which a wrapper calls it dead. A megabyte of such entries is
 * some 25 ms; 500 entries of a usual size are a quarter of it. (Indexed whole, a megabyte of arguments that are
 * source code took some 55 ms, and of base64 some 500: long arguments are now indexed in two steps, the head as
 * they are filed, db/search-rest.ts.)
 */
export const MAX_BYTES_PER_COMMIT = 1024 * 1024;

export interface JournalIndexerOptions {
  store: Store;
  /** The time, for the wait after a failed move. */
  now(): number;
  /** The committed rows' events, for the bus. */
  publish(events: BrokerEvent[]): void;
  /** The calls a move committed, as the journal now holds them (undo's bookkeeping follows the journal). */
  committed(calls: readonly StoredCallSummary[]): void;
  /** An entry that is not a call record, refused on its own. */
  refused(error: string, client: string): void;
  /** A write failed (a full disk, say). True when it was a disk error (then the disk is marked full). */
  failed?(err: unknown): boolean | void;
  /** The entries a move committed, whole (the audit export's feed: broker/otlp/). */
  exported?(records: readonly CallRecord[]): void;
}

/** After a move failed (a full disk, say), how long before one is tried again: a reader does not retry it each time. */
export const RETRY_MS = 1000;

export class JournalIndexer {
  private moving = false;
  /** When the last move failed (0: it did not). */
  private failedAt = 0;
  /** Why the moves have been failing since the last one that did not (undefined: the last one did not). */
  private failingWith: string | undefined;

  constructor(private readonly o: JournalIndexerOptions) {}

  /**
   * Move the oldest batches (at least one, up to MAX_ENTRIES_PER_COMMIT entries). False when nothing was moved:
   * none waits, a move is under way (a reader inside a publish), or it failed.
   */
  some(): boolean {
    const store = this.o.store;
    // inside a transaction of the caller's, a move could be rolled back after its events were published
    if (this.moving || store.db.inTransaction) return false;
    if (this.failedAt !== 0 && this.o.now() - this.failedAt < RETRY_MS) return false;
    this.moving = true;
    try {
      const groups: IntakeGroup[] = [];
      let count = 0;
      let bytes = 0;
      let seq = 0;
      for (let size = store.intake.peek(seq); size; size = store.intake.peek(seq)) {
        // whether a batch fits is decided by its sender's count and its bytes, before it is read (it holds no more
        // entries than its count: `check`)
        if (groups.length > 0 && (count + size.n > MAX_ENTRIES_PER_COMMIT || bytes + size.bytes > MAX_BYTES_PER_COMMIT)) break;
        const row = store.intake.next(seq);
        if (!row) break;
        const records = this.check(row);
        groups.push({ records, at: row.at });
        count += records.length;
        bytes += size.bytes;
        seq = row.seq;
        if (count >= MAX_ENTRIES_PER_COMMIT || bytes >= MAX_BYTES_PER_COMMIT) break;
      }
      if (groups.length === 0) return false;
      let events: CallEvent[];
      try {
        events = store.moveIntake(groups, seq);
      } catch (err) {
        this.failedAt = this.o.now();
        this.o.failed?.(err);
        // said when the failures begin, and when their cause changes: a failure that lasts is tried again every
        // RETRY_MS (journal-writer.ts), and is not news each time
        const why = (err as Error).message;
        if (why !== this.failingWith) this.o.refused(`the journal could not file what it took in (it stays, and is filed later): ${why}`, 'broker');
        this.failingWith = why;
        return false;
      }
      this.failedAt = 0;
      this.failingWith = undefined;
      this.o.exported?.(groups.flatMap((g) => g.records));
      try {
        this.handOff(events);
      } catch (err) {
        // committed: what follows a commit (undo's bookkeeping) failing must not take the broker down; anything
        // but a disk error is a fault worth an event, not a silence
        if (this.o.failed?.(err) !== true) this.o.refused(`after the journal was written: ${(err as Error).message}`, 'broker');
      }
      return true;
    } finally {
      this.moving = false;
    }
  }

  /** Move everything waiting now (the broker starting or stopping). */
  all(): void {
    while (this.o.store.intake.size > 0 && this.some()) {
      // one bounded transaction after another
    }
  }

  /** Move what waits, about `max` entries (and `maxBytes` of them) at most; true when nothing is left waiting. */
  upTo(max: number, maxBytes = Infinity): boolean {
    const intake = this.o.store.intake;
    for (let moved = 0, movedBytes = 0; intake.size > 0; ) {
      if (moved >= max || movedBytes >= maxBytes) return false;
      const before = intake.size;
      const beforeBytes = intake.bytes;
      if (!this.some()) return false;
      moved += Math.max(1, before - intake.size);
      movedBytes += Math.max(0, beforeBytes - intake.bytes);
    }
    return true;
  }

  /**
   * What follows a commit (a move, or the entries of a spill file journal-safety.ts took in): the events published,
   * then the calls handed to undo, in the same tick as the commit.
   */
  handOff(events: CallEvent[]): void {
    this.o.publish(events);
    this.o.committed(events.map((e) => e.detail));
  }

  /**
   * A batch's entries as call records of its session; what is not one is refused (and said) on its own. A batch
   * holding more entries than its sender counted (at most 10,000: RawJournal.of) is refused whole: that count
   * bounds a filing transaction, as the schema's bound did for a batch sent as objects.
   */
  private check(row: IntakeRow): CallRecord[] {
    const { session: id, client, server } = row;
    const entries = batchEntries(row.entries);
    if (!entries) {
      this.o.refused('a journal batch that is not a JSON array of entries', client);
      return [];
    }
    if (entries.length > row.n) {
      this.o.refused(`a journal batch of ${entries.length} entries that said it held ${row.n}: none of them is filed`, client);
      return [];
    }
    const session = { info: { id, client, server } };
    const records: CallRecord[] = [];
    for (const e of entries) {
      try {
        records.push(checkEntry(session, e));
      } catch (err) {
        this.o.refused((err as Error).message, client);
      }
    }
    return records;
  }
}
