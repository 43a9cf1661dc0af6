/**
 * The tripwire's limits, and its second line: the journal. The cap itself is the budget (tripwire-budget.ts):
 * a wrapper forwards a changing call only with a place the broker gave it, so no more than N run within M
 * seconds (nor more than the long window's), and the call that would pass the limit is held and E-Stop
 * engages. This counter watches the journal entries the wrappers send (a call is reported when it is forwarded
 * and again when it ends) and engages E-Stop too should more changing calls have run than any budget allowed
 * (a wrapper that forwarded without one). A call counts once, at the time it was forwarded, when it was
 * allowed and its class is not read-only-trusted: a read-only claim nobody vouched for, or one evidence
 * withdrew, counts; so does a class the entry does not name (fail closed). Pure: time comes from the clock.
 */
import { isObject } from '../jsonrpc/messages.js';
import { type SettingKey, settingOrFallback } from '../protocol/settings.js';
import type { Clock } from '../util/clock.js';

export interface TripwireWindow {
  /** More than this many changing calls within `seconds` engage E-Stop. */
  calls: number;
  seconds: number;
}

export interface TripwireLimits extends TripwireWindow {
  on: boolean;
  /** The long window: a slow loop that never stops. */
  long: TripwireWindow;
}

/** The tripwire's settings (`valueOf` gives the stored value), each out-of-range one at its default. */
export function tripwireLimits(valueOf: (key: SettingKey) => string | undefined): TripwireLimits {
  const read = (key: SettingKey) => settingOrFallback(key, valueOf(key));
  return {
    on: read('tripwire') === 'on',
    calls: Number(read('tripwire-calls')),
    seconds: Number(read('tripwire-seconds')),
    long: { calls: Number(read('tripwire-long-calls')), seconds: Number(read('tripwire-long-seconds')) },
  };
}

/** Both windows, short first. */
export function windowsOf(limits: TripwireLimits): TripwireWindow[] {
  return [{ calls: limits.calls, seconds: limits.seconds }, limits.long];
}

/** Does a call of this class change something, for the tripwire? Only a trusted read-only claim does not. */
export function countsAsChanging(toolClass: unknown): boolean {
  return toolClass !== 'read-only-trusted';
}

export class Tripwire {
  /** Calls counted in the longest window: session and call id -> when it was forwarded. */
  private readonly counted = new Map<string, number>();
  /** Calls forwarded up to this time are never counted: they ran before the tripwire last started afresh. */
  private floor = -Infinity;

  constructor(private readonly clock: Pick<Clock, 'now'>) {}

  /**
   * Count the changing calls in one session's batch of journal entries (unchecked: whatever the wrapper sent).
   * Returns why E-Stop must engage (`31 changing calls in 10 s`) once the count passes a limit, else null;
   * the count starts afresh after it tripped (see `reset`).
   */
  observe(sessionId: string, entries: readonly unknown[], limits: TripwireLimits): string | null {
    if (!limits.on) return null;
    const now = this.clock.now();
    const windows = windowsOf(limits);
    const span = Math.max(...windows.map((w) => w.seconds)) * 1000;
    const from = Math.max(now - span, this.floor);
    for (const e of entries) {
      if (!isObject(e) || e.decision !== 'allow' || typeof e.id !== 'string') continue;
      const at = e.forwardedAt;
      if (typeof at !== 'number' || !Number.isFinite(at)) continue;
      if (!countsAsChanging(e.class)) continue;
      // a wrapper whose clock runs ahead does not keep a call in the window longer
      const t = Math.min(at, now);
      // forwarded before the window (a batch held while the broker was away, sent after a reconnect)
      if (t <= from) continue;
      const key = `${sessionId}\u0000${e.id}`;
      if (!this.counted.has(key)) this.counted.set(key, t);
    }
    // oldest first (near enough: entries arrive in the order the calls ran); what is left older than the span
    // is never counted below, and goes once it reaches the front
    for (const [key, t] of this.counted) {
      if (t > from) break;
      this.counted.delete(key);
    }
    for (const w of windows) {
      // fewer calls kept than the limit: this window cannot be past it (no need to count, on every batch)
      if (this.counted.size <= w.calls) continue;
      const since = Math.max(now - w.seconds * 1000, this.floor);
      let n = 0;
      for (const t of this.counted.values()) if (t > since) n++;
      if (n <= w.calls) continue;
      this.reset();
      return `${n} changing calls in ${w.seconds} s`;
    }
    return null;
  }

  /**
   * Start afresh (E-Stop engaged): what ran before does not count against what runs after, even when its entry
   * (the call's end) arrives later.
   */
  reset(): void {
    this.counted.clear();
    this.floor = this.clock.now();
  }
}
