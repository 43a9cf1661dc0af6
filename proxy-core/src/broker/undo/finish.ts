/**
 * After a call: what undo records once the journal has committed the call's end. A snapshotted call gets the
 * state it left its files in (what an undo checks the files against), the old files held by a link read now
 * and kept as snapshots; a call with a declared inverse gets its plan (inverse.ts), written in the transaction
 * that files the call (`filing`). An undo record is written only for a call the journal committed: the journal
 * writer hands the calls over after the commit. The one exception is a snapshotted call its wrapper says ended,
 * in its next prepare: its files are read then, since the next call may change them before the journal's batch
 * arrives (`ended`).
 *
 * The after-states are written to the record before anything waiting for them goes on (the wrapper's next call):
 * a broker stopped between that and the record's end (SIGKILL, a crash) finishes it at its next start
 * (`resume`), instead of reading after-states that the next call may have changed by then.
 */
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { StoredCallSummary } from '../../protocol/events.js';
import { UNDO_ID_PREFIX, type UndoContext } from './context.js';
import { driftSince, folderChainOrNone } from './dirs.js';
import { currentState, type FileState, type Held, HASH_LIMIT, heldAlone, readHeld, sameState, sha256, why } from './files.js';
import { type InverseRecordDeps, recordInverse } from './inverse.js';
import type { Inverses } from './inverses.js';
import { undoInfo } from './info.js';
import type { CallSnapshots } from './prepare.js';
import { afterStatesRecorded, type PathEntry, planBlobs, type SnapshotPlan, type UndoRecord } from './records.js';

/** Calls ended early (`ended`) whose journaled end is still awaited, at most. */
const MAX_ENDED_EARLY = 10_000;
/**
 * How long the old bytes of a replaced file wait to be read once the call's after-states are (see `finish`): the
 * wrapper's next call, right behind, is answered first.
 */
const KEEP_AFTER_MS = 2;

/** A call's end being recorded: `after` once its after-states are read, `done` once all of it is. */
interface Finishing {
  after: Promise<void>;
  done: Promise<void>;
}

export class CallEnds {
  /** After-states being read, by call: an undo of that call waits for all of it, the wrapper's next call for `after`. */
  private readonly finishing = new Map<string, Finishing>();
  /** Calls whose after-state was read when their wrapper said the server had answered (`ended`), before their end was journaled. */
  private readonly endedEarly = new Set<string>();

  constructor(
    private readonly ctx: UndoContext,
    private readonly snapshots: CallSnapshots,
    private readonly inverses: Inverses,
    private readonly inverseRecords: InverseRecordDeps,
  ) {}

  /**
   * Calls the journal committed (as it now holds them: the journal writer hands them over after the commit): a
   * snapshotted call that ended gets its after-state; a call with a declared inverse, its plan.
   */
  journaled(calls: readonly StoredCallSummary[]): void {
    for (const d of calls) {
      if (d.outcome === 'pending' || d.finishedAt === null) continue;
      if (this.endedEarly.delete(d.id)) {
        // its after-state was read before the wrapper's next call could change its files: it stands
        const reading = this.finishing.get(d.id);
        this.track(d.id, (afterRead) => {
          void reading?.after.then(afterRead);
          return this.settled(d.id).then(() => this.known(d));
        });
      } else if (this.snapshots.prepared.has(d.id)) {
        this.snapshots.prepared.delete(d.id);
        this.track(d.id, (afterRead) => this.finish(d.id, d.outcome, afterRead).then(() => this.known(d)));
      } else if (this.mayHaveInverse(d)) {
        // recorded as it was filed (`filing`), unless that failed short of the disk
        recordInverse(this.inverseRecords, d);
        this.known(d);
      }
    }
  }

  /**
   * Calls being filed, inside the journal's transaction (the Store's `filing` hook): a call with a declared inverse
   * gets its undo record there, so that a broker stopped right after the commit (SIGKILL, a crash) has it as well
   * (`journaled`, after the commit, then finds it written). A snapshotted call's record is older than its call.
   */
  filing(calls: readonly StoredCallSummary[]): void {
    for (const d of calls) if (this.mayHaveInverse(d)) recordInverse(this.inverseRecords, d, true);
  }

  /** A call that ended well, allowed, not an undo's own nor snapshotted, of a tool that may have a declared inverse. */
  private mayHaveInverse(d: StoredCallSummary): boolean {
    return (
      d.decision === 'allow' &&
      d.outcome === 'ok' &&
      d.finishedAt !== null &&
      !d.id.startsWith(UNDO_ID_PREFIX) &&
      !this.snapshots.prepared.has(d.id) &&
      !this.endedEarly.has(d.id) &&
      this.inverses.mayHave(d.server, d.tool)
    );
  }

