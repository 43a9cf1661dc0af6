/**
 * Before a call of a file tool runs: its snapshot. A wrapper asks (`call.prepare`) and waits; the prior state of
 * each path the call names (bytes, mode, mtime; or absence, with the folders a `mkdir -p` would create; or a
 * folder) is read before the call is sent: its bytes copied into memory, or, for a file the server replaces
 * rather than writes into (the filesystem server's write_file and edit_file), the old file held by a hard link
 * until the call is over.
 *
 * If that state cannot be read, the call is refused: the person approved a call that was going to be
 * undoable, and running it anyway would break that quietly. A snapshot is stored before its call is let
 * through, except copied bytes past 64 KB: those are written to the data dir while the call runs (that write is
 * most of a snapshot's cost), their record first. If that fails, the call is marked not undoable, an event says
 * why, and from then on each snapshot is stored before its call runs (or the call is refused) until storing
 * works again. A limit known in advance does not refuse a call: a file over the snapshot cap, a relative path,
 * something that is not a file, a path argument that is not a string (the server refuses that one itself).
 * Such a call runs, marked not undoable, with the reason in its history entry.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isAbsolute } from 'node:path';
import type { MatchEnv } from '../../policy/arg-conditions.js';
import { distinct, expandArgPath, readingsOf } from '../../policy/path-resolve.js';
import { describeRule } from '../../policy/decide.js';
import { ruleMatches } from '../../policy/rules.js';
import { plannedUndo } from '../../policy/undo-plan.js';
import type { Rule } from '../../protocol/api.js';
import type { PrepareAnswer, PrepareRequest } from '../../protocol/undo-api.js';
import type { Session } from '../sessions.js';
import { absoluteArgPath } from './arg-paths.js';
import type { UndoContext } from './context.js';
import { type FolderId, folderChain } from './dirs.js';
import type { SnapshotArgs } from './file-tools.js';
import { capture, hold, why } from './files.js';
import type { PathEntry, SnapshotPlan, UndoRecord } from './records.js';

const MAX_PATH_ARG = 4096;
/**
 * Copied bytes up to this much are written before the call is let through (a write of some tens of µs); more
 * are written while it runs, their record first, so that a broker killed meanwhile says they never were.
 */
const STORE_FIRST_BYTES = 64 * 1024;

/** The absolute path a path argument names, or null for one Airlock does not snapshot (a relative path). */
export function snapshotPath(value: string, env: Pick<MatchEnv, 'home' | 'platform'>): string | null {
  // a relative path is resolved by the server its own way (the filesystem server: against its allowed
  // folders), which Airlock cannot know: it is not snapshotted rather than snapshotted at a guess
  const abs = absoluteArgPath(value, env, undefined);
  return abs !== null && isAbsolute(abs) ? abs : null;
}

/** The snapshots of calls about to run, and of calls that ran whose end is not journaled yet. */
export class CallSnapshots {
  /** Calls snapshotted and not journaled as finished yet. */
  readonly prepared: Set<string>;
  /** Snapshots being stored, by call: the call's end (and an undo) waits for its snapshot. */
  readonly storing = new Map<string, Promise<void>>();

  /**
   * `prepared`: the calls whose end a restart did not see journaled yet. `storageFailed`: why the last snapshot
   * could not be stored (null: storing works).
   */
  constructor(
    private readonly ctx: UndoContext,
    prepared: Iterable<string>,
    private storageFailed: string | null,
  ) {
    this.prepared = new Set(prepared);
  }

  /** Does a rule decide this call's server and tool by whether it can be undone (`undoable` on a rule)? */
  private ruleOnUndo(session: Session, tool: string): Rule | undefined {
    return this.ctx.port.rules().find((r) => r.undoable !== undefined && ruleMatches({ ...r, args: undefined, undoable: undefined }, { server: session.info.server, client: session.info.client, tool }));
  }

