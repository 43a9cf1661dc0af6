/**
 * The wrapper's journal entries on their way to the broker: held until the broker acknowledges them, and spilled
 * to disk (spill-file.ts) whenever the broker cannot take them, so that the record of a call which reached its
 * server survives the broker's death, the wrapper's exit, and a long downtime.
 *
 * An entry is written as JSON text once, when it is final (or, for a call still open, when a batch or the spill
 * takes it), into a segment: a buffer of up to MAX_SEGMENT entries (or about MAX_SEGMENT_BYTES), which goes to the
 * broker as one batch just as it is and is let go once acknowledged. Nothing of a call is kept as objects while
 * it waits: a wrapper that held its records as objects for the acknowledgement's few milliseconds had them copied
 * by every scavenge and promoted to the old generation, which grew the process by a third over 60,000 calls and
 * cost a fifth of its CPU per call. A later copy of a call that is still in a segment is written after it: the
 * broker merges copies forward, so the later one wins.
 *
 * Memory is bounded by refusing to keep refused calls, never executed ones: past `maxHeld`, a new entry of a call
 * that never reached its server is counted rather than kept, and segments already safe on disk leave memory (the
 * spill file has them). What cannot be kept at all is counted and reported to the broker.
 */
import type { CallRecord } from '../protocol/api.js';
import { readSpillFile, SpillFile } from '../ipc/spill-file.js';
import type { JournalEntry } from './journal-entry.js';
import { Segment } from './journal-segment.js';

export { MAX_SEGMENT, MAX_SEGMENT_BYTES } from './journal-segment.js';

/** How long an entry may wait to share a spill batch (one write, one fsync) while the broker is down. */
const SPILL_DELAY_MS = 20;
/** How soon a spill the disk refused is tried again (memory holds the entries meanwhile). */
const SPILL_RETRY_MS = 1000;
/**
 * How long a call still open waits before a batch takes its entry: a call answered sooner sends one entry, its
 * final one (a pipelined call is answered within a millisecond or two), instead of a pending copy and then that.
 */
export const OPEN_DELAY_MS = 10;
/** A segment's buffer to start with; it grows as entries need, and one is kept for the next segment. */
const SEGMENT_BYTES = 64 * 1024;
/** A buffer past this size is not kept for the next segment (a batch of big results is let go). */
const KEEP_BYTES = 1024 * 1024;

/** An entry's flags in its segment. */
const EXECUTED = 1;
const SPILLED = 2;

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

/** A call still open: what writes its entry, and since when it waits. */
interface Open {
  build: () => JournalEntry;
  since: number;
}

export class JournalQueue {
  /** Oldest first; entries are written to the last, the others wait for (or are out for) acknowledgement. */
  private segments: Segment[] = [];
  /** Calls still open whose entry is written only when a batch or the spill takes it (see `addLater`), oldest first. */
  private open = new Map<string, Open>();
  /** An acknowledged segment to write the next one in (its buffer and tables are used again). */
  private spare: Segment | null = null;
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
  /** Calls with a copy held whose outcome may still change (not acknowledged yet). */
  private readonly openHeld = new Set<string>();
  private held = 0;

  constructor(
    dataDir: string,
    private readonly maxHeld: number,
    private readonly log: (msg: string) => void,
  ) {
    this.spill = new SpillFile(dataDir);
  }

  /** Entries held (written, or open and not written yet). */
  get size(): number {
    return this.held + this.open.size;
  }

  /** A new connection to the broker (its session id): no copy is known there yet, so what is not sent goes whole. */
  connected(sessionId: string | undefined): void {
    this.sessionId = sessionId;
    if (this.known.size > 0) this.known = new Set();
    for (const s of this.segments) s.strip.length = 0;
  }

  /** Spill files waiting to be replayed. */
  get spillFiles(): number {
    return this.spill.pending;
  }

  add(entry: JournalEntry): void {
    // the entry of a call still open, not written yet, is this one now
    if (this.open.size > 0) this.open.delete(entry.id);
    this.write(entry);
  }

  /**
   * Hold the entry `build` makes, written only when a batch or the spill takes it (or memory is full): held from
   * now on exactly as `add` holds it, only its record is made later, at the state its call has then; an `add`
   * for the call before that replaces it.
   */
  addLater(id: string, build: () => JournalEntry): void {
    const was = this.open.get(id);
    if (was) was.build = build;
    else this.open.set(id, { build, since: performance.now() });
    if (this.size > this.maxHeld) this.writeOpen();
  }

  /**
   * The oldest segment, as a batch (at most MAX_SEGMENT entries): calls open for OPEN_DELAY_MS are written first.
   * Pass it back to `acked` once the broker has it; until then it stays held (and is offered again).
   */
  batch(): Segment | undefined {
    if (this.open.size > 0) this.writeOpen(performance.now() - OPEN_DELAY_MS);
    const first = this.segments[0];
    if (!first || first.count === 0) return undefined;
    // the segment being written to goes: what comes next starts another
    if (first === this.segments[this.segments.length - 1]) this.segments.push(this.newSegment());
    return first;
  }

