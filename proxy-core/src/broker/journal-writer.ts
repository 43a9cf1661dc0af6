/**
 * Journal batches from every wrapper are taken in as they came: one line each in the intake's file
 * (db/intake-log.ts), all of a tick's in one write, acknowledged after it, so a batch the wrapper may forget is on
 * disk. They are moved into the journal proper (its rows, indexes, search entries and events) in bulk by the
 * indexer (journal-indexer.ts): once no batch has come for QUIET_MS, and at once before anything reads the
 * journal or the events. A filing begun in a quiet moment stops at the next batch (the calls are back) and goes on
 * at the next quiet moment. While batches never stop, what waited MAX_WAIT_MS is filed all the same, and what came
 * after it waits for the next quiet moment or deadline; past MAX_PENDING entries (or MAX_PENDING_BYTES), everything
 * waiting is filed.
 *
 * Once nothing waits to be filed, in a quiet moment, the search index takes the rest of long arguments it took only
 * the head of when their calls were filed (db/search-rest.ts), SEARCH_REST_CHARS of them a transaction (one call at
 * least); while calls come, only when more than SEARCH_REST_MAX calls wait for it.
 *
 * Why: a journal row, with its six indexes, its search entry and its event, costs the broker some 12-20 µs of CPU,
 * on the same cores as the clients, the wrappers and the servers whose calls it records. Paid batch by batch as
 * calls run, that was the largest share of what a pipelined call cost; taken in as one line of bytes per batch
 * and filed in bulk when the calls stop, it is off the calls' way, and what anyone reads is still whole.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { IpcError } from '../ipc/channel.js';
import type { CallEvent } from '../protocol/events.js';
import { RawJournal } from '../protocol/methods/journal.js';
import { type Clock, systemClock, type Timer } from '../util/clock.js';
import type { IntakeBatch } from './db/intake-log.js';
import type { Store } from './db/store.js';
import { JournalIndexer, type JournalIndexerOptions, RETRY_MS } from './journal-indexer.js';

export { MAX_BYTES_PER_COMMIT, MAX_ENTRIES_PER_COMMIT } from './journal-indexer.js';
import type { Session } from './sessions.js';

/** How long without a new batch before what waits is moved in. */
export const QUIET_MS = 20;
/** How long the oldest batch may wait while batches keep coming. */
export const MAX_WAIT_MS = 2000;
/** Entries waiting past this, or bytes past MAX_PENDING_BYTES, are moved in without waiting for a quiet moment. */
export const MAX_PENDING = 100_000;
export const MAX_PENDING_BYTES = 64 * 1024 * 1024;
/** What a read moves in at once, at most (some 50 ms of the broker's time). */
export const SYNC_MAX = 4000;
/** And in bytes of entries (calls with big arguments cost with their size: 4 MB of them is some 100 ms). */
export const SYNC_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Calls whose long arguments are indexed in part (db/search-rest.ts) past which the rest is indexed while calls
 * still come: every text search reads these rows' arguments itself (1,000 of 64 KB, some 10 ms).
 */
export const SEARCH_REST_MAX = 1000;
/**
 * Characters of arguments one transaction indexes the rest of at most (but one call's at least): a call of 64 KB goes
 * alone, some 5 ms for source code and 30 to 40 for base64.
 */
export const SEARCH_REST_CHARS = 64 * 1024;

/**
 * How long the filing waits, at most, for the requests under way to be answered before its next transaction (see
 * `busy`).
 */
export const YIELD_MS = 20;

export interface JournalWriterOptions extends Omit<JournalIndexerOptions, 'now'> {
  store: Store;
  /** The clock for the waits above (the system's unless a test says otherwise). */
  clock?: Clock;
  /**
   * Is a request under way (a call's snapshot, an approval, E-Stop)? Its handler's awaits each resume a turn of
   * the event loop later, and a filing transaction (tens of milliseconds) ran in every turn between: the next
   * transaction waits until none is, YIELD_MS at most.
   */
  busy?: () => boolean;
}

