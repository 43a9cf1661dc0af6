/**
 * How long the journal and the event stream are kept, and pruning them without holding up calls: each
 * `prune` deletes at most a small batch, oldest first, in one short transaction, and says whether there is
 * more; the scheduler here runs batches back to back with the event loop free in between, then sleeps.
 *
 * Age applies to journal entries (by the call's start) and to events (by when they happened). Size applies to
 * the journal: the approximate bytes of its rows (the UTF-8 bytes of their arguments, result, detail and
 * reasons, plus a fixed 200 per row for the rest and the indexes: about what SQLite takes for them, measured
 * at 100,000 calls), a running total in `journal_stats` that writeJournal adds inserts to and triggers keep
 * across updates and deletes, so a check costs one row read. Events are kept no longer than the journal:
 * when the size cap prunes calls, events from before the newest call it pruned go too (the event stream
 * holds a summary of every call twice, so it would otherwise grow past the cap on its own). Tickets, rules, trust, settings, sessions, the catalog and withdrawn claims are
 * never pruned.
 */
import type Database from 'better-sqlite3';
import { SETTINGS, type SettingKey } from '../../protocol/settings.js';

export const DAY_MS = 24 * 60 * 60 * 1000;
export const MB = 1024 * 1024;

/** The defaults and the settings that override them, from the one settings table (protocol/settings.ts). */
export const RETENTION_DEFAULTS = { maxAgeDays: Number(SETTINGS['journal-days'].fallback), maxMegabytes: Number(SETTINGS['journal-mb'].fallback) } as const;
export const RETENTION_SETTINGS = { maxAgeDays: 'journal-days', maxMegabytes: 'journal-mb' } as const satisfies Record<string, SettingKey>;

/** Rows per prune call: about 3-6 ms of deleting at 100,000 calls (2,000 took 25-65 ms, too long a pause for the broker). */
export const PRUNE_BATCH = 500;

export interface RetentionPolicy {
  maxAgeMs: number;
  maxBytes: number;
}

export interface PruneOptions extends RetentionPolicy {
  now: number;
  /** The most rows deleted from each of the journal and the events per call. */
  batch?: number;
}

export interface PruneResult {
  journal: number;
  events: number;
  /** Nothing left to prune right now: the caller can sleep until its next tick. */
  done: boolean;
}

function positiveInt(text: string | undefined, max: number): number | undefined {
  if (text === undefined || !/^[0-9]{1,9}$/.test(text.trim())) return undefined;
  const n = Number(text.trim());
  return n >= 1 && n <= max ? n : undefined;
}

/** The retention in force: the settings when they hold a sensible number, the defaults otherwise. */
export function retentionPolicy(getSetting: (key: string) => string | undefined): RetentionPolicy {
  const days = positiveInt(getSetting(RETENTION_SETTINGS.maxAgeDays), 100 * 365) ?? RETENTION_DEFAULTS.maxAgeDays;
  const mb = positiveInt(getSetting(RETENTION_SETTINGS.maxMegabytes), 1024 * 1024) ?? RETENTION_DEFAULTS.maxMegabytes;
  return { maxAgeMs: days * DAY_MS, maxBytes: mb * MB };
}

/** What a journal row is counted beyond its texts (ids, names, numbers, index entries): the 200 of migration 3. */
export const JOURNAL_ROW_OVERHEAD = 200;

/** A row's approximate size, as writeJournal and the journal_stats triggers count it. */
const ROW_BYTES =
  '200 + COALESCE(octet_length(arguments), 0) + COALESCE(octet_length(result), 0) + COALESCE(octet_length(detail), 0) + COALESCE((SELECT octet_length(name) FROM names WHERE id = reasons), 0)';

/** The delete statements, prepared once per database. */
export class Pruner {
  private readonly s;
  private readonly run: (o: PruneOptions) => PruneResult;

  /**
   * `pruned`: rows of a log were deleted up to a seq (inside the prune's transaction): the low-water mark a gap
   * check reads (log-marks.ts).
   */
  constructor(
    db: Database.Database,
    private readonly pruned: (log: 'journal' | 'events', seq: number) => void = () => {},
  ) {
    this.s = {
      oldCalls: db.prepare('DELETE FROM journal_calls WHERE seq IN (SELECT seq FROM journal_calls WHERE started_at < ? ORDER BY started_at LIMIT ?) RETURNING seq').pluck(),
      stats: db.prepare('SELECT bytes, size_horizon FROM journal_stats WHERE id = 1').raw(),
      oldest: db.prepare(`SELECT seq, ${ROW_BYTES}, started_at FROM journal_calls ORDER BY seq LIMIT ?`).raw(),
      upTo: db.prepare('DELETE FROM journal_calls WHERE seq <= ?'),
      horizon: db.prepare('UPDATE journal_stats SET size_horizon = max(COALESCE(size_horizon, @h), @h) WHERE id = 1'),
      oldestEvents: db.prepare('SELECT seq, at FROM event_log ORDER BY seq LIMIT ?').raw(),
      eventsUpTo: db.prepare('DELETE FROM event_log WHERE seq <= ? AND at < ?'),
    };
    this.run = db.transaction((o: PruneOptions) => this.once(o));
  }

