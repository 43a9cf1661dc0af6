/**
 * The wrapper's share of the tripwire (broker/tripwire-budget.ts): places for changing calls the broker handed
 * it. A changing call about to be forwarded takes one, a counter decrement in the same tick; with none left it
 * waits, held before the server, for the broker's answer to the ask this makes (one at a time), and is refused
 * when the broker says E-Stop (the tripwire engaged), cannot be asked, or gives none in time. Never forwarded
 * on credit. Uses are reported soon after, so the broker counts what ran; places not used go back when the
 * broker asks for them, when E-Stop engages or the link is lost (dropped here: the broker forgot them too),
 * and when the wrapper closes.
 */
import type { EventEmitter } from 'node:events';
import type { Clock, Timer } from '../util/clock.js';
import type { Denial } from './denial.js';

export interface BudgetGrant {
  granted: number;
  refused?: 'estop' | 'busy';
}

/**
 * What the budget needs of the broker link. Its events: `policy` (a push), `budget-reclaim` (the broker wants
 * unused places back), `lost` (the connection is gone: its places with it), `closing` (give them back now).
 */
export interface BudgetLink extends Pick<EventEmitter, 'on'> {
  budget(ask: { used: number; want: number; waiting: boolean }): Promise<BudgetGrant>;
  budgetReport(used: number, returned: number): void;
}

/** A call waiting for a place. */
export interface BudgetWaiter {
  /** Is it still waiting (not ended by something else meanwhile)? */
  live(): boolean;
  /** It has its place: forward it. False when it turned out it could not be sent (the place is kept). */
  go(): boolean;
  refuse(denial: Denial): void;
}

/** How long a use may wait to share a report: what the broker's window lags behind the server, at most. */
const REPORT_DELAY_MS = 20;
/** How many places to ask for beyond the calls waiting (the broker gives a share, never more than is left). */
const STOCK = 16;

const ESTOP: Denial = { decidedBy: 'estop', reason: 'E-Stop is on: every tool call is refused (the tripwire engaged before this call was sent)' };
const BUSY: Denial = {
  decidedBy: 'error',
  reason: `Airlock's tripwire could not give this call a place in time (other sessions hold them); it was not sent, try again`,
};
const DOWN: Denial = { decidedBy: 'broker-down', reason: `Airlock is not running, so the tripwire cannot count this call; it was not sent` };

export class CallBudget {
  private held = 0;
  private unreported = 0;
  private asking = false;
  /** Bumped when held places are void (E-Stop, link lost): an answer to an ask made before does not count. */
  private epoch = 0;
  private queue: BudgetWaiter[] = [];
  private reportTimer: Timer | undefined;
  private lastAskWaited = false;

  constructor(
    private readonly link: BudgetLink,
    private readonly clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>,
  ) {
    link.on('policy', (p: { estop: boolean; tripwire?: boolean } | null) => this.policyChanged(p));
    link.on('lost', () => this.policyChanged(null));
    link.on('budget-reclaim', () => this.report(this.held, true));
    link.on('closing', () => this.report(this.held, true));
  }

  /** Places held now (for tests and status). */
  get places(): number {
    return this.held;
  }

  /**
   * A changing call is about to be forwarded. True: it took a place, forward it now. False: it waits, and is
   * sent (`go`) or refused later.
   */
  admit(w: BudgetWaiter): boolean {
    if (this.queue.length === 0 && this.held > 0) {
      this.held--;
      this.spent();
      return true;
    }
    this.queue.push(w);
    this.ask();
    return false;
  }

  /** Calls already forwarded without a place (read-only, until evidence withdrew the claim) count as used. */
  charge(n: number): void {
    if (!(n > 0)) return;
    this.unreported += n;
    if (!this.reportTimer) this.reportTimer = this.clock.setTimeout(() => this.report(0), REPORT_DELAY_MS);
  }

  /** A policy push: E-Stop or the link gone voids the places held (the broker forgot them). */
  private policyChanged(policy: { estop: boolean; tripwire?: boolean | undefined } | null): void {
    if (policy && !policy.estop) {
      // a wrapper stocks up as the tripwire starts, so its first call need not wait
      if (policy.tripwire === true && this.held === 0 && !this.asking) this.ask();
      return;
    }
    this.epoch++;
    this.held = 0;
    // the broker started its windows afresh (E-Stop) or closed the session (it counted what was handed out):
    // what ran before is not reported into the new ones
    this.unreported = 0;
    this.clock.clearTimeout(this.reportTimer);
    this.reportTimer = undefined;
    const denial = policy ? ESTOP : DOWN;
    for (const w of this.queue.splice(0)) if (w.live()) w.refuse(denial);
  }

  private spent(): void {
    this.unreported++;
    if (this.held === 0 && !this.asking) this.ask();
    if (!this.reportTimer) this.reportTimer = this.clock.setTimeout(() => this.report(0), REPORT_DELAY_MS);
  }

  /** Tell the broker what was used, giving back `returned` of the places held (always, when `always`: it asked). */
  private report(returned: number, always = false): void {
    this.clock.clearTimeout(this.reportTimer);
    this.reportTimer = undefined;
    this.held -= returned;
    if (this.unreported === 0 && returned === 0 && !always) return;
    const used = this.unreported;
    this.unreported = 0;
    this.link.budgetReport(used, returned);
  }

  /** Ask for places (one ask at a time); what waits gets them in order as they come. */
  private ask(): void {
    if (this.asking) return;
    this.asking = true;
    const epoch = this.epoch;
    const used = this.unreported;
    this.unreported = 0;
    this.clock.clearTimeout(this.reportTimer);
    this.reportTimer = undefined;
    const waiting = this.queue.length > 0;
    this.lastAskWaited = waiting;
    let answer: Promise<BudgetGrant>;
    try {
      answer = this.link.budget({ used, want: Math.min(10_000, this.queue.length + STOCK), waiting });
    } catch (err) {
      answer = Promise.reject(err as Error);
    }
    answer.then(
      (g) => this.granted(epoch, g),
      () => this.failed(epoch),
    );
  }

  private granted(epoch: number, g: BudgetGrant): void {
    this.asking = false;
    if (epoch !== this.epoch) {
      // places given before E-Stop or a lost link: void; what waits now asks afresh
      if (this.queue.length > 0) this.ask();
      return;
    }
    const n = Number.isSafeInteger(g.granted) && g.granted > 0 ? g.granted : 0;
    this.held += n;
    this.drain();
    if (this.queue.length === 0) return;
    if (n === 0 && g.refused === undefined && !this.lastAskWaited) {
      // stocking up found no room, and calls came meanwhile: ask again, for them (the broker holds or trips)
      return this.ask();
    }
    if (n === 0) {
      const denial = g.refused === 'busy' ? BUSY : ESTOP;
      for (const w of this.queue.splice(0)) if (w.live()) w.refuse(denial);
      return;
    }
    this.ask();
  }

  private failed(epoch: number): void {
    this.asking = false;
    if (epoch === this.epoch) this.held = 0;
    for (const w of this.queue.splice(0)) if (w.live()) w.refuse(DOWN);
  }

  /** Hand the places held to the calls waiting, oldest first. */
  private drain(): void {
    while (this.held > 0 && this.queue.length > 0) {
      const w = this.queue.shift()!;
      if (!w.live()) continue;
      this.held--;
      if (w.go()) this.spent();
      else this.held++;
    }
  }
}
