/**
 * Running one undo: put back the files a call changed (from their snapshots), or call the declared inverse
 * through a connected wrapper of the call's server (undo-inverse.ts). Never throws: whatever fails is residue in the report, and
 * the record says the undo failed (it can be tried again).
 *
 * A file is put back only when it is as the call left it (or already as it was before: nothing to do). Any
 * other state is a conflict, and then nothing of the call is written unless the person forces it. A folder on
 * the way that is not the one the call wrote in (undo-dirs.ts) is a conflict forcing cannot override. Before a
 * file is overwritten, its current bytes are snapshotted too: the undo is journaled as an entry of its own,
 * with a record that undoes it (a redo).
 */
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import type { CallRecord, HistoryItem } from '../protocol/api.js';
import type { EventDetails } from '../protocol/events.js';
import { LIMITS } from '../protocol/limits.js';
import type { BrokerToWrapper } from '../protocol/names.js';
import type { UndoReport } from '../protocol/undo-api.js';
import type { BrokerEvent } from '../protocol/api.js';
import type { Clock } from '../util/clock.js';
import type { Session } from './sessions.js';
import { type RunningInverse, undoInverse } from './undo-inverse.js';
import type { SnapshotBlobs, SnapshotCaps } from './snapshots.js';
import type { Store } from './db/store.js';
import { expectedFolders, folderChainOrNone, type HeldFolder, heldOrThrow, walkToFolder } from './undo-dirs.js';
import { capture, currentState, describeState, type FileState, folderBack, removeEmptyFolders, removePath, sameState, why, writeBack } from './undo-files.js';
import type { PathEntry, SnapshotPlan, UndoRecord, UndoRecords } from './undo-records.js';

/** The journal ids of undos start with this (never a wrapper's: theirs are random base64url then a counter). */
export const UNDO_ID_PREFIX = 'undo-';
/** The client an undo's journal entry names. */
export const UNDO_CLIENT = 'airlock-undo';
/** Files bigger than this are not hashed (their state is unknown to undo: a conflict unless forced). */
export const HASH_LIMIT = 1024 * 1024 * 1024;

export interface UndoRunContext {
  store: Store;
  records: UndoRecords;
  blobs: SnapshotBlobs;
  /** The bytes a path had before the call: its snapshot (or the old file still held by a link). */
  readBefore(entry: PathEntry): Promise<Buffer>;
  clock: Clock;
  caps(): SnapshotCaps;
  estop(): boolean;
  sessions(): readonly Session[];
  request(sessionId: string, method: typeof BrokerToWrapper.callTool, params: unknown, timeoutMs: number): Promise<unknown>;
  /** How long a ticket waits for a person now: a held inverse may wait that long. */
  ticketTimeoutSeconds(): number;
  /** The command a session was started with (the sessions table), or null. */
  sessionCommand(sessionId: string): string[] | null;
  /** Inverses on their way, by undo id: a ticket one asks for is marked as an undo. */
  running: Map<string, RunningInverse>;
  record<K extends 'undo'>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): void;
  publish(events: BrokerEvent[]): void;
  /** Keep snapshots under their cap (the records in `keep` are not pruned). */
  prune(keep: ReadonlySet<string>): void;
}

export function newUndoId(): string {
  return `${UNDO_ID_PREFIX}${randomBytes(6).toString('hex')}`;
}

/** A report of an undo that did not run (nothing was touched). */
export function refused(rec: Pick<UndoRecord, 'callId'> & { kind: UndoRecord['kind'] | null }, summary: string, extra: Partial<UndoReport> = {}): UndoReport {
  return { callId: rec.callId, ok: false, kind: rec.kind, summary, restored: [], conflicts: [], residue: [], ...extra };
}