  /** A wrapper is about to send a call of a file tool: record the prior state of every path it names. */
  async prepare(session: Session, p: PrepareRequest): Promise<PrepareAnswer> {
    const server = session.info.server;
    const spec = this.ctx.port.fileTools.snapshotArgs(server, p.tool);
    if (!spec) return { ok: true, undoable: false, reason: `${p.tool} is not a tool whose files Airlock snapshots` };
    await this.storing.get(p.callId);
    const existing = this.ctx.records.get(p.callId);
    if (existing) return { ok: true, undoable: existing.state === 'prepared', ...(existing.reason ? { reason: existing.reason } : {}) };
    const base = { callId: p.callId, server, tool: p.tool, sessionId: session.info.id, kind: 'snapshot' as const, createdAt: this.ctx.port.clock.now(), undoneBy: null, undoOf: null };
    const entries: PathEntry[] = [];
    const contents = new Map<string, Buffer>();
    const early = await this.readPaths(spec, p.paths, entries, contents);
    if (early) {
      // nothing of this call is kept
      this.ctx.records.releaseHeld({ kind: 'snapshot', paths: entries });
      if (early.kind === 'refuse') return refusal(early.reason);
      // the wrapper judged this call undoable (its paths are absolute); a rule that decided on that must not
      // let it run now that it is not
      const rule = plannedUndo({ pathArgs: spec.args, inverse: false }, p.paths, (v) => snapshotPath(v, this.ctx.port.matchEnv) !== null) === 'snapshot' ? this.ruleOnUndo(session, p.tool) : undefined;
      if (rule) {
        const reason = `this call could not be undone after all (${early.reason}), and rule ${rule.id} (${describeRule(rule)}) decides by whether a call can be undone, so it was not run`;
        return { ok: false, undoable: false, reason };
      }
      try {
        this.ctx.records.insert({ ...base, state: 'unavailable', reason: early.reason, plan: { kind: 'snapshot', paths: [] } });
      } catch {
        // the history entry will only say less
      }
      return { ok: true, undoable: false, reason: early.reason };
    }
    const rec = { ...base, state: 'prepared' as const, reason: null, plan: { kind: 'snapshot' as const, paths: entries } };
    // Stored before the call runs, or the call does not run: when the last snapshot could not be stored, and when
    // there is little to write (old files held by a link, missing files, folders, a small copy), which costs
    // little: a broker killed while the call runs then still has the call's snapshot at its next start.
    if (this.storageFailed !== null || bytesOf(contents) <= STORE_FIRST_BYTES) {
      try {
        await this.persist(rec, contents);
      } catch (err) {
        return this.notStored(rec, err);
      }
      this.storageFailed = null;
      this.prepared.add(p.callId);
      return { ok: true, undoable: true };
    }
    // The prior state is read (bytes in memory and hashed): the call may run once its record is written (a broker
    // killed while the bytes are written then knows at its next start that they never were). The bytes are written
    // right after this answer leaves, while the server runs the call: that write is most of what a snapshot costs.
    // Should it fail, the call is marked not undoable (an event says so), and the next snapshot is stored before
    // its call is let through.
    try {
      this.ctx.records.insertAwaitingBlobs(rec);
    } catch (err) {
      return this.notStored(rec, err);
    }
    this.prepared.add(p.callId);
    this.storeLater(rec, contents);
    return { ok: true, undoable: true };
  }

  /** A snapshot that could not be stored before its call: the call is refused, and what it held let go. */
  private notStored(rec: Omit<UndoRecord, 'holds'> & { plan: SnapshotPlan }, err: unknown): PrepareAnswer {
    this.storageFailed = why(err);
    this.ctx.records.releaseHeld(rec.plan);
    return refusal(`the snapshot of ${rec.plan.paths.map((e) => e.path).join(', ')} (${why(err)})`);
  }

