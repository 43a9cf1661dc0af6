/**
 * The journal's way to the broker: entries leave in batches, off the call's path. A short delay lets the
 * decision and the outcome of a quick call merge into one entry, and many calls share one message and one broker
 * transaction. Spilled files go first (each removed once all of it is acknowledged), then what memory holds; what
 * was lost rides along with the first batch. The broker merges copies of an entry forward, so a file replayed
 * twice (acknowledged, then the broker died before we removed it) changes nothing.
 */
import type { Channel } from '../ipc/channel.js';
import { WrapperMethod } from '../protocol/names.js';
import { type JournalQueue, MAX_SEGMENT } from './journal-queue.js';
import { Segment } from './journal-segment.js';

/**
 * How long an entry may wait to share a batch, a batch under way included; bounds what a wrapper killed outright
 * can lose. Under a steady stream of calls it is also how often batches go, and a batch costs the broker about
 * the same whatever it holds (a read, a write to its intake, an acknowledgement, and the wrapper's sending): when
 * what was held during a batch went 2 ms after its acknowledgement (a batch every 4 to 5 ms), a pipelined call cost
 * the broker 4.8 µs of CPU and the wrapper 27.3, against 2.5 and 24.5 with this delay (26,133 against 28,376 calls/s,
 * the relay 37,050, alternating in one run).
 */
const JOURNAL_DELAY_MS = 10;
/** A replayed batch's buffer to start with (a segment grows as its entries need). */
const REPLAY_BYTES = 64 * 1024;
/** How soon a journal batch the broker refused (its disk full, say) is offered again. */
const JOURNAL_RETRY_MS = 1000;

export class JournalSender {
  private sending = false;
  /** The flush scheduled (null: none, or one is under way). */
  private flushTimer: NodeJS.Timeout | null = null;
  /** The flush `sendSoon` scheduled for the end of this turn (null: none). */
  private flushNext: NodeJS.Immediate | null = null;
  /** An entry waits that the broker should have now (`sendSoon`), not at the end of the delay. */
  private urgent = false;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  /** When the oldest entry no batch has taken yet was held (null: none waits). */
  private waitingSince: number | null = null;

  constructor(
    private readonly queue: JournalQueue,
    /** The connection to send on while the broker is up, else null. */
    private readonly channel: () => Channel | null,
  ) {}

  /** A flush is scheduled: by the delay, or for the end of this turn. */
  private get flushScheduled(): boolean {
    return this.flushTimer !== null || this.flushNext !== null;
  }

  /**
   * Send what is held soon: once the oldest entry waiting has waited JOURNAL_DELAY_MS (at once when a whole batch
   * is waiting; at most `maxDelayMs`). While a batch is out, what is held meanwhile waits for its acknowledgement,
   * then for the rest of that delay from the oldest of it.
   */
  scheduleFlush(maxDelayMs = JOURNAL_DELAY_MS): void {
    // every call asks this, nearly always with a flush already coming: that answer needs no clock
    if (this.waitingSince !== null && (this.flushScheduled || this.sending)) return;
    const now = performance.now();
    this.waitingSince ??= now;
    if (this.flushScheduled || this.sending) return;
    const delay = this.queue.written >= MAX_SEGMENT ? 0 : Math.max(0, Math.min(maxDelayMs, JOURNAL_DELAY_MS - (now - this.waitingSince)));
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.send();
    }, delay);
    this.flushTimer.unref();
  }

  /**
   * Send what is held once this turn of the event loop is over (the entry asked for is written by then), without
   * waiting out the delay; after the batch under way is acknowledged, if one is. For an entry the broker acts on
   * as it arrives: a snapshotted call's end, whose after-state it then reads while the client makes its next call
   * (undo-stage.ts), rather than on that call's path.
   */
  sendSoon(): void {
    if (this.closed) return;
    this.urgent = true;
    if (this.sending || this.flushNext) return;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    // not a timer: Node waits at least a millisecond for one, by which time the client may have sent its next call
    this.flushNext = setImmediate(() => {
      this.flushNext = null;
      void this.send();
    });
    this.flushNext.unref();
  }

  /** Send what is held now (unless a send is under way), batch by batch, each acknowledged before the next. */
  async send(): Promise<void> {
    const channel = this.channel();
    if (this.sending || !channel) return;
    if (this.queue.size === 0 && this.queue.spillFiles === 0 && !this.queue.hasLost) return;
    this.sending = true;
    this.urgent = false;
    let lost = this.queue.takeLost();
    // The entries are JSON text already: the request is written around them, never serialised again. With their
    // count first and nothing after them, the broker takes them in as they are (protocol/methods/journal.ts RawJournal).
    const send = async (entries: Buffer | string, n: number) => {
      const params = lost ? ['{"entries":[', entries, `],"lost":${JSON.stringify(lost)}}`] : [`{"n":${n},"entries":[`, entries, ']}'];
      await channel.requestJson(WrapperMethod.journal, params, 10_000);
      lost = null;
    };
    try {
      for (const file of this.queue.replayFiles()) {
        const entries = this.queue.readFile(file);
        // in segments, as the live entries go: a batch ends where one is full; once it is acknowledged (all of it
        // written and read), the same segment takes the next
        const segment = new Segment(Buffer.allocUnsafe(REPLAY_BYTES));
        for (let i = 0; i < entries.length && this.channel() === channel; i++) {
          segment.write(JSON.stringify(entries[i]), 0);
          if (segment.full || i === entries.length - 1) {
            await send(segment.wire(), segment.count);
            segment.reuse();
          }
        }
        if (this.channel() !== channel) return;
        this.queue.fileDone(file);
      }
      while (this.channel() === channel) {
        const batch = this.queue.batch();
        if (!batch && !lost) break;
        this.waitingSince = this.queue.size > (batch?.count ?? 0) ? performance.now() : null;
        await send(batch ? batch.wire() : '', batch?.count ?? 0);
        if (batch) this.queue.acked(batch);
        // What was held while the batch was out waits its turn like any entry (JOURNAL_DELAY_MS from the oldest
        // of it), so that batches under a steady load go one per delay, not one per acknowledgement. A whole batch
        // waiting goes at once.
        if (this.queue.size < MAX_SEGMENT) break;
      }
    } catch {
      // kept (in memory, and on disk for executed calls); offered again soon, and after the next connect
      this.queue.spillSoon(0);
      this.scheduleRetry();
    } finally {
      if (lost) this.queue.returnLost(lost);
      this.sending = false;
      if (this.queue.size > 0 && !this.retry && !this.closed) {
        if (this.urgent) this.sendSoon();
        else this.scheduleFlush(this.queue.written > 0 ? JOURNAL_DELAY_MS : (this.queue.openDueIn() ?? JOURNAL_DELAY_MS));
      }
    }
  }

  private scheduleRetry(): void {
    if (this.retry || this.closed) return;
    this.retry = setTimeout(() => void ((this.retry = null), this.send()), JOURNAL_RETRY_MS);
    this.retry.unref();
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
  }
}
