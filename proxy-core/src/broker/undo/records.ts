/**
 * Undo records: one per journaled call that Airlock can (or could) undo, and one per undo it ran (so that an
 * undo can itself be undone). A record says how (a file snapshot, or a declared inverse call), what it would
 * do (the plan), and where it stands:
 *
 *   prepared    a snapshot was taken before the call ran; what the call left is not recorded whole yet (its
 *               after-states may be in the plan already, its held old files not kept yet: finish.ts)
 *   ready       it can be undone
 *   unchanged   the call left every file it names as it was: nothing to undo
 *   unavailable it cannot be undone (the reason says why)
 *   undone      it was undone (`undoneBy`: the undo's own journal id)
 *   failed      an undo was attempted and left residue (the reason says what); it can be tried again
 *   pruned      its snapshot was removed to keep snapshots under their cap
 *
 * A record that holds snapshot blobs (`holds`) gives them up when it can no longer be restored from them.
 */
import type Database from 'better-sqlite3';
import type { FolderId } from './dirs.js';
import type { FileState, Held } from './files.js';
import { isUsablePlan } from './plan-shape.js';
import type { SnapshotBlobs } from './snapshots.js';

export type UndoState = 'prepared' | 'ready' | 'unchanged' | 'unavailable' | 'undone' | 'failed' | 'pruned';
export type UndoKind = 'snapshot' | 'inverse';

/** One path a call names, its state before the call (and after, once the call finished). */
export interface PathEntry {
  /** The argument that named it. */
  arg: string;
  /** The absolute, real path (symlinks above it followed) the server writes. */
  path: string;
  before: FileState;
  after?: FileState;
  /** The old file is held by a hard link until the call is over (its bytes, and `before.sha256`, are read then). */
  held?: Held;
  /** The identity of each folder above `path` that existed before the call, root first (dirs.ts). */
  dirs?: FolderId[];
  /** The same once the call ended: the folders it created are known by it then. */
  dirsAfter?: FolderId[];
  /** The argument as the call gave it: resolved again once the call ended, to catch a symlink changed meanwhile. */
  raw?: string;
}

export interface SnapshotPlan {
  kind: 'snapshot';
  paths: PathEntry[];
}

export interface InversePlan {
  kind: 'inverse';
  inverse: string;
  arguments: Record<string, unknown>;
  /** The declaration it came from, in its text form. */
  spec: string;
  /**
   * The command and arguments the call's session was started with: the inverse runs only in a session of that
   * same server (absent in records made before Airlock kept it: the call's session row says).
   */
  command?: string[];
}

export type UndoPlan = SnapshotPlan | InversePlan;

export interface UndoRecord {
  callId: string;
  server: string;
  tool: string;
  sessionId: string | null;
  kind: UndoKind;
  state: UndoState;
  reason: string | null;
  plan: UndoPlan | null;
  createdAt: number;
  undoneBy: string | null;
  /** For an undo's own record: the call it undid. */
  undoOf: string | null;
  holds: boolean;
}

interface Row {
  call_id: string;
  server: string;
  tool: string;
  session_id: string | null;
  kind: string;
  state: string;
  reason: string | null;
  plan: string;
  created_at: number;
  undone_by: string | null;
  undo_of: string | null;
  holds: number;
}

/** Are the states the call left its files in recorded (the plan's end is then only its held files, kept)? */
export function afterStatesRecorded(plan: UndoPlan | null): plan is SnapshotPlan {
  return plan?.kind === 'snapshot' && plan.paths.every((p) => p.after !== undefined);
}

/** The blobs a snapshot plan refers to. */
export function planBlobs(plan: UndoPlan | null): string[] {
  if (!plan || plan.kind !== 'snapshot') return [];
  return plan.paths.flatMap((p) => (p.before.type === 'file' && p.before.sha256 && !p.held ? [p.before.sha256] : []));
}

/** The record's plan, or null when it is none undo can use (the database is a file anyone of this user can edit). */
function planOf(text: string): UndoPlan | null {
  try {
    const plan: unknown = JSON.parse(text);
    return isUsablePlan(plan) ? (plan as UndoPlan) : null;
  } catch {
    return null;
  }
}

function fromRow(r: Row): UndoRecord {
  const plan = planOf(r.plan);
  return {
    callId: r.call_id,
    server: r.server,
    tool: r.tool,
    sessionId: r.session_id,
    kind: r.kind === 'inverse' ? 'inverse' : 'snapshot',
    state: r.state as UndoState,
    reason: r.reason,
    plan,
    createdAt: Number(r.created_at),
    undoneBy: r.undone_by,
    undoOf: r.undo_of,
    holds: r.holds === 1,
  };
}

export class UndoRecords {
  private readonly stmts;

