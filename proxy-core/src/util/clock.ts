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
};
