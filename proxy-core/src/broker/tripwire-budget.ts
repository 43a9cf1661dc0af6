/**
 * The tripwire as a cap: places for changing calls, handed to the wrappers. A wrapper forwards a changing call
 * only with a place it holds (a counter decrement in the tick the call was decided), reports the places it
 * used soon after, and asks for more when it runs out; the call waits for that answer, held before the server.
 *
 * Across every session and in each window (the short one and the long one), what was reported forwarded in
 * the window plus every place handed out and not yet reported never exceeds the limit. A forward is counted
 * when its report arrives, never earlier than it ran, so a window here always holds at least the calls that
 * reached a server in it. A wrapper that asks while the windows are full is holding the call that would pass
 * the limit: E-Stop engages and the call is refused, never forwarded. Places other sessions hold and have not
 * used yet are called back first (`reclaim`), so they do not stand in for calls that never ran.
 *
 * A wrapper gives back what it did not use when it closes; one that goes away without saying so has its places
 * counted as forwarded (they may have been). Pure: time comes from the injected clock.
 */
import type { Clock } from '../util/clock.js';
import { type TripwireLimits, type TripwireWindow, windowsOf } from './tripwire.js';

export interface BudgetAsk {
  /** Places used (calls forwarded) since the wrapper last reported. */
  used: number;
  /** How many places it would like. */
  want: number;
  /** A call waits on this answer (not only a wrapper stocking up). */
  waiting: boolean;
}

export interface BudgetGrant {
  granted: number;
  /** Why nothing was given: E-Stop is on (or engaged now), or others hold the places and did not give them back. */
  refused?: 'estop' | 'busy';
}

export interface BudgetContext {
  clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>;
  limits(): TripwireLimits;
  estop(): boolean;
  /** How many sessions share the windows (a grant is a share of what is left, not all of it). */
  sessions(): number;
  /** Ask a session to report what it used and give back the rest (a `budget.reclaim` note). */
  reclaim(sessionId: string): void;
  /** A call would pass the limit: engage E-Stop, saying why. Resets this ledger (see `reset`). */
  trip(reason: string): void;
}

/** How long a call waits for others to give back places they hold before it is refused as busy. */
export const RECLAIM_WAIT_MS = 3000;

interface Waiting {
  sessionId: string;
  want: number;
  resolve(grant: BudgetGrant): void;
  timer: ReturnType<Clock['setTimeout']>;
}

export class TripwireBudget {
  /** Places handed out and not yet reported used or given back, by session. */
  private readonly outstanding = new Map<string, number>();
  private outstandingTotal = 0;
  /** Forwards as reported, oldest first: [broker time, how many]. */
  private forwards: [number, number][] = [];
  private head = 0;
  /** Asks with a call waiting behind them that could not be answered at once, oldest first. */
  private waiting: Waiting[] = [];
  /** Sessions asked to give back and not heard from since. */
  private readonly reclaiming = new Set<string>();

  constructor(private readonly o: BudgetContext) {}

  /** A wrapper reports what it used and asks for more. Answered at once, or once places were given back. */
  ask(sessionId: string, a: BudgetAsk): BudgetGrant | Promise<BudgetGrant> {
    this.used(sessionId, a.used);
    this.reclaiming.delete(sessionId);
    if (this.o.estop()) return { granted: 0, refused: 'estop' };
    // calls already wait: a new one queues behind them, and a wrapper stocking up gets nothing meanwhile
    if (this.waiting.length === 0) {
      const now = this.tryGrant(sessionId, a.want, a.waiting);
      if (now) return now;
    } else if (!a.waiting) return { granted: 0 };
    return new Promise((resolve) => {
      const timer = this.o.clock.setTimeout(() => this.expire(entry), RECLAIM_WAIT_MS);
      const entry: Waiting = { sessionId, want: a.want, resolve, timer };
      this.waiting.push(entry);
      this.reclaimHeld();
    });
  }

  /** A wrapper reports places used and gives back ones it will not use (asked to, or on its own). */
  report(sessionId: string, used: number, returned: number): void {
    this.used(sessionId, used);
    this.take(sessionId, returned);
    this.reclaiming.delete(sessionId);
    this.serveWaiting();
  }

  /** The session ended: what it still held is counted as forwarded (it may have been; a clean close gave it back). */
  closed(sessionId: string): void {
    const held = this.outstanding.get(sessionId) ?? 0;
    this.used(sessionId, held);
    this.outstanding.delete(sessionId);
    this.reclaiming.delete(sessionId);
    for (const w of [...this.waiting]) if (w.sessionId === sessionId) this.answer(w, { granted: 0, refused: 'busy' });
    this.serveWaiting();
  }