  constructor(
    private readonly db: Database.Database,
    private readonly blobs: SnapshotBlobs,
  ) {
    this.stmts = {
      insert: db.prepare(`INSERT INTO undo_records (call_id, server, tool, session_id, kind, state, reason, plan, created_at, updated_at, undone_by, undo_of, holds)
        VALUES (@callId, @server, @tool, @sessionId, @kind, @state, @reason, @plan, @createdAt, @createdAt, @undoneBy, @undoOf, @holds)`),
      get: db.prepare('SELECT * FROM undo_records WHERE call_id = ?'),
      update: db.prepare('UPDATE undo_records SET state = @state, reason = @reason, plan = @plan, undone_by = @undoneBy, updated_at = @now WHERE call_id = @callId'),
      letGo: db.prepare('UPDATE undo_records SET holds = 0, state = @state, reason = @reason, updated_at = @now WHERE call_id = @callId'),
      remove: db.prepare('DELETE FROM undo_records WHERE call_id = ?'),
      hold: db.prepare('UPDATE undo_records SET holds = 1 WHERE call_id = ?'),
      prepared: db.prepare("SELECT call_id FROM undo_records WHERE state = 'prepared'").pluck(),
      holding: db.prepare('SELECT COUNT(*) FROM undo_records WHERE holds = 1').pluck(),
      newestReady: db.prepare(`SELECT r.call_id FROM undo_records r JOIN journal j ON j.id = r.call_id
        WHERE r.state = 'ready' AND r.undo_of IS NULL AND (@server IS NULL OR j.server = @server) ORDER BY j.seq DESC LIMIT 1`).pluck(),
      sessionCalls: db.prepare(`SELECT j.id, j.tool, j.class, j.decision, j.outcome FROM journal j WHERE j.session_id = ? ORDER BY j.seq DESC`),
      orphans: db.prepare('SELECT * FROM undo_records WHERE created_at < ? AND call_id NOT IN (SELECT id FROM journal)'),
    };
  }

  /** A reference on each of these blobs, whose bytes are in `contents` (inside a transaction). */
  private refAll(shas: readonly string[], contents: ReadonlyMap<string, Buffer>): void {
    for (const sha of shas) {
      const content = contents.get(sha);
      if (!content) throw new Error(`snapshot ${sha.slice(0, 12)}… was not captured`);
      this.blobs.ref(sha, content);
    }
  }

  /** Store a new record, taking a reference on each blob it refers to (all or nothing). */
  insert(r: Omit<UndoRecord, 'holds'>, contents: ReadonlyMap<string, Buffer> = new Map()): void {
    this.db.transaction(() => {
      const shas = planBlobs(r.plan);
      this.refAll(shas, contents);
      this.stmts.insert.run({ ...r, plan: JSON.stringify(r.plan), holds: shas.length > 0 ? 1 : 0 });
    })();
  }

  /**
   * Store a new prepared record whose blobs are still being written: it refers to them without a reference taken
   * (`holds` 0) until `keepBlobs`. A record left so by a broker that stopped never got its bytes stored (finish.ts).
   */
  insertAwaitingBlobs(r: Omit<UndoRecord, 'holds'>): void {
    this.stmts.insert.run({ ...r, plan: JSON.stringify(r.plan), holds: 0 });
  }

  /** The blobs of a record stored by `insertAwaitingBlobs` are written: its references, taken in one transaction. */
  keepBlobs(callId: string, contents: ReadonlyMap<string, Buffer>): void {
    const r = this.get(callId);
    if (!r) throw new Error('its record is gone');
    this.db.transaction(() => {
      const shas = planBlobs(r.plan);
      this.refAll(shas, contents);
      if (shas.length) this.stmts.hold.run(callId);
    })();
  }

