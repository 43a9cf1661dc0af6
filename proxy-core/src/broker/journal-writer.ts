/**
 * Journal batches from every wrapper go into one transaction per tick, acknowledged after the commit; the
 * rows' events are published in the same tick. An entry that is not a call record is refused on its own
 * (recorded as an event and acknowledged, so a buggy wrapper does not resend it forever); a failed write is
 * not acknowledged, so the wrappers keep their entries and send them again.
 */
import { IpcError } from '../ipc/channel.js';
import type { BrokerEvent, CallRecord } from '../protocol/api.js';
import type { Session } from './sessions.js';
import type { Store } from './db/store.js';
import { checkEntry } from './validate.js';

export class JournalWriter {
  private queue: { entries: CallRecord[]; done: (err?: Error) => void }[] = [];
  private scheduled = false;

  constructor(
    private readonly store: Store,
    private readonly publish: (events: BrokerEvent[]) => void,
    private readonly refused: (error: string, client: string) => void,
    /**
     * The write failed (a full disk, say): the entries stay with their wrappers, which send them again. True when
     * it was a disk error (then the disk is marked full and the wrappers are told).
     */
    private readonly failed: (err: unknown) => boolean | void = () => {},
  ) {}

  write(session: Session, raw: unknown[]): Promise<{ acked: number }> {
    const entries: CallRecord[] = [];
    for (const e of raw) {
      try {
        entries.push(checkEntry(session, e));
      } catch (err) {
        this.refused((err as Error).message, session.info.client);
      }
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ entries, done: (err) => (err ? reject(err) : resolve({ acked: raw.length })) });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Write everything queued now. */
  flush(): void {
    this.scheduled = false;
    const queue = this.queue;
    this.queue = [];
    if (queue.length === 0) return;
    let events: BrokerEvent[];
    try {
      events = this.store.writeJournal(queue.flatMap((q) => q.entries));
    } catch (err) {
      this.failed(err);
      const e = new IpcError('journal-failed', `journal write failed: ${(err as Error).message}`);
      for (const q of queue) q.done(e);
      return;
    }
    for (const q of queue) q.done();
    try {
      this.publish(events);
    } catch (err) {
      // committed and acknowledged: what follows a commit (undo's bookkeeping) failing must not take the broker
      // down; anything but a disk error is a fault worth an event, not a silence
      if (this.failed(err) !== true) this.refused(`after the journal was written: ${(err as Error).message}`, 'broker');
    }
  }
}
