/**
 * Undo, the broker's side: which calls can be undone and how, and undo / undo last / rollback of a session for
 * the API. Its parts: file snapshots taken before a call of a file tool runs (prepare.ts), what a call left once
 * its end is journaled (finish.ts), declared inverses (inverses.ts, inverse.ts), running an undo (run.ts), what
 * a history entry says (info.ts). What it needs of the broker comes through one port (port.ts).
 */
import type { Via } from '../../protocol/presence.js';
import { isReadOnlyClass, type ToolClass } from '../../classify/classify.js';
import { IpcError } from '../../ipc/channel.js';
import { describeRule } from '../../policy/decide.js';
import { ruleMatches } from '../../policy/rules.js';
import { plannedUndo } from '../../policy/undo-plan.js';
import type { HistoryItem } from '../../protocol/api.js';
import type { StoredCallSummary } from '../../protocol/events.js';
import { SETTINGS } from '../../protocol/settings.js';
import type { DeclaredInverse, InverseDeclInput, PrepareAnswer, PrepareRequest, RollbackReport, SnapshotTotals, Undoable, UndoReport } from '../../protocol/undo-api.js';
import type { InverseDecl } from '../../policy/undo-spec.js';
import type { Session } from '../sessions.js';
import { refused, type RunningInverse, type UndoContext } from './context.js';
import { CallEnds } from './finish.js';
import { readHeld, why } from './files.js';
import { stateReason, undoInfo } from './info.js';
import { sessionCommands, undoTicketMark } from './inverse.js';
import { Inverses } from './inverses.js';
import type { UndoPort } from './port.js';
import { CallSnapshots, snapshotPath } from './prepare.js';
import { UndoRecords } from './records.js';
import { runUndo } from './run.js';
import { SnapshotBlobs, snapshotCaps, type SnapshotCaps } from './snapshots.js';

const CAP_DEFAULTS = { fileMb: Number(SETTINGS['snapshot-file-mb'].fallback), totalMb: Number(SETTINGS['snapshot-total-mb'].fallback) };
const DAY_MS = 24 * 60 * 60 * 1000;

export class Undo {
  readonly inverses: Inverses;
  private readonly blobs: SnapshotBlobs;
  private readonly records: UndoRecords;
  private readonly ctx: UndoContext;
  /** Before a call: its snapshot. */
  private readonly before: CallSnapshots;
  /** After a call's end is journaled: what it left. */
  private readonly after: CallEnds;
  private queue: Promise<unknown> = Promise.resolve();
  /** Inverses on their way to a wrapper, by undo id (a ticket one of them asks for is marked as an undo). */
  private readonly running = new Map<string, RunningInverse>();

  constructor(private readonly port: UndoPort) {
    const db = port.store.db;
    this.blobs = new SnapshotBlobs(port.dataDir, db);
    this.records = new UndoRecords(db, this.blobs);
    let storageFailed: string | null = null;
    try {
      this.blobs.open(this.records.heldNames());
    } catch (err) {
      // snapshots cannot be stored: a call of a file tool stores its snapshot first, and is refused if it cannot
      storageFailed = why(err);
    }
    this.records.removeOrphans(port.clock.now() - DAY_MS);
    this.records.expirePrepared(port.clock.now() - DAY_MS);
    this.inverses = new Inverses({
      db,
      now: () => port.clock.now(),
      listed: (server) => port.store.catalog(server).map((t) => t.name),
      denies: (server, client, tool) => this.deniedBy(server, client, tool),
      record: (type, server, tool, detail) => port.record(type, server, tool, detail),
      seals: port.store,
    });
    this.ctx = {
      port,
      records: this.records,
      blobs: this.blobs,
      caps: () => this.caps(),
      prune: (keep) => this.prune(keep),
      // async: a held link's path can throw (the snapshots folder checked again and refused), a rejection as a read's
      readBefore: async (entry) => {
        if (entry.held) return readHeld(this.blobs.heldPath(entry.held.name), entry.held);
        if (entry.before.type === 'file') return this.blobs.read(entry.before.sha256);
        throw new Error('not a file');
      },
      sessionCommand: sessionCommands(db),
      running: this.running,
    };
    this.before = new CallSnapshots(this.ctx, this.records.preparedIds(), storageFailed);
    this.after = new CallEnds(this.ctx, this.before, this.inverses, {
      records: this.records,
      store: port.store,
      now: () => port.clock.now(),
      declaration: (server, sessionId, tool) => this.inverses.forCall(server, sessionId, tool),
      sessionCommand: this.ctx.sessionCommand,
    });
    // what the last run left half-recorded (stopped between a call's after-states and its end) is finished now
    this.after.resume();
  }

  /** A rule that denies calls of `tool` of `server` (for `client`, or for any client when undefined), in words. */
  private deniedBy(server: string, client: string | undefined, tool: string): string | undefined {
    const rule = this.port.rules().find(
      (r) => r.action === 'deny' && ruleMatches({ ...r, ...(client === undefined ? { client: undefined } : {}) }, { server, tool, client: client ?? '' }, this.port.matchEnv),
    );
    return rule ? `rule ${rule.id} (${describeRule(rule)}) denies it` : undefined;
  }