  /**
   * The wrapper of `session` says the server answered these snapshotted calls, and is about to send another call
   * that may change the same files: their after-states are read now, before that call runs, rather than once
   * their ends are journaled (the journal's batches can arrive after the next call has run). A call whose
   * after-state is being read already (its entry came first) is waited for; ids of calls not prepared by this
   * session are passed over. A wrapper that says so of a call still running only makes its undo stricter: the
   * files will not match what was read, and an undo says so instead of overwriting them.
   */
  async ended(sessionId: string, callIds: readonly string[]): Promise<void> {
    const reading: Promise<void>[] = [];
    for (const id of callIds) {
      const underWay = this.finishing.get(id);
      if (underWay) {
        // read already (its journal entry came first): this call waits for that read all the same, or it could
        // change the files before their after-state is taken
        reading.push(underWay.after);
        continue;
      }
      if (!this.snapshots.prepared.has(id)) continue;
      // taken now, so that its journaled end does not read it again
      this.snapshots.prepared.delete(id);
      this.endedEarly.add(id);
      // an end that is never journaled (its wrapper killed, its spill lost) does not keep its id for ever
      if (this.endedEarly.size > MAX_ENDED_EARLY) this.endedEarly.delete(this.endedEarly.values().next().value!);
      this.track(id, (afterRead) => this.finishOf(sessionId, id, afterRead));
      reading.push(this.finishing.get(id)!.after);
    }
    await Promise.all(reading);
  }

  /**
   * `ended` for one call: read only when the call is this session's (its record is written once its snapshot is),
   * or when its session is gone and this one is of the same server: the same wrapper connected again (after the
   * broker restarted, or its connection dropped), which names the calls answered since its last prepare, as before.
   * Read early, a call's files only make its undo stricter; read late, after this session's next call changed
   * them, its undo would put back the first call's files over that change.
   */
  private async finishOf(sessionId: string, callId: string, afterRead: () => void): Promise<void> {
    await this.snapshots.storing.get(callId);
    const owner = this.ctx.records.get(callId);
    if (owner?.sessionId === sessionId || (owner && this.orphanOf(owner, sessionId))) return this.finish(callId, 'ok', afterRead);
    // another session's call: its own end reads it, or, if that came meanwhile, this does
    if (!this.endedEarly.delete(callId)) return this.finish(callId, 'ok', afterRead);
    this.snapshots.prepared.add(callId);
  }

  /** Is `rec` a call of a session no longer connected, and `sessionId` a session of the same server? */
  private orphanOf(rec: UndoRecord, sessionId: string): boolean {
    let mine = false;
    for (const s of this.ctx.port.sessions()) {
      if (s.info.id === rec.sessionId) return false;
      if (s.info.id === sessionId) mine = s.info.server === rec.server;
    }
    return mine;
  }

  /**
   * At the broker's start: the snapshotted calls the last run left prepared. One whose after-states were written
   * (the broker stopped while keeping its old files) is finished now; the rest wait for their end as before (their
   * wrapper, connected again, names them in its next prepare).
   */
  resume(): void {
    for (const id of [...this.snapshots.prepared]) {
      const rec = this.ctx.records.get(id);
      if (rec?.plan?.kind !== 'snapshot') continue;
      if (!rec.holds && planBlobs(rec.plan).length > 0) {
        // stopped while its copied bytes were written (what was written of them no row refers to: swept at the start)
        this.snapshots.prepared.delete(id);
        const reason = 'Airlock stopped before it stored the snapshot taken before this call';
        this.ctx.records.update(id, { state: 'unavailable', reason }, this.ctx.port.clock.now());
        continue;
      }
      if (!afterStatesRecorded(rec.plan)) continue;
      const plan = rec.plan;
      this.snapshots.prepared.delete(id);
      // its end, journaled now or later, finds it read, as after `ended`
      this.endedEarly.add(id);
      this.track(id, async (afterRead) => {
        afterRead();
        // once the broker that is starting is built (what keeping records may report goes through it)
        await nextTurn();
        await this.keep(rec, plan, []);
      });
    }
  }

  /** Resolves once the after-states being read now are recorded (what a history page read next will show). */
  async idle(): Promise<void> {
    while (this.finishing.size > 0 || this.snapshots.storing.size > 0) {
      await Promise.all([...[...this.finishing.values()].map((f) => f.done), ...this.snapshots.storing.values()]);
    }
  }

  /** Say what undo can do for a call that ended (a front end's Undo button follows this). */
  private known(d: StoredCallSummary): void {
    const r = this.ctx.records.get(d.id);
    if (r) this.ctx.port.record('undo-known', d.server, d.tool, { callId: d.id, undo: undoInfo({ decision: 'allow', outcome: 'ok', id: d.id }, r) });
  }

  /**
   * Record a call's end as `work` does it: `work` is handed what to call once the call's after-states are read
   * (called in any case once it is over, whatever happened).
   */
  private track(callId: string, work: (afterRead: () => void) => Promise<void>): void {
    let afterRead!: () => void;
    const after = new Promise<void>((resolve) => (afterRead = resolve));
    const entry: Finishing = {
      after,
      done: work(afterRead)
        .catch(() => {})
        .finally(() => {
          afterRead();
          if (this.finishing.get(callId) === entry) this.finishing.delete(callId);
        }),
    };
    this.finishing.set(callId, entry);
  }