  acked(segment: Segment): void {
    const i = this.segments.indexOf(segment);
    if (i === -1) return;
    this.segments.splice(i, 1);
    this.held -= segment.count;
    for (const id of segment.openIds) {
      this.known.add(id);
      this.openHeld.delete(id);
    }
    for (const id of segment.finalIds) this.known.delete(id);
    if (segment.buf.length <= KEEP_BYTES) this.spare = segment;
  }

  /**
   * Write to disk what is not there yet: the entries of executed calls, or (`all`, the wrapper is leaving) every
   * entry. One write and one fsync. False when the disk refused (entries stay held).
   */
  spillHeld(all = false): boolean {
    if (this.open.size > 0) this.writeOpen();
    const parts: Buffer[] = [];
    const taken: [Segment, number][] = [];
    // the session rides along in each line, for a broker that picks the file up (the entry itself has none)
    const session = this.sessionId !== undefined ? Buffer.from(`{"sessionId":${JSON.stringify(this.sessionId)},`) : null;
    const nl = Buffer.from('\n');
    for (const s of this.segments) {
      for (let i = 0; i < s.count; i++) {
        const f = s.flags[i]!;
        if (f & SPILLED || !(all || f & EXECUTED)) continue;
        const e = s.entry(i);
        if (session) parts.push(session, e.subarray(1), nl);
        else parts.push(e, nl);
        taken.push([s, i]);
      }
    }
    if (taken.length === 0) return true;
    try {
      this.spill.append(Buffer.concat(parts));
    } catch (err) {
      if (!this.spillFailing) this.log(`airlock: could not write the journal spill in the data dir (${(err as Error).message}); ${taken.length} journal entries are held in memory only`);
      this.spillFailing = true;
      return false;
    }
    this.spillFailing = false;
    for (const [s, i] of taken) s.flags[i]! |= SPILLED;
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
    if (this.size > 0 && !this.spillHeld(true)) {
      for (const s of this.segments) {
        for (let i = 0; i < s.count; i++) {
          const f = s.flags[i]!;
          if (f & SPILLED) continue;
          if (f & EXECUTED) this.lostNow.executed++;
          else this.lostNow.notRun++;
        }
      }
    }
    this.spill.close();
    return this.lostNow;
  }

  /** Write an entry into the newest segment (a new one once it is full), or count it when memory is full. */
  private write(entry: JournalEntry): void {
    const ran = entry.executed;
    if (this.held >= this.maxHeld && !this.makeRoom() && !ran) {
      this.lostNow.notRun++;
      return;
    }
    const id = entry.id;
    const known = this.known.size > 0 && this.known.has(id);
    let last = this.segments[this.segments.length - 1];
    if (!last || last.full) this.segments.push((last = this.newSegment()));
    last.write(entry.text, ran ? EXECUTED : 0, known);
    if (entry.open) {
      last.openIds.push(id);
      this.openHeld.add(id);
    } else if (known || (this.openHeld.size > 0 && this.openHeld.has(id))) {
      last.finalIds.push(id);
    }
    this.held++;
  }

  /** Entries written and waiting (not counting calls still open). */
  get written(): number {
    return this.held;
  }

  /** How long until the oldest call still open is due in a batch (0: now; undefined: none is open). */
  openDueIn(): number | undefined {
    for (const o of this.open.values()) return Math.max(0, o.since + OPEN_DELAY_MS - performance.now());
    return undefined;
  }

  /** Write the entries of calls open since `before` (all by default): a batch or the spill takes them, or memory is full. */
  private writeOpen(before = Infinity): void {
    for (const [id, o] of this.open) {
      if (o.since > before) break;
      this.open.delete(id);
      this.write(o.build());
    }
  }

  /**
   * Past the bound: segments whose executed entries are all on disk leave memory, oldest first (the replay sends
   * them; their refused calls' entries are counted). True when there is room now.
   */
  private makeRoom(): boolean {
    for (let k = 0; k < this.segments.length && this.held >= this.maxHeld; ) {
      const s = this.segments[k]!;
      let unsafe = false;
      let refused = 0;
      for (let i = 0; i < s.count; i++) {
        const f = s.flags[i]!;
        if (f & EXECUTED && !(f & SPILLED)) unsafe = true;
        else if (!(f & EXECUTED) && !(f & SPILLED)) refused++;
      }
      if (unsafe) {
        k++;
        continue;
      }
      this.segments.splice(k, 1);
      this.held -= s.count;
      this.lostNow.notRun += refused;
      for (const id of s.openIds) this.openHeld.delete(id);
    }
    return this.held < this.maxHeld;
  }

  private newSegment(): Segment {
    const spare = this.spare;
    this.spare = null;
    return spare ? spare.reuse() : new Segment(Buffer.allocUnsafe(SEGMENT_BYTES));
  }
}
