/**
 * Journal batches from every wrapper go into one transaction per tick (MAX_ENTRIES_PER_COMMIT at most),
 * acknowledged after the commit; the rows' events are published in the same tick, and the committed calls handed
 * to undo (undo/undo.ts `journaled`), so that undo records what a call left only for a call the journal holds.
 * An entry that is not a call record is refused on its own (recorded as an event and acknowledged, so a buggy
 * wrapper does not resend it forever); a failed write is not acknowledged, so the wrappers keep their entries
 * and send them again.
 */
import { IpcError } from '../ipc/channel.js';
import type { BrokerEvent, CallRecord } from '../protocol/api.js';
import type { CallEvent, StoredCallSummary } from '../protocol/events.js';
import type { Session } from './sessions.js';
import type { Store } from './db/store.js';
import { checkEntry } from './validate.js';

/**
 * Entries one transaction takes at most (one wrapper's batch is never split). Under a flood from many wrappers,
 * what is queued beyond it waits a turn of the event loop, so heartbeats and tickets go in between: one merged
 * transaction of every wrapper's backlog held the broker for more than a second.
 */
export const MAX_ENTRIES_PER_COMMIT = 2000;

export interface JournalWriterOptions {
  store: Store;
  /** The committed rows' events, for the bus. */
  publish(events: BrokerEvent[]): void;
  /** The calls a batch committed, as the journal now holds them (undo's bookkeeping follows the journal). */
  committed(calls: readonly StoredCallSummary[]): void;
  /** An entry that is not a call record, refused on its own. */
  refused(error: string, client: string): void;
  /**
   * The write failed (a full disk, say): the entries stay with their wrappers, which send them again. True when
   * it was a disk error (then the disk is marked full and the wrappers are told).
   */
  failed?(err: unknown): boolean | void;
  /** The entries a batch committed, whole (the audit export's feed: broker/otlp/). */
  exported?(records: readonly CallRecord[]): void;
}

export class JournalWriter {
  private queue: { entries: CallRecord[]; done: (err?: Error) => void }[] = [];
  private scheduled = false;

  constructor(private readonly o: JournalWriterOptions) {}

  write(session: Session, raw: unknown[]): Promise<{ acked: number }> {
    const entries: CallRecord[] = [];
    for (const e of raw) {
      try {
        entries.push(checkEntry(session, e));
      } catch (err) {
        this.o.refused((err as Error).message, session.info.client);
      }
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ entries, done: (err) => (err ? reject(err) : resolve({ acked: raw.length })) });
      this.schedule();
    });
  }

  /** Write everything queued now (the broker is stopping), in transactions of MAX_ENTRIES_PER_COMMIT. */
  flush(): void {
    while (this.queue.length > 0) this.commitSome();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.commitSome();
      if (this.queue.length > 0) this.schedule();
    });
  }

  /** One transaction: the oldest batches, up to MAX_ENTRIES_PER_COMMIT entries (at least one batch). */
  private commitSome(): void {
    let count = 0;
    let n = 0;
    while (n < this.queue.length && (n === 0 || count + this.queue[n]!.entries.length <= MAX_ENTRIES_PER_COMMIT)) count += this.queue[n++]!.entries.length;
    const queue = this.queue.splice(0, n);
    if (queue.length === 0) return;
    let events: CallEvent[];
    try {
      events = this.o.store.writeJournal(queue.flatMap((q) => q.entries));
    } catch (err) {
      this.o.failed?.(err);
      const e = new IpcError('journal-failed', `journal write failed: ${(err as Error).message}`);
      for (const q of queue) q.done(e);
      return;
    }
    for (const q of queue) q.done();
    this.o.exported?.(queue.flatMap((q) => q.entries));
    try {
      this.handOff(events);
    } catch (err) {
      // committed and acknowledged: what follows a commit (undo's bookkeeping) failing must not take the broker
      // down; anything but a disk error is a fault worth an event, not a silence
      if (this.o.failed?.(err) !== true) this.o.refused(`after the journal was written: ${(err as Error).message}`, 'broker');
    }
  }

  /**
   * What follows a commit (a wrapper's batch, or the entries of a spill file journal-safety.ts took in): the
   * events published, then the calls handed to undo, in the same tick as the commit.
   */
  handOff(events: CallEvent[]): void {
    this.o.publish(events);
    this.o.committed(events.map((e) => e.detail));
  }
}
