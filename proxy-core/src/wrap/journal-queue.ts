/**
 * The wrapper's journal entries on their way to the broker: held in memory (latest state by id) until the
 * broker acknowledges them, and spilled to disk (spill-file.ts) whenever the broker cannot take them, so that
 * the record of a call which reached its server survives the broker's death, the wrapper's exit, and a long
 * downtime. Memory is bounded by refusing to keep refused calls, never executed ones: past `maxHeld`, the
 * oldest entry of a call that never reached its server goes first (counted), then entries already safe on disk
 * (not lost: the spill file has them). What cannot be kept at all is counted and reported to the broker.
 */
import type { CallRecord } from '../protocol/api.js';
import { readSpillFile, SpillFile } from '../ipc/spill-file.js';

/** How long an entry may wait to share a spill batch (one write, one fsync) while the broker is down. */
const SPILL_DELAY_MS = 20;
/** How soon a spill the disk refused is tried again (memory holds the entries meanwhile). */
const SPILL_RETRY_MS = 1000;

interface Held {
  /** The record, once built (see `entryOf`). */
  entry: CallRecord | undefined;
  /** What builds it, until it is built: the latest state of a call still open. */
  build: (() => CallRecord) | undefined;
  rev: number;
  /** The revision last written to the spill (0: never). */
  spilled: number;
}

/** Records the wrapper could not keep, by whether their call reached the server. */
export interface JournalLost {
  notRun: number;
  executed: number;
}

/**
 * How many entries memory holds at most: 50,000 unless AIRLOCK_JOURNAL_MEMORY_ENTRIES says otherwise (100 to
 * 1,000,000). Lowering it only makes refused calls' entries counted rather than kept sooner; executed calls'
 * are never dropped for it.
 */
export function maxHeld(text: string | undefined): number {
  const n = Number(text);
  return text !== undefined && Number.isInteger(n) && n >= 100 && n <= 1_000_000 ? n : 50_000;
}

/** Outcomes after which a call's entry may still change (a cancelled call's server may answer after all). */
const OPEN_OUTCOMES: ReadonlySet<string> = new Set(['pending', 'cancelled']);

/** An entry as the next batch carries it: `wire` is what goes to the broker. */
export interface Batched {
  entry: CallRecord;
  rev: number;
  wire: unknown;
}

/** A call whose record says it was sent to its server. */
export const executed = (e: CallRecord): boolean => e.forwardedAt !== undefined;

export class JournalQueue {
  /** A new Map once the broker has acknowledged all of them (see `acked`). */
  private held = new Map<string, Held>();
  private revCounter = 0;
  private lostNow: JournalLost = { notRun: 0, executed: 0 };
  private readonly spill: SpillFile;
  private spillFailing = false;
  private spillTimer: NodeJS.Timeout | null = null;
  /** The broker's id for this wrapper's session, written with spilled entries (for a broker that picks them up). */
  sessionId: string | undefined;
  /**
   * Calls of which the broker acknowledged a copy while more may come: it has their arguments (what was called
   * is always the first copy's), so later copies go without them and a call's arguments travel once. Pruned
   * when a final copy is acknowledged; forgotten on every new connection (the broker there is not taken to
   * have them). The spill always keeps whole entries.
   */
  private known = new Set<string>();

  constructor(
    dataDir: string,
    private readonly maxHeld: number,
    private readonly log: (msg: string) => void,
  ) {
    this.spill = new SpillFile(dataDir);
  }

  get size(): number {
    return this.held.size;
  }

  /** A new connection to the broker (its session id): no copy is taken as known there yet. */
  connected(sessionId: string | undefined): void {
    this.sessionId = sessionId;
    if (this.known.size > 0) this.known = new Set();
  }

  /** Spill files waiting to be replayed. */
  get spillFiles(): number {
    return this.spill.pending;
  }

  add(entry: CallRecord): void {
    this.held.set(entry.id, { entry, build: undefined, rev: ++this.revCounter, spilled: 0 });
    if (this.held.size > this.maxHeld) this.evictOne();
  }

  /**
   * Hold the entry `build` makes, built only when a batch or the spill takes it (or memory is full): held from
   * now on exactly as `add` holds it, only its record is made later, at the state its call has then.
   */
  addLater(id: string, build: () => CallRecord): void {
    this.held.set(id, { entry: undefined, build, rev: ++this.revCounter, spilled: 0 });
    if (this.held.size > this.maxHeld) this.evictOne();
  }

  /** The oldest `max` entries, as they stand (pass them back to `acked` once the broker has them). */
  batch(max: number): Batched[] {
    const out: Batched[] = [];
    const known = this.known;
    for (const h of this.held.values()) {
      const entry = entryOf(h);
      out.push({ entry, rev: h.rev, wire: known.size > 0 && known.has(entry.id) ? withoutArguments(entry) : entry });
      if (out.length >= max) break;
    }
    return out;
  }