  /** A ticket asked for by a call the broker sent for an undo: marked so, with what it undoes. */
  ticketUndo(session: Session, callId: string, tool: string): { undoOf: string; reason: string } | undefined {
    return undoTicketMark(this.running, session, callId, tool);
  }

  caps(): SnapshotCaps {
    return snapshotCaps((key) => this.port.store.getSetting(key), CAP_DEFAULTS);
  }

  // ---- what a wrapper's policy carries -------------------------------------------------------------------

  /** The tools of a session's server whose files are snapshotted, with their path arguments. */
  snapshotTools(session: Session): Record<string, string[]> {
    return this.port.fileTools.snapshotTools(session.info.server);
  }

  /** The tools of a session whose declared inverse it can count on (policy/undo-plan.ts). */
  inverseTools(session: Session): string[] {
    return this.inverses.usableTools(session.info.server, session.info.id);
  }

  /** Read-only claims the session must not believe: tools with a declared inverse. */
  evidence(session: Session): Record<string, string> {
    return this.inverses.evidence(session.info.server, session.info.id);
  }

  sessionOpened(session: Session, decls: readonly InverseDeclInput[] | undefined): void {
    this.inverses.sessionOpened(session.info.id, session.info.server, session.info.client, decls as InverseDecl[] | undefined);
  }