  /**
   * E-Stop engaged: every waiting ask is refused and the windows start afresh (what ran before does not count
   * against what runs after release). Places handed out are forgotten: each wrapper drops its own as it applies
   * the E-Stop push, and refuses every call it had decided and not yet forwarded.
   */
  reset(): void {
    for (const w of [...this.waiting]) this.answer(w, { granted: 0, refused: 'estop' });
    this.outstanding.clear();
    this.outstandingTotal = 0;
    this.forwards = [];
    this.head = 0;
    this.reclaiming.clear();
  }

  /** What the windows hold now (for status and tests): forwarded and handed out. */
  totals(): { forwarded: number[]; outstanding: number } {
    return { forwarded: windowsOf(this.o.limits()).map((w) => this.countIn(w)), outstanding: this.outstandingTotal };
  }

  // ---- the ledger ----------------------------------------------------------------------------------------

  private tryGrant(sessionId: string, want: number, waiting: boolean): BudgetGrant | null {
    const limits = this.o.limits();
    if (!limits.on) {
      // off: whatever is asked, still on the books, so turning the tripwire on again counts what is still held
      const granted = Math.max(0, want);
      this.give(sessionId, granted);
      return { granted };
    }
    const windows = windowsOf(limits);
    this.prune(windows);
    let room = Infinity;
    for (const w of windows) room = Math.min(room, w.calls - this.countIn(w) - this.outstandingTotal);
    if (room >= 1) {
      // a share of what is left, so one busy session does not hold every place while others start
      const share = Math.max(1, Math.floor(Math.min(...windows.map((w) => w.calls)) / (4 * Math.max(1, this.o.sessions()))));
      const granted = Math.max(0, Math.min(want, room, share));
      if (granted > 0) this.give(sessionId, granted);
      return { granted };
    }
    if (!waiting) return { granted: 0 };
    // the windows are full of calls that ran: the waiting call is the one that would pass the limit
    for (const w of windows) {
      const ran = this.countIn(w);
      if (ran >= w.calls) {
        this.o.trip(`${ran + 1} changing calls in ${w.seconds} s`);
        return { granted: 0, refused: 'estop' };
      }
    }
    return null;
  }

  /** Places came back (or a report moved them into the windows): answer whoever waits, oldest first. */
  private serveWaiting(): void {
    while (this.waiting.length > 0) {
      const w = this.waiting[0]!;
      if (this.o.estop()) return this.answer(w, { granted: 0, refused: 'estop' });
      const grant = this.tryGrant(w.sessionId, w.want, true);
      if (!grant) return this.reclaimHeld();
      // (a trip answered every waiting ask already)
      if (this.waiting[0] === w) this.answer(w, grant);
    }
  }

  /** Ask every session that holds places (and was not asked since it last reported) to give them back. */
  private reclaimHeld(): void {
    for (const [holder, n] of this.outstanding) {
      if (n > 0 && !this.reclaiming.has(holder)) {
        this.reclaiming.add(holder);
        this.o.reclaim(holder);
      }
    }
  }

  private expire(w: Waiting): void {
    if (!this.waiting.includes(w)) return;
    this.answer(w, { granted: 0, refused: 'busy' });
    this.serveWaiting();
  }

  private answer(w: Waiting, grant: BudgetGrant): void {
    const i = this.waiting.indexOf(w);
    if (i === -1) return;
    this.waiting.splice(i, 1);
    this.o.clock.clearTimeout(w.timer);
    w.resolve(grant);
  }

  private give(sessionId: string, n: number): void {
    this.outstanding.set(sessionId, (this.outstanding.get(sessionId) ?? 0) + n);
    this.outstandingTotal += n;
  }

  /** Places leave the session's count (never below none). */
  private take(sessionId: string, n: number): number {
    const held = this.outstanding.get(sessionId) ?? 0;
    const taken = Math.min(held, Math.max(0, n));
    if (taken > 0) {
      this.outstanding.set(sessionId, held - taken);
      this.outstandingTotal -= taken;
    }
    return taken;
  }

  /** Forwards reported: counted now (never before they ran), whether or not a place was handed out for them. */
  private used(sessionId: string, n: number): void {
    if (!(n > 0)) return;
    this.take(sessionId, n);
    this.forwards.push([this.o.clock.now(), n]);
  }

  private countIn(w: TripwireWindow): number {
    const since = this.o.clock.now() - w.seconds * 1000;
    let n = 0;
    for (let i = this.forwards.length - 1; i >= this.head; i--) {
      const [at, k] = this.forwards[i]!;
      if (at <= since) break;
      n += k;
    }
    return n;
  }

  /** Forget forwards older than the longest window. */
  private prune(windows: readonly TripwireWindow[]): void {
    const since = this.o.clock.now() - Math.max(...windows.map((w) => w.seconds)) * 1000;
    while (this.head < this.forwards.length && this.forwards[this.head]![0] <= since) this.head++;
    if (this.head > 1024 && this.head * 2 > this.forwards.length) {
      this.forwards = this.forwards.slice(this.head);
      this.head = 0;
    }
  }
}