/** Undo one recorded call (its record's state already checked by the caller: ready, failed, or prepared when forced). */
export async function runUndo(ctx: UndoRunContext, rec: UndoRecord, force: boolean): Promise<UndoReport> {
  try {
    if (rec.plan?.kind === 'snapshot') return await undoSnapshot(ctx, rec, rec.plan, force);
    if (rec.plan?.kind === 'inverse') return await undoInverse(ctx, rec, rec.plan);
    return refused(rec, 'the undo record of this call is damaged (its plan cannot be read)');
  } catch (err) {
    // a bug here must not become an exception for the person: it is residue like any other failure
    const report = refused(rec, `undo failed: ${why(err)}`, { residue: [`internal error: ${why(err)}`] });
    ctx.record('undo', rec.server, rec.tool, report);
    return report;
  }
}

type Step = { entry: PathEntry; now: FileState; act: boolean; folder: HeldFolder | null };

async function undoSnapshot(ctx: UndoRunContext, rec: UndoRecord, plan: SnapshotPlan, force: boolean): Promise<UndoReport> {
  const steps: Step[] = [];
  try {
    return await undoSteps(ctx, rec, plan, force, steps);
  } finally {
    for (const s of steps) s.folder?.close();
  }
}

async function undoSteps(ctx: UndoRunContext, rec: UndoRecord, plan: SnapshotPlan, force: boolean, steps: Step[]): Promise<UndoReport> {
  const conflicts: UndoReport['conflicts'] = [];
  // a folder on the way that is not the one the call wrote in: nothing is written through it, forced or not
  const moved: UndoReport['conflicts'] = [];
  for (const entry of plan.paths) {
    const walk = walkToFolder(entry.path, expectedFolders(entry), false);
    if (walk.ok === false) {
      moved.push({ path: entry.path, expected: 'the folders it was in when the call ran', found: walk.conflict });
      continue;
    }
    const folder = walk.ok === true ? walk.folder : null;
    steps.push({ entry, now: { type: 'absent' }, act: false, folder });
    const now = folder ? await currentState(folder.at(basename(entry.path)), HASH_LIMIT) : ({ type: 'absent' } as const);
    const step = steps[steps.length - 1]!;
    step.now = now;
    if (sameState(now, entry.before)) continue;
    if (!entry.after || !sameState(now, entry.after)) {
      conflicts.push({
        path: entry.path,
        expected: entry.after ? describeState(entry.after) : 'the state the call left (it was never recorded)',
        found: describeState(now),
      });
    }
    step.act = true;
  }
  if (moved.length > 0) {
    const report = refused(
      rec,
      `a folder above ${moved.length === 1 ? 'a file' : `${moved.length} files`} the call changed was replaced since (by a symlink or another folder): undo writes only where the call wrote, so nothing was written, and forcing does not change that`,
      { conflicts: [...moved, ...conflicts] },
    );
    ctx.record('undo', rec.server, rec.tool, report);
    return report;
  }
  if (conflicts.length > 0 && !force) {
    const report = refused(
      rec,
      `${conflicts.length === 1 ? 'a file was' : `${conflicts.length} files were`} changed since the call: nothing was overwritten (force overwrites them)`,
      { conflicts },
    );
    ctx.record('undo', rec.server, rec.tool, report);
    return report;
  }

  const undoId = newUndoId();
  const startedAt = ctx.clock.now();
  // what is about to be replaced is snapshotted first, so that this undo can itself be undone
  const redo = await snapshotForRedo(ctx, steps.filter((s) => s.act));

  const restored: UndoReport['restored'] = [];
  const residue: string[] = [];
  const notes: string[] = [];
  for (const step of steps) {
    const { entry, act } = step;
    if (!act) {
      restored.push({ path: entry.path, action: 'already-as-before' });
      continue;
    }
    const before = entry.before;
    try {
      if (before.type === 'file' || before.type === 'dir') {
        // folders the call removed on the way are made again (real folders, never through a symlink)
        if (!step.folder) step.folder = heldOrThrow(walkToFolder(entry.path, expectedFolders(entry), true));
      }
      const changed = step.folder?.verify();
      if (changed) throw new Error(`${changed}: nothing was written there`);
      const target = step.folder ? step.folder.at(basename(entry.path)) : null;
      if (before.type === 'file') {
        await writeBack(target!, await ctx.readBefore(entry), before.mode, before.mtimeMs);
        restored.push({ path: entry.path, action: 'restored' });
      } else if (before.type === 'absent') {
        if (target) await removePath(target);
        restored.push({ path: entry.path, action: 'removed' });
        // each through the held folder above it (a folder no longer on the way is gone already)
        const kept: string[] = [];
        for (const dir of before.missing ?? []) {
          const via = step.folder?.entry(dir);
          if (via && (await removeEmptyFolders([via])).length) kept.push(dir);
        }
        if (kept.length) notes.push(`folders the call created were kept because they are not empty: ${kept.join(', ')}`);
      } else if (before.type === 'dir') {
        const done = await folderBack(target!, before.mode);
        restored.push({ path: entry.path, action: done === 'recreated' ? 'recreated' : 'restored' });
        if (done === 'recreated') notes.push(`${entry.path} was recreated empty: Airlock keeps no copy of a folder's contents`);
      } else {
        residue.push(`${entry.path}: it was ${describeState(before)} before the call, which Airlock cannot put back`);
      }
      const after = step.folder?.verify();
      if (after) residue.push(`${entry.path}: ${after} while it was being put back`);
    } catch (err) {
      residue.push(`${entry.path}: ${err instanceof Error && !('code' in err) ? err.message : why(err)}`);
    }
  }
  const finishedAt = ctx.clock.now();
  const ok = residue.length === 0;
  const changed = restored.filter((r) => r.action !== 'already-as-before').length;
  const summary = ok
    ? `${restoredInWords(restored)}${conflicts.length ? ` (forced over ${conflicts.length} later change${conflicts.length === 1 ? '' : 's'})` : ''}${notes.length ? `; ${notes.join('; ')}` : ''}`
    : `undo left residue: ${residue.join('; ')}`;
  const report: UndoReport = { callId: rec.callId, ok, kind: 'snapshot', undoId, summary, restored, conflicts, residue };

  journalUndo(ctx, rec, undoId, {
    tool: rec.tool,
    args: { undo: rec.callId, force },
    detail: `undo of call ${rec.callId}: ${summary}`,
    outcome: ok ? 'ok' : 'tool-error',
    result: report,
    startedAt,
    finishedAt,
  });

  // the undo's own record: it can be undone (a redo) when what it replaced was snapshotted
  const redoPlan: SnapshotPlan = { kind: 'snapshot', paths: [] };
  for (const p of redo.paths) redoPlan.paths.push({ ...p, after: await currentState(p.path, HASH_LIMIT) });
  const redoReason = redo.problem ?? (changed === 0 ? 'the undo changed no file' : null);
  insertRecord(ctx, {
    callId: undoId,
    server: rec.server,
    tool: rec.tool,
    sessionId: null,
    kind: 'snapshot',
    state: redoReason === null ? 'ready' : changed === 0 ? 'unchanged' : 'unavailable',
    reason: redoReason,
    plan: redoReason === null ? redoPlan : { kind: 'snapshot', paths: [] },
    createdAt: finishedAt,
    undoneBy: null,
    undoOf: rec.callId,
  }, redoReason === null ? redo.contents : new Map());

  const now = ctx.clock.now();
  if (ok) {
    ctx.records.update(rec.callId, { state: 'undone', reason: null, undoneBy: undoId }, now);
    // undoing an undo redoes its call: that call can be undone again
    if (rec.undoOf) ctx.records.update(rec.undoOf, { state: 'ready', reason: null, undoneBy: null }, now);
  } else {
    ctx.records.update(rec.callId, { state: 'failed', reason: `the last undo (${undoId}) left residue: ${residue.join('; ')}`.slice(0, LIMITS.detail) }, now);
  }
  ctx.prune(new Set([undoId]));
  ctx.record('undo', rec.server, rec.tool, report);
  return report;
}

