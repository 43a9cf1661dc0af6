/**
 * The client's own tools/list requests the server has not answered yet. Each is evidence in flight: while one is
 * out, the wrapper's catalog is not ready, so a call pipelined right behind it is decided on what its answer says
 * (tool-listing.ts). One the server leaves unanswered past its timeout stops counting, and a client that
 * pipelines more than MAX_CLIENT_LISTINGS is not waited on for the rest: a silent or flooding server cannot hold
 * calls back for ever.
 */
import type { Clock } from '../util/clock.js';

/** Client listings tracked at once. */
const MAX_CLIENT_LISTINGS = 64;

export class ClientListings {
  /** Request key -> when it was sent. */
  private readonly out = new Map<string, number>();
  /** What waits for none to be out (`whenNoneOut`). */
  private after: (() => void)[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly timeoutMs: number,
    /** A listing's timeout passed (whoever waits on the catalog may go on): run before `settle`. */
    private readonly lapsed: () => void,
  ) {}

  /** The client asked the server for its tools (request key). */
  sent(key: string): void {
    if (this.out.size >= MAX_CLIENT_LISTINGS) return;
    this.out.set(key, this.clock.now());
    // any listing past its timeout lapses here (not only this one)
    this.clock.setTimeout(() => {
      this.lapsed();
      this.settle();
    }, this.timeoutMs);
  }

  /** Is one unanswered and within its timeout? (those past it are dropped here) */
  anyOut(): boolean {
    if (this.out.size === 0) return false;
    const now = this.clock.now();
    for (const [key, at] of this.out) if (now - at >= this.timeoutMs) this.out.delete(key);
    return this.out.size > 0;
  }

  /** Run `fn` once none is out (at once when none is). */
  whenNoneOut(fn: () => void): void {
    if (this.anyOut()) this.after.push(fn);
    else fn();
  }

  /** The listing was answered, failed or was cancelled; false when it was not tracked. `settle` follows. */
  forget(key: string): boolean {
    return this.out.delete(key);
  }

  /** Forget every one (the server is gone); `settle` follows. */
  clear(): void {
    this.out.clear();
  }

  /** When none is out, run what waits for that. */
  settle(): void {
    if (this.anyOut()) return;
    const waiting = this.after;
    this.after = [];
    for (const fn of waiting) fn();
  }
}