export class JournalWriter {
  private queue: { batch: IntakeBatch; done: (err?: Error) => void }[] = [];
  private scheduled = false;
  private readonly indexer: JournalIndexer;
  private readonly clock: Clock;
  private quiet: Timer | undefined;
  private deadline: Timer | undefined;
  private stepping = false;
  /** Since when the filing has waited for the requests under way (undefined: it is not waiting). */
  private yieldingSince: number | undefined;
  /** When the last batch was taken in. */
  private lastArrival = -Infinity;
  /**
   * The newest batch a filing must reach whatever comes meanwhile (a deadline passed, or too much waits);
   * undefined: the filing goes on only while no batch comes.
   */
  private until: number | undefined;

  constructor(private readonly o: JournalWriterOptions) {
    const clock = (this.clock = o.clock ?? systemClock);
    this.indexer = new JournalIndexer({ ...o, now: () => clock.now() });
    // the broker takes over the intake: what a broker before it left there waits to be filed
    o.store.intake.open();
    const unreadable = o.store.intake.unreadable;
    if (unreadable > 0) o.refused(`${unreadable} line(s) of the journal's intake could not be read; the rest is filed`, 'broker');
  }

  /**
   * Take a wrapper's batch: its bytes as they came (RawJournal), or entries a peer sent as objects. Resolves
   * once it is on disk; its entries are checked when they are moved into the journal.
   */
  write(session: Session, entries: RawJournal | readonly unknown[]): Promise<{ acked: number }> {
    const raw = entries instanceof RawJournal;
    const n = raw ? entries.n : entries.length;
    const batch: IntakeBatch = {
      session: session.info.id,
      client: session.info.client,
      server: session.info.server,
      at: this.clock.now(),
      entries: raw ? entries.parts : Buffer.from(JSON.stringify(entries)),
      n,
    };
    return new Promise((resolve, reject) => {
      this.queue.push({ batch, done: (err) => (err ? reject(err) : resolve({ acked: n })) });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.takeIn();
      });
    });
  }

  /** Entries taken in and not yet in the journal. */
  get pending(): number {
    return this.o.store.intake.size;
  }

  /**
   * File what was taken in up to now, one bounded transaction a turn of the event loop, so that E-Stop, tickets
   * and heartbeats go in between: what a reader's request does before it reads (the read itself files, at once,
   * only what arrived meanwhile).
   */
  async settle(): Promise<void> {
    const intake = this.o.store.intake;
    const upTo = intake.newestSeq();
    for (let oldest = intake.oldestSeq(); oldest !== 0 && oldest <= upTo; oldest = intake.oldestSeq()) {
      if (!this.indexer.some()) return;
      await nextTurn();
    }
  }

  /**
   * Move what was taken in into the journal now, at most SYNC_MAX entries (a reader is about to read it): a read
   * never holds the broker for long. Past that, the rest follows a transaction a turn; a reader's request settles
   * first (`settle`), so this is left with what came in meanwhile.
   */
  catchUp(): void {
    if (this.o.store.intake.size === 0) return;
    this.disarm();
    // what waited when the reader came follows whatever comes meanwhile: someone is reading
    if (!this.indexer.upTo(SYNC_MAX, SYNC_MAX_BYTES)) this.fileAll();
  }

  /** Take in what is queued and move everything into the journal now (the broker is starting, or stopping). */
  flush(): void {
    this.takeIn();
    this.disarm();
    this.indexer.all();
  }

  /** What follows a commit of calls written outside the intake (a spill file, an undo's own record). */
  handOff(events: CallEvent[]): void {
    this.indexer.handOff(events);
  }

  /** One write for every batch queued this tick, then their acknowledgements, then the wait for a move. */
  private takeIn(): void {
    const queue = this.queue;
    this.queue = [];
    if (queue.length === 0) return;
    try {
      this.o.store.intake.append(queue.map((q) => q.batch));
    } catch (err) {
      this.o.failed?.(err);
      const e = new IpcError('journal-failed', `journal write failed: ${(err as Error).message}`);
      for (const q of queue) q.done(e);
      return;
    }
    for (const q of queue) q.done();
    this.lastArrival = this.clock.now();
    // a filing under way decides for itself whether to go on (see stepSoon)
    if (!this.stepping) this.arm();
  }

  /** A batch came: the quiet wait starts again; the deadline is set by the oldest batch waiting. */
  private arm(): void {
    const intake = this.o.store.intake;
    if (this.overfull()) return this.fileAll();
    const clock = this.clock;
    clock.clearTimeout(this.quiet);
    this.quiet = clock.setTimeout(() => this.stepSoon(), QUIET_MS);
    const oldest = intake.oldestAt() ?? clock.now();
    this.deadline ??= clock.setTimeout(() => this.fileAll(), Math.max(0, oldest + MAX_WAIT_MS - clock.now()));
  }

  private overfull(): boolean {
    const intake = this.o.store.intake;
    return intake.size >= MAX_PENDING || intake.bytes >= MAX_PENDING_BYTES;
  }

  /** File everything waiting now, whatever comes meanwhile (a deadline passed, or too much waits). */
  private fileAll(): void {
    this.until = this.o.store.intake.newestSeq();
    this.stepSoon();
  }

  private disarm(): void {
    this.clock.clearTimeout(this.quiet);
    this.clock.clearTimeout(this.deadline);
    this.quiet = this.deadline = undefined;
  }

  /**
   * Move batches in, one bounded transaction a turn of the event loop, until none waits, or (a filing begun in a
   * quiet moment) until a batch comes: the calls are back, and the filing, some 12-20 µs of CPU a call on the
   * cores the calls need, waits for them to stop again (the quiet wait and the deadline are armed anew). Batches
   * that came meanwhile are taken in (and acknowledged) a turn of their own first: the wrappers' acknowledgements
   * do not wait behind the filing.
   */
  private stepSoon(): void {
    this.disarm();
    if (this.stepping) return;
    this.stepping = true;
    const step = () => {
      if (this.queue.length > 0) {
        this.takeIn();
        return void setImmediate(step);
      }
      this.stepping = false;
      const intake = this.o.store.intake;
      if (intake.size === 0) {
        this.until = undefined;
        return this.searchRest(step);
      }
      if (this.until !== undefined && intake.oldestSeq() > this.until) this.until = undefined;
      if (this.until === undefined) {
        if (this.overfull()) this.until = intake.newestSeq();
        // the calls are back: what waits, waits for the next quiet moment (but too much of the search's rest)
        else if (this.clock.now() - this.lastArrival < QUIET_MS) return this.searchRest(step);
      }
      if (this.putOff(step)) return;
      if (!this.indexer.some()) return this.retryLater();
      this.stepping = true;
      setImmediate(step);
    };
    setImmediate(step);
  }

  /**
   * No move could be made (one failed, now or less than RETRY_MS ago, or one is under way): what waits is tried
   * again RETRY_MS later by itself, since a quiet broker may see no batch and no reader for a long time (a batch or
   * a reader that comes meanwhile tries as ever).
   */
  private retryLater(): void {
    if (this.o.store.intake.size === 0) return;
    this.clock.clearTimeout(this.quiet);
    this.quiet = this.clock.setTimeout(() => this.stepSoon(), RETRY_MS);
  }

  /**
   * Nothing is to be filed now: index the rest of long arguments (db/search-rest.ts), one bounded transaction a
   * turn, while it is quiet, or while calls come if more than SEARCH_REST_MAX calls wait for it. Otherwise the
   * quiet wait is armed again, as for the filing.
   */
  private searchRest(step: () => void): void {
    const rest = this.o.store.journal.searchRest;
    const quiet = this.clock.now() - this.lastArrival >= QUIET_MS;
    let waiting = 0;
    try {
      waiting = this.o.store.db.inTransaction ? 0 : rest.waiting();
    } catch {
      // read again at the next quiet moment
    }
    if (waiting === 0 || (!quiet && waiting <= SEARCH_REST_MAX)) {
      if (this.o.store.intake.size > 0 || waiting > 0) this.arm();
      return;
    }
    if (this.putOff(step)) return;
    try {
      rest.complete(SEARCH_REST_CHARS);
    } catch (err) {
      // a full disk, say: the rows stay listed (every search still reads them) and are tried again at the next quiet moment
      this.o.failed?.(err);
      return;
    }
    this.stepping = true;
    setImmediate(step);
  }

  /**
   * A request is under way: the next transaction waits for it to be answered (YIELD_MS at most), and `step` is
   * run again in a millisecond. True when it was put off.
   */
  private putOff(step: () => void): boolean {
    if (this.o.busy?.()) {
      const now = this.clock.now();
      this.yieldingSince ??= now;
      if (now - this.yieldingSince < YIELD_MS) {
        this.stepping = true;
        this.clock.setTimeout(step, 1);
        return true;
      }
    }
    this.yieldingSince = undefined;
    return false;
  }
}