  /**
   * The state a snapshotted call left its files in: what an undo checks the files against; `afterRead` is called
   * once it is read. The old files held by a link are then read (their bytes kept as snapshots), if the server left
   * them as they were. An old file the server replaced has no name left but Airlock's link, so nothing can change
   * it: its bytes are read KEEP_AFTER_MS later, and the wrapper's next call (whose prepare waits for `afterRead`
   * only) is answered first. One the path still names is read at once, like the after-states: the next call could
   * write into it.
   */
  private async finish(callId: string, outcome: string, afterRead: () => void): Promise<void> {
    await this.snapshots.storing.get(callId);
    const rec = this.ctx.records.get(callId);
    if (!rec || rec.state !== 'prepared' || rec.plan?.kind !== 'snapshot') return;
    if (outcome === 'not-run') return this.ctx.records.remove(callId);
    const now = () => this.ctx.port.clock.now();
    // a symlink or folder on the way changed while the call ran: which file it wrote is not known
    const drift = driftSince(rec.plan.paths, this.ctx.port.matchEnv);
    if (drift) {
      this.ctx.records.update(callId, { state: 'unavailable', reason: drift }, now());
      this.ctx.records.releaseHeld(rec.plan);
      return;
    }
    const paths: PathEntry[] = [];
    /** By path: the held old file's bytes read now (or why they could not be), when they are not read later. */
    const readEarly: (Buffer | Error | undefined)[] = [];
    let later = false;
    for (const p of rec.plan.paths) {
      const after = await currentState(p.path, HASH_LIMIT);
      const dirsAfter = folderChainOrNone(p.path);
      paths.push({ ...p, after, ...(dirsAfter ? { dirsAfter } : {}) });
      let bytes: Buffer | Error | undefined;
      if (p.held) {
        try {
          const linkPath = this.ctx.blobs.heldPath(p.held.name);
          if (heldAlone(linkPath, p.held)) later = true;
          else bytes = await readHeld(linkPath, p.held);
        } catch (err) {
          bytes = err as Error;
        }
      }
      readEarly.push(bytes);
    }
    const plan = { kind: 'snapshot' as const, paths };
    try {
      // written before the next call may change the files: a broker stopped from here on finishes it at its start
      this.ctx.records.update(callId, { state: 'prepared', plan }, now());
    } catch {
      // the database refused (a full disk): the record's end below most likely fails too, and says so
    }
    afterRead();
    if (later) await sleep(KEEP_AFTER_MS);
    await this.keep(rec, plan, readEarly);
  }

  /**
   * The end of a snapshotted call's record, its after-states read (`plan`): the old files held by a link kept as
   * snapshots (their bytes read now, unless in `readEarly`, by path), and the record ready, or unchanged.
   */
  private async keep(rec: UndoRecord, plan: SnapshotPlan, readEarly: readonly (Buffer | Error | undefined)[]): Promise<void> {
    const { callId } = rec;
    const now = () => this.ctx.port.clock.now();
    const contents = new Map<string, Buffer>();
    /** The held link each blob's bytes were read from (it becomes the blob when nothing else names it). */
    const heldFiles = new Map<string, { linkPath: string; held: Held }>();
    const paths: PathEntry[] = [];
    for (const [i, p] of plan.paths.entries()) {
      if (!p.held) {
        paths.push(p);
        continue;
      }
      let linkPath: string;
      let bytes: Buffer;
      try {
        const early = readEarly[i];
        if (early instanceof Error) throw early;
        linkPath = this.ctx.blobs.heldPath(p.held.name);
        bytes = early ?? (await readHeld(linkPath, p.held));
      } catch (err) {
        this.ctx.records.update(callId, { state: 'unavailable', reason: `${p.path}: ${why(err)}` }, now());
        return;
      }
      const sha = sha256(bytes);
      contents.set(sha, bytes);
      heldFiles.set(sha, { linkPath, held: p.held });
      const { held: _held, ...entry } = p;
      paths.push({ ...entry, before: { ...(p.before as Extract<FileState, { type: 'file' }>), sha256: sha } });
    }
    const kept = { kind: 'snapshot' as const, paths };
    if (!paths.some((p) => !sameState(p.before, p.after))) {
      this.ctx.records.update(callId, { state: 'unchanged', reason: 'the call left its files as they were', plan: kept }, now());
      return;
    }
    try {
      for (const [sha, bytes] of contents) {
        const h = heldFiles.get(sha);
        if (!h || !this.ctx.blobs.adopt(sha, h.linkPath, h.held)) await this.ctx.blobs.write(sha, bytes);
      }
      this.ctx.records.settle(callId, { state: 'ready', plan: kept }, contents, now());
    } catch (err) {
      this.ctx.records.update(callId, { state: 'unavailable', reason: `its snapshot could not be stored (${why(err)})` }, now());
      this.ctx.port.record('snapshot-failed', rec.server, rec.tool, { callId, error: why(err) });
      return;
    } finally {
      this.ctx.records.releaseHeld(plan);
    }
    if (contents.size) this.ctx.prune(new Set([callId]));
  }

  /** Resolves once the after-state of `callId` being read now (if any) is recorded. */
  async settled(callId: string): Promise<void> {
    await this.finishing.get(callId)?.done;
  }
}