  /**
   * What was there, for each path the call names (into `entries` and `contents`). Returns why the call cannot
   * have a snapshot: `refuse` when reading failed (the call must not run), `not-undoable` for a limit known in
   * advance (it runs, not undoable).
   */
  private async readPaths(
    spec: SnapshotArgs,
    paths: Record<string, unknown>,
    entries: PathEntry[],
    contents: Map<string, Buffer>,
  ): Promise<{ kind: 'refuse' | 'not-undoable'; reason: string } | null> {
    const caps = this.ctx.caps();
    const notUndoable = (reason: string) => ({ kind: 'not-undoable' as const, reason });
    for (const arg of spec.args) {
      const value = paths[arg];
      if (typeof value !== 'string' || value === '' || value.length > MAX_PATH_ARG || value.includes('\0')) {
        return notUndoable(`its ${arg} argument is not a path Airlock can snapshot`);
      }
      const abs = snapshotPath(value, this.ctx.port.matchEnv);
      if (abs === null) return notUndoable(`its ${arg} argument is a relative path: which file the server resolves it to is the server's business`);
      // a `..` after a symlink names two files (the kernel's and a text-normalising server's): both are kept
      let reals: string[];
      try {
        reals = distinct(readingsOf(expandArgPath(value, this.ctx.port.matchEnv) ?? abs, this.ctx.port.matchEnv));
      } catch (err) {
        return notUndoable(`its ${arg} path cannot be resolved (${why(err)})`);
      }
      for (const real of reals) {
        let dirs: FolderId[];
        try {
          dirs = folderChain(real);
        } catch (err) {
          return notUndoable(`a folder above ${real} changed while it was being resolved (${why(err)})`);
        }
        // a file the server replaces (never writes into) is held by a link: the call waits for that, not a copy
        const name = spec.replaces && this.storageFailed === null ? this.ctx.blobs.heldName() : null;
        let kept: ReturnType<typeof hold> = null;
        if (name) {
          let linkPath: string;
          try {
            linkPath = this.ctx.blobs.heldPath(name);
          } catch (err) {
            // the snapshots folder is not one to keep anything in now (a symlink where it goes): the call waits for none
            return { kind: 'refuse', reason: `the snapshot of ${real} (${why(err)})` };
          }
          kept = hold(real, linkPath, name);
        }
        if (kept) {
          entries.push({ arg, path: real, before: kept.state, held: kept.held, dirs, raw: value });
          if (kept.held.size > caps.fileBytes) return notUndoable(`${real} is ${mb(kept.held.size)}, over the snapshot cap of ${mb(caps.fileBytes)} per file`);
          continue;
        }
        let got;
        try {
          got = await capture(real, caps.fileBytes);
        } catch (err) {
          return { kind: 'refuse', reason: `the state of ${real} (${why(err)})` };
        }
        if ('tooLarge' in got) {
          return notUndoable(`${real} is ${mb(got.state.type === 'file' ? got.state.size : 0)}, over the snapshot cap of ${mb(caps.fileBytes)} per file`);
        }
        const state = got.state;
        if (state.type === 'other') return notUndoable(`${real} is a ${state.what}, which Airlock does not snapshot`);
        if (state.type === 'dir' && spec.kind !== 'mkdir') return notUndoable(`${real} is a folder: Airlock snapshots files, not folders`);
        if (state.type === 'file' && got.content) contents.set(state.sha256, got.content);
        entries.push({ arg, path: real, before: state, dirs, raw: value });
      }
    }
    return null;
  }

  private async persist(rec: Omit<UndoRecord, 'holds'>, contents: ReadonlyMap<string, Buffer>): Promise<void> {
    for (const [sha, content] of contents) await this.ctx.blobs.write(sha, content);
    this.ctx.records.insert(rec, contents);
    if (contents.size) this.ctx.prune(new Set([rec.callId]));
  }

  /** The bytes of a record stored by `insertAwaitingBlobs`, written once this turn is over, and referred to. */
  private storeLater(rec: Omit<UndoRecord, 'holds'>, contents: ReadonlyMap<string, Buffer>): void {
    const done = nextTurn()
      .then(async () => {
        for (const [sha, content] of contents) await this.ctx.blobs.write(sha, content);
        this.ctx.records.keepBlobs(rec.callId, contents);
        this.ctx.prune(new Set([rec.callId]));
      })
      .catch((err: unknown) => {
        this.storageFailed = why(err);
        const reason = `its snapshot could not be stored (${why(err)}); the call had already been let through`;
        try {
          this.ctx.records.update(rec.callId, { state: 'unavailable', reason, plan: { kind: 'snapshot', paths: [] } }, this.ctx.port.clock.now());
        } catch {
          // the event below still says it
        }
        this.ctx.records.releaseHeld(rec.plan);
        this.ctx.port.record('snapshot-failed', rec.server, rec.tool, { callId: rec.callId, error: why(err) });
      })
      .finally(() => this.storing.delete(rec.callId));
    this.storing.set(rec.callId, done);
  }
}

function refusal(reason: string): PrepareAnswer {
  return { ok: false, undoable: false, reason: `Airlock could not record ${reason} before the call, so the call was not run (it would not have been undoable)` };
}

function bytesOf(contents: ReadonlyMap<string, Buffer>): number {
  let total = 0;
  for (const content of contents.values()) total += content.length;
  return total;
}

function mb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 1024 * 1024 ? 2 : 1)} MB`;
}
