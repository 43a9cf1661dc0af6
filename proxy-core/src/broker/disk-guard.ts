/**
 * What the broker does when its disk says no (full, out of quota, failing): it keeps running. A write that the
 * disk refused marks the disk as full; what must not be forgotten (E-Stop, events) is kept in memory and
 * written, in order, once a write succeeds again (tried every second). While the disk is full every wrapper is
 * told to refuse calls (they could not be journaled: fail closed), and `status` says so.
 *
 * Only disk errors are handled here: anything else is a bug or bad input and is thrown on as before.
 */
import { isDiskError } from './db/files.js';


/** An event that could not be stored, kept to be stored (with the time it happened) once the disk allows. */
export interface UnsavedEvent {
  at: number;
  type: string;
  server: string | null;
  tool: string | null;
  detail: unknown;
}

/** Held in memory at most; beyond, the oldest is counted and forgotten (never E-Stop: that is kept apart). */
const MAX_UNSAVED_EVENTS = 2000;
const RETRY_MS = 1000;

export interface DiskFull {
  since: number;
  error: string;
}

export interface DiskGuardOptions {
  now: () => number;
  /** The disk became full (true) or writable again (false): tell the wrappers. */
  changed: (full: boolean) => void;
  /** Store the kept events, oldest first (throws when the disk still refuses). */
  saveEvents: (events: UnsavedEvent[]) => void;
  /** A small real write, to find out whether the disk takes writes again. */
  probe: () => void;
}

export class DiskGuard {
  full: DiskFull | null = null;
  /** Writes to do again once the disk allows, by what they set (a later one replaces an earlier). */
  private readonly pending = new Map<string, () => void>();
  private unsaved: UnsavedEvent[] = [];
  /** Events forgotten because too many waited. */
  eventsDropped = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly o: DiskGuardOptions) {}

  /**
   * Run a write. A disk error marks the disk full and returns false; with `key`, the write is kept and done
   * again (the latest one for that key) when the disk allows. Any other error is thrown on.
   */
  write(fn: () => void, key?: string): boolean {
    if (key !== undefined && this.pending.size > 0 && this.pending.has(key)) this.pending.delete(key);
    try {
      fn();
      return true;
    } catch (err) {
      if (!this.failed(err)) throw err;
      if (key !== undefined) this.pending.set(key, fn);
      return false;
    }
  }

  /** Keep an event the disk refused. */
  keepEvent(e: UnsavedEvent): void {
    this.unsaved.push(e);
    if (this.unsaved.length > MAX_UNSAVED_EVENTS) {
      this.unsaved.shift();
      this.eventsDropped++;
    }
  }

  /** Is `err` a disk error? Then the disk is marked full (the wrappers are told once). */
  failed(err: unknown): boolean {
    if (!isDiskError(err)) return false;
    if (!this.full) {
      this.full = { since: this.o.now(), error: err instanceof Error ? err.message : String(err) };
      this.o.changed(true);
    }
    this.schedule();
    return true;
  }

  /** Try the kept writes now; true when the disk took all of them (and is no longer marked full). */
  retry(): boolean {
    try {
      for (const [key, fn] of [...this.pending]) {
        fn();
        this.pending.delete(key);
      }
      if (this.unsaved.length > 0) {
        this.o.saveEvents(this.unsaved);
        this.unsaved = [];
      }
      this.o.probe();
    } catch (err) {
      if (!isDiskError(err)) throw err;
      this.schedule();
      return false;
    }
    if (this.full) {
      this.full = null;
      this.o.changed(false);
    }
    return true;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      try {
        this.retry();
      } catch {
        // not a disk error: left for the next write to report; the disk stays marked full until one succeeds
        this.schedule();
      }
    }, RETRY_MS);
    this.timer.unref();
  }
}
