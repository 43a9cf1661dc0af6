/**
 * Time as a dependency: the broker's and the wrapper's timers go through a Clock, so unit tests can run
 * races (an E-Stop during an approval, a ticket timing out mid-push) in milliseconds with a fake one.
 */
export interface Timer {
  unref?(): unknown;
}

export interface Clock {
  /** Wall-clock milliseconds (what the journal records). */
  now(): number;
  setTimeout(fn: () => void, ms: number): Timer;
  clearTimeout(timer: Timer | undefined): void;
  /** A monotonic ms counter for durations (wall time when a clock has none). */
  monotonic?(): number;
  /**
   * Run `fn` soon, in this tick: work that need not delay an answer. From an I/O callback it runs after the
   * writers' end-of-tick flush (Node runs queued nextTicks before microtasks); from within a microtask it may
   * run before that flush, which is only the order of old. A clock without it runs `fn` at once.
   */
  afterWrites?(fn: () => void): void;
}

/**
 * Work for after this tick's writes, run in one microtask: `queueMicrotask` makes an async resource for each
 * callback (a few hundred nanoseconds and a compiled frame more per call, on the wrapper's every answer). A
 * callback that throws is reported as `queueMicrotask` would report it, and the others still run.
 */
let afterTick: (() => void)[] = [];
function runAfterTick(): void {
  const fns = afterTick;
  afterTick = [];
  for (const fn of fns) {
    try {
      fn();
    } catch (err) {
      queueMicrotask(() => {
        throw err;
      });
    }
  }
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // a pending timer never keeps a process alive on its own: the broker's socket or the wrapper's stdio does
    t.unref();
    return t;
  },
  clearTimeout: (t) => {
    if (t) clearTimeout(t as NodeJS.Timeout);
  },
  monotonic: () => performance.now(),
  afterWrites: (fn) => {
    if (afterTick.push(fn) === 1) void Promise.resolve().then(runAfterTick);
  },
};

export function monotonic(clock: Clock): number {
  return clock.monotonic ? clock.monotonic() : clock.now();
}

/** Run `fn` every `ms` until the returned function is called (re-armed timeouts: a Clock has no intervals). */
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
