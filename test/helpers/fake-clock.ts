/** A clock whose time moves only when a test says so: timers fire in order, synchronously, on advance(). */
import type { Clock, Timer } from '../../proxy-core/src/util/clock.js';

interface Pending {
  at: number;
  fn: () => void;
  id: number;
}

export class FakeClock implements Clock {
  private t = 1_700_000_000_000;
  private timers: Pending[] = [];
  private counter = 0;
  /** Unset: work meant for after the tick's writes runs at once (a test may set it to hold that work). */
  afterWrites?: (fn: () => void) => void;

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const p = { at: this.t + ms, fn, id: ++this.counter };
    this.timers.push(p);
    return p as unknown as Timer;
  }

  clearTimeout(timer: Timer | undefined): void {
    this.timers = this.timers.filter((p) => p !== (timer as unknown));
  }

  /** Move time forward, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const until = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.at > until) break;
      this.timers.shift();
      this.t = next.at;
      next.fn();
    }
    this.t = until;
  }
}