  prune(o: PruneOptions): PruneResult {
    if (!(o.maxAgeMs >= 0) || !(o.maxBytes >= 0) || !Number.isFinite(o.now)) throw new RangeError('prune needs maxAgeMs >= 0, maxBytes >= 0 and a finite now');
    return this.run(o);
  }

  journalBytes(): number {
    return Number((this.s.stats.get() as unknown[])[0]);
  }

  private once(o: PruneOptions): PruneResult {
    const batch = Math.max(1, Math.floor(o.batch ?? PRUNE_BATCH));
    // an infinite age keeps everything
    const cutoff = Number.isFinite(o.maxAgeMs) ? o.now - o.maxAgeMs : -Infinity;
    const aged = cutoff > -Infinity ? (this.s.oldCalls.all(cutoff, batch) as number[]) : [];
    let journal = aged.length;
    if (journal > 0) this.pruned('journal', aged.reduce((a, b) => Math.max(a, b)));
    let done = journal < batch;
    const [bytes, storedHorizon] = this.s.stats.get() as [number, number | null];
    let sizeHorizon = storedHorizon ?? -Infinity;
    const excess = bytes - o.maxBytes;
    if (done && excess > 0) {
      // oldest first, just enough rows to get under the cap (or the rest of this batch)
      const left = batch - journal;
      let freed = 0;
      let last: number | undefined;
      let horizon = -Infinity;
      const rows = this.s.oldest.all(left) as [number, number, number][];
      for (const [seq, n, startedAt] of rows) {
        freed += n;
        last = seq;
        if (startedAt > horizon) horizon = startedAt;
        if (freed >= excess) break;
      }
      if (last !== undefined) {
        journal += this.s.upTo.run(last).changes;
        this.pruned('journal', last);
        this.s.horizon.run({ h: horizon });
        sizeHorizon = Math.max(sizeHorizon, horizon);
      }
      // not under the cap yet: more batches to go (unless the journal is now empty)
      if (freed < excess && rows.length === left) done = false;
    }
    // events go with the journal: by age, and from before the calls the size cap already pruned
    const eventCutoff = Math.max(cutoff, sizeHorizon);
    let events = 0;
    if (eventCutoff > -Infinity) {
      // in seq order, which is time order but for clock steps: the old events among the oldest `batch` ones
      // go (one stamped in the future by a clock step waits for its time; the old ones around it still go)
      const window = this.s.oldestEvents.all(batch) as [number, number][];
      let last: number | undefined;
      for (const [seq, at] of window) if (at < eventCutoff) last = seq;
      if (last !== undefined) {
        events = this.s.eventsUpTo.run(last, eventCutoff).changes;
        this.pruned('events', last);
      }
      const newest = window[window.length - 1];
      if (window.length === batch && newest !== undefined && newest[1] < eventCutoff) done = false;
    }
    return { journal, events, done };
  }
}

export interface RetentionTimer {
  /** Prune now (and batch after batch until done) instead of at the next tick. */
  kick(): void;
  stop(): void;
}

export interface RetentionTimerOptions {
  /** Between rounds once a round is done. Default one minute. */
  intervalMs?: number;
  batch?: number;
  now?: () => number;
  /** A failed batch (disk full, say): reported, and tried again at the next tick. */
  onError?: (err: unknown) => void;
  /** Each batch's result, for a status line or a test. */
  onBatch?: (r: PruneResult) => void;
}

/**
 * Prune on a timer: a round runs batches back to back, each in its own macrotask (setImmediate), so calls and
 * journal writes that arrive meanwhile are served between batches; then it sleeps `intervalMs`. The timer
 * does not keep the process alive. `policy` is read each round, so a changed setting applies at the next.
 */
export function startRetention(
  target: { prune(o: PruneOptions): PruneResult },
  policy: () => RetentionPolicy,
  options: RetentionTimerOptions = {},
): RetentionTimer {
  const interval = options.intervalMs ?? 60_000;
  const now = options.now ?? Date.now;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;

  const schedule = (soon: boolean): void => {
    if (stopped) return;
    if (soon) immediate = setImmediate(step);
    else {
      timer = setTimeout(step, interval);
      timer.unref();
    }
  };
  const step = (): void => {
    timer = undefined;
    immediate = undefined;
    if (stopped) return;
    let more = false;
    try {
      const r = target.prune({ ...policy(), now: now(), ...(options.batch === undefined ? {} : { batch: options.batch }) });
      options.onBatch?.(r);
      more = !r.done;
    } catch (err) {
      options.onError?.(err);
    }
    schedule(more);
  };
  schedule(true);
  return {
    kick() {
      if (stopped || immediate) return;
      if (timer) clearTimeout(timer);
      timer = undefined;
      schedule(true);
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
    },
  };
}
