/**
 * The tripwire: E-Stop engages by itself when more than N changing calls run within M seconds, across all
 * sessions. It counts from the journal entries the wrappers send (a call is reported when it is forwarded and
 * again when it ends): a call counts once, at the time it was forwarded, when it was allowed and its class is
 * not read-only. Refused calls never ran and read-only ones change nothing, so neither counts; a class the
 * entry does not name counts (fail closed). Pure: time comes from the injected clock.
 */
import { isReadOnlyClass, type ToolClass } from '../classify/classify.js';
import { isObject } from '../jsonrpc/messages.js';
import { type SettingKey, settingOrFallback } from '../protocol/settings.js';
import type { Clock } from '../util/clock.js';

export interface TripwireLimits {
  on: boolean;
  /** More than this many changing calls within `seconds` engage E-Stop. */
  calls: number;
  seconds: number;
}

/** The tripwire's settings (`valueOf` gives the stored value), each out-of-range one at its default. */
export function tripwireLimits(valueOf: (key: SettingKey) => string | undefined): TripwireLimits {
  const read = (key: SettingKey) => settingOrFallback(key, valueOf(key));
  return { on: read('tripwire') === 'on', calls: Number(read('tripwire-calls')), seconds: Number(read('tripwire-seconds')) };
}

export class Tripwire {
  /** Calls counted in the window: session and call id -> when it was forwarded. */
  private readonly counted = new Map<string, number>();
  /** Calls forwarded up to this time are never counted: they ran before the tripwire last started afresh. */
  private floor = -Infinity;

  constructor(private readonly clock: Pick<Clock, 'now'>) {}

  /**
   * Count the changing calls in one session's batch of journal entries (unchecked: whatever the wrapper sent).
   * Returns why E-Stop must engage (`31 changing calls in 10 s`) once the count passes the limit, else null;
   * the count starts afresh after it tripped (see `reset`).
   */
  observe(sessionId: string, entries: readonly unknown[], limits: TripwireLimits): string | null {
    if (!limits.on) return null;
    const now = this.clock.now();
    const from = Math.max(now - limits.seconds * 1000, this.floor);
    for (const e of entries) {
      if (!isObject(e) || e.decision !== 'allow' || typeof e.id !== 'string') continue;
      const at = e.forwardedAt;
      if (typeof at !== 'number' || !Number.isFinite(at)) continue;
      if (typeof e.class === 'string' && isReadOnlyClass(e.class as ToolClass)) continue;
      // a wrapper whose clock runs ahead does not keep a call in the window longer
      const t = Math.min(at, now);
      // forwarded before the window (a batch held while the broker was away, sent after a reconnect)
      if (t <= from) continue;
      const key = `${sessionId}\u0000${e.id}`;
      if (!this.counted.has(key)) this.counted.set(key, t);
    }
    for (const [key, t] of this.counted) if (t <= from) this.counted.delete(key);
    if (this.counted.size <= limits.calls) return null;
    const n = this.counted.size;
    this.reset();
    return `${n} changing calls in ${limits.seconds} s`;
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