/** Snapshot what an undo is about to replace; a problem makes the redo unavailable, never the undo fail. */
async function snapshotForRedo(ctx: UndoRunContext, steps: readonly Step[]): Promise<{ paths: PathEntry[]; contents: Map<string, Buffer>; problem: string | null }> {
  const paths: PathEntry[] = [];
  const contents = new Map<string, Buffer>();
  const caps = ctx.caps();
  try {
    for (const { entry, folder } of steps) {
      const c = folder ? await capture(folder.at(basename(entry.path)), caps.fileBytes) : { state: { type: 'absent' as const } };
      if ('tooLarge' in c) return { paths, contents, problem: `${entry.path} was over the snapshot cap when it was undone, so the undo cannot be redone` };
      if (c.state.type === 'other' || c.state.type === 'unknown') return { paths, contents, problem: `${entry.path} was ${describeState(c.state)} when it was undone` };
      if (c.state.type === 'dir' && entry.before.type !== 'absent') return { paths, contents, problem: `${entry.path} was a folder when it was undone` };
      if ('content' in c && c.content && c.state.type === 'file') {
        await ctx.blobs.write(c.state.sha256, c.content);
        contents.set(c.state.sha256, c.content);
      }
      const dirs = folderChainOrNone(entry.path);
      paths.push({ arg: entry.arg, path: entry.path, before: c.state, ...(dirs ? { dirs } : {}) });
    }
  } catch (err) {
    return { paths, contents, problem: `the files could not be snapshotted before the undo (${why(err)}), so it cannot be redone` };
  }
  return { paths, contents, problem: null };
}