  acked(batch: readonly { entry: CallRecord; rev: number }[]): void {
    for (const b of batch) {
      const id = b.entry.id;
      const now = this.held.get(id);
      if (now && now.rev === b.rev) this.held.delete(id);
      if (OPEN_OUTCOMES.has(b.entry.outcome)) this.known.add(id);
      else if (this.known.size > 0) this.known.delete(id);
    }
    if (this.known.size === 0 && this.held.size === 0) this.known = new Set();
    // A Map whose table V8 has moved to the old generation (it lived through two scavenges, say while the
    // wrapper was idle) gets every later table there too, and each table it leaves behind still points at
    // the entries it held: from then on every journal entry outlives the young generation, which V8 grows
    // in answer (megabytes of RSS over a few thousand calls, not a leak). An emptied Map starts young again.
    if (this.held.size === 0) this.held = new Map();
  }

  /**
   * Write to disk what is not there yet at its latest state: the entries of executed calls, or (`all`, the
   * wrapper is leaving) every entry. One write and one fsync. False when the disk refused (entries stay held).
   */
  spillHeld(all = false): boolean {
    const todo: Held[] = [];
    for (const h of this.held.values()) if (h.spilled !== h.rev && (all || executed(entryOf(h)))) todo.push(h);
    if (todo.length === 0) return true;
    try {
      this.spill.append(todo.map((h) => (this.sessionId !== undefined ? { ...entryOf(h), sessionId: this.sessionId } : entryOf(h))));
    } catch (err) {
      if (!this.spillFailing) this.log(`airlock: could not write the journal spill in the data dir (${(err as Error).message}); ${todo.length} journal entries are held in memory only`);
      this.spillFailing = true;
      return false;
    }
    this.spillFailing = false;
    for (const h of todo) h.spilled = h.rev;
    return true;
  }

  /** Spill executed calls' entries shortly, with whatever else arrives meanwhile; retried while the disk refuses. */
  spillSoon(delayMs = SPILL_DELAY_MS): void {
    if (this.spillTimer) return;
    this.spillTimer = setTimeout(() => {
      this.spillTimer = null;
      if (!this.spillHeld()) this.spillSoon(SPILL_RETRY_MS);
    }, delayMs);
    this.spillTimer.unref();
  }

  /** Files to replay now, oldest first; nothing more is written to them (see SpillFile.rotate). */
  replayFiles(): string[] {
    return this.spill.rotate();
  }

  /** The entries in a spill file of this wrapper; lines that cannot be read count as lost. */
  readFile(path: string): CallRecord[] {
    try {
      const { entries, unreadable } = readSpillFile(path);
      this.lostNow.executed += unreadable;
      return entries as unknown as CallRecord[];
    } catch (err) {
      this.log(`airlock: could not read the journal spill ${path}: ${(err as Error).message}`);
      return [];
    }
  }

  fileDone(path: string): void {
    this.spill.done(path);
  }

  get hasLost(): boolean {
    return this.lostNow.notRun > 0 || this.lostNow.executed > 0;
  }

  /** What was lost since the last call, for the broker; null when nothing was. */
  takeLost(): JournalLost | null {
    const l = this.lostNow;
    if (l.notRun === 0 && l.executed === 0) return null;
    this.lostNow = { notRun: 0, executed: 0 };
    return l;
  }

  /** A report the broker did not take: counted again. */
  returnLost(l: JournalLost): void {
    this.lostNow.notRun += l.notRun;
    this.lostNow.executed += l.executed;
  }

  /**
   * The wrapper is leaving: everything still held goes to the spill (a broker picks it up once this process is
   * gone). Returns what could not be kept, for the wrapper's last words on stderr.
   */
  leave(): JournalLost {
    if (this.spillTimer) clearTimeout(this.spillTimer);
    this.spillTimer = null;
    if (this.held.size > 0 && !this.spillHeld(true)) {
      for (const h of this.held.values()) {
        if (h.spilled === h.rev) continue;
        if (executed(entryOf(h))) this.lostNow.executed++;
        else this.lostNow.notRun++;
      }
    }
    this.spill.close();
    return this.lostNow;
  }

  private evictOne(): void {
    let safe: string | undefined;
    for (const [id, h] of this.held) {
      if (!executed(entryOf(h))) {
        this.held.delete(id);
        this.lostNow.notRun++;
        return;
      }
      if (safe === undefined && h.spilled === h.rev) safe = id;
    }
    // only executed calls are held: one already on disk leaves memory (the replay sends it); none is dropped
    if (safe !== undefined) this.held.delete(safe);
  }
}

/** A held entry's record, built now if it was not yet (then its builder, and what it holds, is let go). */
function entryOf(h: Held): CallRecord {
  if (h.entry === undefined) {
    h.entry = h.build!();
    h.build = undefined;
  }
  return h.entry;
}

/** A later copy of an entry, without the arguments the broker already has (it keeps the first copy's). */
function withoutArguments(entry: CallRecord): Omit<CallRecord, 'arguments'> {
  const { arguments: _, ...rest } = entry;
  return rest;
}