  get(callId: string): UndoRecord | null {
    const row = this.stmts.get.get(callId) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** Records for these calls (a history page), by call id. */
  many(callIds: readonly string[]): Map<string, UndoRecord> {
    const out = new Map<string, UndoRecord>();
    for (let i = 0; i < callIds.length; i += 500) {
      const chunk = callIds.slice(i, i + 500);
      const rows = this.db.prepare(`SELECT * FROM undo_records WHERE call_id IN (${chunk.map(() => '?').join(',')})`).all(...chunk) as Row[];
      for (const row of rows) out.set(row.call_id, fromRow(row));
    }
    return out;
  }

  /** Change a record's state (and plan); a state that can no longer be restored lets its blobs go. */
  update(callId: string, change: { state: UndoState; reason?: string | null; plan?: UndoPlan | null; undoneBy?: string | null }, now: number): void {
    const r = this.get(callId);
    if (!r) return;
    const plan = change.plan === undefined ? r.plan : change.plan;
    const gone = change.state === 'unchanged' || change.state === 'unavailable' || change.state === 'pruned';
    this.db.transaction(() => {
      this.stmts.update.run({
        callId,
        state: change.state,
        reason: change.reason === undefined ? r.reason : change.reason,
        plan: JSON.stringify(plan),
        undoneBy: change.undoneBy === undefined ? r.undoneBy : change.undoneBy,
        now,
      });
      if (gone && r.holds) {
        this.blobs.unref(planBlobs(r.plan));
        this.stmts.letGo.run({ callId, state: change.state, reason: change.reason === undefined ? r.reason : change.reason, now });
      }
    })();
    if (gone) this.releaseHeld(r.plan);
  }

  /**
   * A prepared record whose held files were read: its plan (now with their hashes and the after-states) and
   * state, taking a reference on the blobs it refers to now, in one transaction.
   */
  settle(callId: string, change: { state: UndoState; reason?: string | null; plan: SnapshotPlan }, contents: ReadonlyMap<string, Buffer>, now: number): void {
    const r = this.get(callId);
    if (!r) return;
    this.db.transaction(() => {
      const had = new Set(planBlobs(r.plan));
      const shas = planBlobs(change.plan).filter((sha) => !had.has(sha));
      this.refAll(shas, contents);
      this.stmts.update.run({ callId, state: change.state, reason: change.reason ?? r.reason, plan: JSON.stringify(change.plan), undoneBy: r.undoneBy, now });
      if (shas.length) this.stmts.hold.run(callId);
    })();
  }

  /** The links of held files that prepared records still need (kept by the start-up sweep). */
  heldNames(): string[] {
    return (this.stmts.prepared.all() as string[]).flatMap((id) => {
      const plan = this.get(id)?.plan;
      return plan?.kind === 'snapshot' ? plan.paths.flatMap((p) => (p.held ? [p.held.name] : [])) : [];
    });
  }

  /** Forget a record (a call that never ran), with its blobs. */
  remove(callId: string): void {
    const r = this.get(callId);
    if (!r) return;
    this.db.transaction(() => {
      if (r.holds) this.blobs.unref(planBlobs(r.plan));
      this.stmts.remove.run(callId);
    })();
    this.releaseHeld(r.plan);
  }

  /** Let go of the old files a plan still holds by a link. */
  releaseHeld(plan: UndoPlan | null): void {
    if (plan?.kind === 'snapshot') for (const p of plan.paths) if (p.held) this.blobs.release(p.held.name);
  }

  /**
   * While the kept bytes are over `totalBytes`, the oldest records holding blobs give them up (pruned), except
   * those in `keep`. Returns how many records were pruned.
   */
  prune(totalBytes: number, keep: ReadonlySet<string>, now: number): { records: number; callIds: string[] } {
    const pruned: string[] = [];
    const skipped = new Set<string>();
    while (this.blobs.totals().bytes > totalBytes) {
      const row = this.db
        .prepare(`SELECT * FROM undo_records WHERE holds = 1${skipped.size ? ` AND call_id NOT IN (${[...skipped].map(() => '?').join(',')})` : ''} ORDER BY created_at, rowid LIMIT 1`)
        .get(...skipped) as Row | undefined;
      if (!row) break;
      if (keep.has(row.call_id)) {
        skipped.add(row.call_id);
        continue;
      }
      this.update(row.call_id, { state: 'pruned', reason: `its snapshot was removed to keep snapshots under ${Math.round(totalBytes / (1024 * 1024))} MB (oldest go first)` }, now);
      pruned.push(row.call_id);
    }
    return { records: pruned.length, callIds: pruned };
  }

  /** Calls whose snapshot was taken but whose end was not journaled yet (to pick up again after a restart). */
  preparedIds(): string[] {
    return this.stmts.prepared.all() as string[];
  }

  /** Records holding snapshot bytes. */
  holding(): number {
    return Number(this.stmts.holding.get());
  }

  /** The newest call (not an undo) that can be undone, of one server or any. */
  newestReady(server: string | null): string | null {
    return (this.stmts.newestReady.get({ server }) as string | undefined) ?? null;
  }

  /** A session's journaled calls, newest first. */
  sessionCalls(sessionId: string): { id: string; tool: string; class: string | null; decision: string; outcome: string }[] {
    return this.stmts.sessionCalls.all(sessionId) as { id: string; tool: string; class: string | null; decision: string; outcome: string }[];
  }

  /** Snapshots taken before `before` for calls whose end was never journaled (their wrapper died): given up. */
  expirePrepared(before: number): void {
    for (const id of this.preparedIds()) {
      const r = this.get(id);
      // one whose after-states are recorded is finished at the start, however old (finish.ts `resume`)
      if (r && afterStatesRecorded(r.plan)) continue;
      if (r && r.createdAt < before) this.update(id, { state: 'unavailable', reason: "the call's end was never journaled (its wrapper stopped)" }, before);
    }
  }

  /** Records older than `before` whose call is no longer in the journal (pruned there): removed, with their blobs. */
  removeOrphans(before: number): number {
    const rows = this.stmts.orphans.all(before) as Row[];
    for (const row of rows) this.remove(row.call_id);
    return rows.length;
  }
}