function insertRecord(ctx: UndoRunContext, r: Omit<UndoRecord, 'holds'>, contents: ReadonlyMap<string, Buffer>): void {
  try {
    ctx.records.insert(r, contents);
  } catch (err) {
    try {
      ctx.records.insert({ ...r, state: 'unavailable', reason: `its snapshot could not be stored (${why(err)})`, plan: { kind: 'snapshot', paths: [] } });
    } catch {
      // the undo itself is journaled; only its redo is lost
    }
  }
}

/** The undo's own journal entry: what ran, who asked (a person), and what came of it. */
function journalUndo(
  ctx: UndoRunContext,
  rec: UndoRecord,
  undoId: string,
  e: { tool: string; args: unknown; detail: string; outcome: CallRecord['outcome']; result: unknown; startedAt: number; finishedAt: number },
): void {
  const original: HistoryItem | null = ctx.store.call(rec.callId);
  const args = JSON.stringify(e.args ?? {});
  const result = JSON.stringify(e.result ?? null) ?? 'null';
  const entry: CallRecord = {
    id: undoId,
    client: UNDO_CLIENT,
    server: rec.server,
    tool: e.tool.slice(0, LIMITS.toolName),
    arguments: args.slice(0, LIMITS.argsShown),
    argsTruncated: args.length > LIMITS.argsShown,
    argsBytes: args.length,
    class: original?.class ?? 'unclassifiable',
    reasons: [`undo of call ${rec.callId}, asked for by you`],
    decision: 'allow',
    decidedBy: 'user',
    detail: e.detail.slice(0, LIMITS.detail),
    outcome: e.outcome,
    result: result.slice(0, LIMITS.resultShown),
    resultTruncated: result.length > LIMITS.resultShown,
    resultBytes: Buffer.byteLength(result),
    startedAt: e.startedAt,
    decidedAt: e.startedAt,
    forwardedAt: e.startedAt,
    finishedAt: e.finishedAt,
    durationMs: e.finishedAt - e.startedAt,
  };
  try {
    ctx.publish(ctx.store.writeJournal([entry]));
  } catch {
    // the report still says what happened; the event below is the record of it
  }
}

/** "put back 1 file as it was before the call and removed 1 the call created": what a file undo did, in words. */
export function restoredInWords(restored: readonly { action: string }[]): string {
  const count = (action: string) => restored.filter((r) => r.action === action).length;
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  const parts: string[] = [];
  const back = count('restored');
  const removed = count('removed');
  const recreated = count('recreated');
  if (back) parts.push(`put back ${n(back, 'file')} as ${back === 1 ? 'it was' : 'they were'} before the call`);
  if (removed) parts.push(`removed ${n(removed, 'file')} the call created`);
  if (recreated) parts.push(`recreated ${n(recreated, 'folder')} the call removed`);
  return parts.length ? parts.join(' and ') : 'nothing needed putting back';
}
