/**
 * Time as the wrapper sees it: the shared Clock (wall time for the journal, timers), plus an optional
 * monotonic counter for durations. Injected, so that the pipeline's waits (a held call answered before the
 * client gives up, progress, a listing that does not come) run in milliseconds in tests, with a clock the
 * test moves by hand.
 */
import { type Clock as BaseClock, systemClock as baseSystemClock, type Timer } from '../util/clock.js';

export type { Timer };

export interface Clock extends BaseClock {
  /** A monotonic ms counter for durations (wall time when a clock has none). */
  monotonic?(): number;
}

/** The real clock; its timers never keep the process alive by themselves (stdio does). */
export const systemClock: Clock = { ...baseSystemClock, monotonic: () => performance.now() };

export function monotonic(clock: Clock): number {
  return clock.monotonic ? clock.monotonic() : clock.now();
}

/** Run `fn` every `ms` until the returned function is called (re-armed timeouts: the Clock has no intervals). */
export function every(clock: Clock, ms: number, fn: () => void): () => void {
  let timer: Timer | undefined;
  let stopped = false;
  const arm = () => {
    timer = clock.setTimeout(() => {
      if (stopped) return;
      arm();
      fn();
    }, ms);
  };
  arm();
  return () => {
    stopped = true;
    clock.clearTimeout(timer);
  };
}