  /** The wrapper's catalog arrived: its `--undo` flags are checked against it; true when its policy must change. */
  catalogReported(session: Session, verdicts: readonly unknown[]): boolean {
    const names = verdicts.flatMap((v) => (typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string' ? [(v as { name: string }).name] : []));
    return this.inverses.catalogReported(session.info.id, names);
  }

  sessionClosed(session: Session): void {
    this.inverses.sessionClosed(session.info.id);
  }

  // ---- declared inverses (the API) -----------------------------------------------------------------------

  declarations(): DeclaredInverse[] {
    return this.inverses.list();
  }

  async declare(p: InverseDeclInput & { server: string }, via?: Via): Promise<DeclaredInverse> {
    const { server, ...decl } = p;
    const out = this.inverses.set(server, decl, via);
    await this.port.push(server);
    return out;
  }

  async removeDeclaration(server: string, tool: string): Promise<{ ok: true }> {
    const out = this.inverses.remove(server, tool);
    await this.port.push(server);
    return out;
  }

  // ---- before a call: the ticket, the snapshot -----------------------------------------------------------

  /** What a ticket says before approval: how the call would be undone, or null. */
  ticketUndoable(session: Session, tool: string, args: unknown): Undoable {
    const server = session.info.server;
    const spec = this.port.fileTools.snapshotArgs(server, tool);
    // arguments cut for the ticket are not known here: the wrapper sends the paths themselves before the call
    if (spec && (typeof args !== 'object' || args === null)) return { kind: 'snapshot' };
    const inverse = spec ? undefined : this.inverses.usable(server, session.info.id, tool);
    const plan = plannedUndo({ pathArgs: spec?.args, inverse: inverse !== undefined }, args as Record<string, unknown>, (v) => snapshotPath(v, this.port.matchEnv) !== null);
    if (plan === 'snapshot') return { kind: 'snapshot' };
    return plan === 'inverse' && inverse ? { kind: 'inverse', inverse: inverse.inverse } : null;
  }

  /** A wrapper is about to send a call of a file tool: record the prior state of every path it names (prepare.ts). */
  async prepare(session: Session, p: PrepareRequest): Promise<PrepareAnswer> {
    // what the wrapper's calls answered since its last prepare left in their files, read before this one runs
    if (p.finished?.length) await this.after.ended(session.info.id, p.finished);
    return this.before.prepare(session, p);
  }

  // ---- after a call: its journal entry -------------------------------------------------------------------

  /** Calls the journal committed, handed over by the journal writer after the commit (finish.ts). */
  journaled(calls: readonly StoredCallSummary[]): void {
    this.after.journaled(calls);
  }

  /** Calls being filed, inside the journal's transaction (finish.ts `filing`). */
  filing(calls: readonly StoredCallSummary[]): void {
    this.after.filing(calls);
  }

  /** Whether a snapshotted call awaits its end (a journal batch is then read as it arrives: `takenIn`). */
  get awaitingEnds(): boolean {
    return this.before.prepared.size > 0;
  }

  /**
   * A journal batch of `sessionId` was taken in (unchecked entries): the snapshotted calls it says their servers
   * answered have their after-states read now, as when the wrapper's next prepare says so, not once the batch is
   * filed into the journal (which may be seconds later, after more calls changed the same files).
   */
  takenIn(sessionId: string, entries: readonly unknown[]): void {
    const answered: string[] = [];
    for (const e of entries) {
      if (typeof e !== 'object' || e === null) continue;
      const { id, outcome, forwardedAt } = e as { id?: unknown; outcome?: unknown; forwardedAt?: unknown };
      if (typeof id === 'string' && typeof forwardedAt === 'number' && outcome !== 'pending' && outcome !== 'not-run' && this.before.prepared.has(id)) answered.push(id);
    }
    if (answered.length > 0) void this.after.ended(sessionId, answered);
  }

  /** Resolves once the after-states being read now are recorded (what a history page read next will show). */
  idle(): Promise<void> {
    return this.after.idle();
  }

  // ---- reading -------------------------------------------------------------------------------------------

  /** A history page, each entry with what undo can do for it. */
  annotate<T extends { calls: HistoryItem[] }>(page: T): T {
    const records = this.records.many(page.calls.map((c) => c.id));
    for (const c of page.calls) c.undo = undoInfo(c, records.get(c.id));
    return page;
  }

  totals(): SnapshotTotals {
    const caps = this.caps();
    return { records: this.records.holding(), ...this.blobs.totals(), fileCapBytes: caps.fileBytes, totalCapBytes: caps.totalBytes };
  }

  private prune(keep: ReadonlySet<string>): void {
    try {
      const pruned = this.records.prune(this.caps().totalBytes, keep, this.port.clock.now());
      if (pruned.records > 0) this.port.record('snapshots-pruned', null, null, { records: pruned.records, callIds: pruned.callIds.slice(0, 100), ...this.blobs.totals() });
    } catch {
      // over the cap for now; the next snapshot tries again
    }
  }

  // ---- undoing -------------------------------------------------------------------------------------------

  /** One undo at a time: two undos of the same files never interleave. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => {});
    return next;
  }

  /** Undo one journaled call; a failure is in the report (residue), never thrown. */
  undo(callId: string, force: boolean): Promise<UndoReport> {
    // the journal first holds every batch taken in: its calls' ends reach undo's bookkeeping now
    this.port.store.caughtUp();
    return this.serial(() => this.undoOne(callId, force));
  }

  /** Undo the newest call (of one server, or any) that can be undone. */
  undoLast(server: string | undefined, force: boolean): Promise<UndoReport> {
    this.port.store.caughtUp();
    return this.serial(async () => {
      await this.idle();
      const id = this.records.newestReady(server ?? null);
      if (!id) return refused({ callId: '', kind: null }, server ? `no call of ${server} can be undone` : 'no call can be undone');
      return this.undoOne(id, force);
    });
  }

  /** Undo every call of a session that can be, newest first; one that fails is reported, and the rest still run. */
  rollback(sessionId: string, force: boolean): Promise<RollbackReport> {
    this.port.store.caughtUp();
    return this.serial(async () => {
      await this.idle();
      const calls = this.records.sessionCalls(sessionId);
      if (calls.length === 0) throw new IpcError('not-found', `no calls are journaled for session ${sessionId} (see \`airlock status\` or \`airlock history --json\`)`);
      const records = this.records.many(calls.map((c) => c.id));
      const results: UndoReport[] = [];
      const skipped: RollbackReport['skipped'] = [];
      for (const c of calls) {
        if (c.decision !== 'allow' || c.outcome === 'not-run') continue;
        const r = records.get(c.id);
        if (r && (r.state === 'ready' || r.state === 'failed' || (r.state === 'prepared' && force))) {
          results.push(await this.undoOne(c.id, force));
          continue;
        }
        if (r?.state === 'unchanged' || (!r && isReadOnlyClass((c.class ?? 'unclassifiable') as ToolClass))) continue;
        skipped.push({ callId: c.id, tool: c.tool, reason: r ? stateReason(r) : 'neither a file snapshot nor a declared inverse covers this tool' });
      }
      const report: RollbackReport = {
        sessionId,
        results,
        skipped,
        undone: results.filter((r) => r.ok).length,
        failed: results.filter((r) => !r.ok).length,
      };
      this.port.record('rollback', null, null, { sessionId, undone: report.undone, failed: report.failed, skipped: skipped.length });
      return report;
    });
  }

  private async undoOne(callId: string, force: boolean): Promise<UndoReport> {
    await this.after.settled(callId);
    const rec = this.records.get(callId);
    if (!rec) {
      const call = this.port.store.call(callId);
      if (!call) throw new IpcError('not-found', `no call ${callId} in the journal (see \`airlock history --json\`)`);
      return refused({ callId, kind: null }, undoInfo(call, undefined).reason ?? 'this call cannot be undone');
    }
    if (rec.state === 'ready' || rec.state === 'failed' || (rec.state === 'prepared' && force)) return runUndo(this.ctx, rec, force);
    if (rec.state === 'prepared') {
      return refused(rec, 'Airlock has not recorded what the call left in its files, so it cannot tell what the call changed; force puts back the files as they were before it anyway');
    }
    return refused(rec, stateReason(rec));
  }
}
