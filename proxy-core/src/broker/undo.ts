/**
 * Undo, the broker's side: which calls can be undone and how, taking file snapshots before a call of a file
 * tool runs (a wrapper asks, `call.prepare`, and waits), the state each file was left in once the call's end is
 * journaled, declared inverses, and undo / undo last / rollback of a session for the API.
 *
 * Snapshots: for a tool Airlock knows writes files (file-tools.ts), the prior state of each path it names
 * (bytes, mode, mtime; or absence, with the folders a `mkdir -p` would create; or a folder) is read before the
 * call is sent: its bytes copied into memory, or, for a file the server replaces rather than writes into (the
 * filesystem server's write_file and edit_file), the old file held by a hard link until the call is over.
 *
 * If that state cannot be read, the call is refused: the person approved a call that was going to be
 * undoable, and running it anyway would break that quietly. The bytes are written to the data dir while the
 * call runs (that write is most of a snapshot's cost); if that fails, the call is marked not undoable, an
 * event says why, and from then on each snapshot is stored before its call runs (or the call is refused)
 * until storing works again. A limit known in advance does not refuse a call: a file over the snapshot cap,
 * a relative path, something that is not a file, a path argument that is not a string (the server refuses
 * that one itself). Such a call runs, marked not undoable, with the reason in its history entry.
 */
import { randomBytes } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { isReadOnlyClass, type ToolClass } from '../classify/classify.js';
import { IpcError } from '../ipc/channel.js';
import type { MatchEnv } from '../policy/arg-conditions.js';
import { distinct, expandArgPath, readingsOf } from '../policy/path-resolve.js';
import { describeRule } from '../policy/decide.js';
import { ruleMatches } from '../policy/rules.js';
import { plannedUndo } from '../policy/undo-plan.js';
import type { BrokerEvent, HistoryItem, Rule } from '../protocol/api.js';
import type { CallSummary, EventDetails } from '../protocol/events.js';
import type { BrokerToWrapper } from '../protocol/names.js';
import { SETTINGS } from '../protocol/settings.js';
import type { DeclaredInverse, InverseDeclInput, PrepareAnswer, PrepareRequest, RollbackReport, SnapshotTotals, UndoInfo, Undoable, UndoReport } from '../protocol/undo-api.js';
import type { Clock } from '../util/clock.js';
import type { InverseDecl } from '../policy/undo-spec.js';
import { absoluteArgPath } from './arg-paths.js';
import type { FileTools, SnapshotArgs } from './file-tools.js';
import { Inverses } from './inverses.js';
import type { Session } from './sessions.js';
import { SnapshotBlobs, snapshotCaps, type SnapshotCaps } from './snapshots.js';
import type { Store } from './db/store.js';
import { driftSince, type FolderId, folderChain, folderChainOrNone } from './undo-dirs.js';
import { capture, currentState, type FileState, hold, readHeld, sameState, sha256, why } from './undo-files.js';
import { type PathEntry, type UndoRecord, UndoRecords } from './undo-records.js';
import { type InverseRecordDeps, recordInverse, type RunningInverse, sessionCommands, undoTicketMark } from './undo-inverse.js';
import { HASH_LIMIT, refused, runUndo, UNDO_ID_PREFIX, type UndoRunContext } from './undo-run.js';

type UndoEvent = 'undo' | 'undo-known' | 'rollback' | 'snapshots-pruned' | 'snapshot-failed' | 'inverse-declared' | 'inverse-removed' | 'inverse-refused';

export interface UndoOptions {
  store: Store;
  dataDir: string;
  clock: Clock;
  matchEnv: MatchEnv;
  fileTools: FileTools;
  sessions(): readonly Session[];
  request(sessionId: string, method: typeof BrokerToWrapper.callTool, params: unknown, timeoutMs: number): Promise<unknown>;
  estop(): boolean;
  /** How long a ticket waits for a person now (a held inverse may wait that long). */
  ticketTimeoutSeconds(): number;
  /** The user's rules: one that decides by whether a call can be undone must see a snapshot that failed. */
  rules(): readonly Rule[];
  record<K extends UndoEvent>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): void;
  publish(events: BrokerEvent[]): void;
  /** Push fresh policy to the sessions of a server (a declaration changes the evidence they classify with). */
  push(server: string): Promise<void>;
}

const CAP_DEFAULTS = { fileMb: Number(SETTINGS['snapshot-file-mb'].fallback), totalMb: Number(SETTINGS['snapshot-total-mb'].fallback) };
const MAX_PATH_ARG = 4096;
const DAY_MS = 24 * 60 * 60 * 1000;

export class Undo {
  readonly inverses: Inverses;
  private readonly blobs: SnapshotBlobs;
  private readonly records: UndoRecords;
  /** Calls snapshotted and not journaled as finished yet. */
  private readonly prepared: Set<string>;
  /** After-states being read, by call: an undo of that call waits for it. */
  private readonly finishing = new Map<string, Promise<void>>();
  /** Snapshots being stored, by call: the call's end (and an undo) waits for its snapshot. */
  private readonly storing = new Map<string, Promise<void>>();
  /** Why the last snapshot could not be stored (null: storing works). */
  private storageFailed: string | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly run: UndoRunContext;
  private readonly inverseRecords: InverseRecordDeps;
  /** Inverses on their way to a wrapper, by undo id (a ticket one of them asks for is marked as an undo). */
  private readonly running = new Map<string, RunningInverse>();

  constructor(private readonly o: UndoOptions) {
    const db = o.store.db;
    this.blobs = new SnapshotBlobs(o.dataDir, db);
    this.records = new UndoRecords(db, this.blobs);
    try {
      this.blobs.open(this.records.heldNames());
    } catch (err) {
      // snapshots cannot be stored: a call of a file tool stores its snapshot first, and is refused if it cannot
      this.storageFailed = why(err);
    }
    this.records.removeOrphans(o.clock.now() - DAY_MS);
    this.records.expirePrepared(o.clock.now() - DAY_MS);
    this.prepared = new Set(this.records.preparedIds());
    this.inverses = new Inverses({
      db,
      now: () => o.clock.now(),
      listed: (server) => o.store.catalog(server).map((t) => t.name),
      denies: (server, client, tool) => this.deniedBy(server, client, tool),
      record: (type, server, tool, detail) => o.record(type, server, tool, detail),
    });
    this.run = {
      store: o.store,
      records: this.records,
      blobs: this.blobs,
      readBefore: (entry) =>
        entry.held ? readHeld(this.blobs.heldPath(entry.held.name), entry.held) : entry.before.type === 'file' ? this.blobs.read(entry.before.sha256) : Promise.reject(new Error('not a file')),
      clock: o.clock,
      caps: () => this.caps(),
      estop: o.estop,
      sessions: o.sessions,
      request: o.request,
      ticketTimeoutSeconds: o.ticketTimeoutSeconds,
      sessionCommand: sessionCommands(db),
      running: this.running,
      record: (type, server, tool, detail) => o.record(type, server, tool, detail),
      publish: o.publish,
      prune: (keep) => this.prune(keep),
    };
    this.inverseRecords = {
      records: this.records,
      store: o.store,
      now: () => o.clock.now(),
      declaration: (server, sessionId, tool) => this.inverses.forCall(server, sessionId, tool),
      sessionCommand: this.run.sessionCommand,
    };
  }

  /** A rule that denies calls of `tool` of `server` (for `client`, or for any client when undefined), in words. */
  private deniedBy(server: string, client: string | undefined, tool: string): string | undefined {
    const rule = this.o.rules().find(
      (r) => r.action === 'deny' && ruleMatches({ ...r, ...(client === undefined ? { client: undefined } : {}) }, { server, tool, client: client ?? '' }, this.o.matchEnv),
    );
    return rule ? `rule ${rule.id} (${describeRule(rule)}) denies it` : undefined;
  }

  /** A ticket asked for by a call the broker sent for an undo: marked so, with what it undoes. */
  ticketUndo(session: Session, callId: string, tool: string): { undoOf: string; reason: string } | undefined {
    return undoTicketMark(this.running, session, callId, tool);
  }

  caps(): SnapshotCaps {
    return snapshotCaps((key) => this.o.store.getSetting(key), CAP_DEFAULTS);
  }

  // ---- what a wrapper's policy carries -------------------------------------------------------------------

  /** The tools of a session's server whose files are snapshotted, with their path arguments. */
  snapshotTools(session: Session): Record<string, string[]> {
    return this.o.fileTools.snapshotTools(session.info.server);
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

  async declare(p: InverseDeclInput & { server: string }): Promise<DeclaredInverse> {
    const { server, ...decl } = p;
    const out = this.inverses.set(server, decl);
    await this.o.push(server);
    return out;
  }

  async removeDeclaration(server: string, tool: string): Promise<{ ok: true }> {
    const out = this.inverses.remove(server, tool);
    await this.o.push(server);
    return out;
  }

  // ---- before a call: the ticket, the snapshot -----------------------------------------------------------

  /** What a ticket says before approval: how the call would be undone, or null. */
  ticketUndoable(session: Session, tool: string, args: unknown): Undoable {
    const server = session.info.server;
    const spec = this.o.fileTools.snapshotArgs(server, tool);
    // arguments cut for the ticket are not known here: the wrapper sends the paths themselves before the call
    if (spec && (typeof args !== 'object' || args === null)) return { kind: 'snapshot' };
    const inverse = spec ? undefined : this.inverses.usable(server, session.info.id, tool);
    const plan = plannedUndo({ pathArgs: spec?.args, inverse: inverse !== undefined }, args as Record<string, unknown>, (v) => this.absolute(v) !== null);
    if (plan === 'snapshot') return { kind: 'snapshot' };
    return plan === 'inverse' && inverse ? { kind: 'inverse', inverse: inverse.inverse } : null;
  }

  /** Does a rule decide this call's server and tool by whether it can be undone (`undoable` on a rule)? */
  private ruleOnUndo(session: Session, tool: string): Rule | undefined {
    return this.o.rules().find((r) => r.undoable !== undefined && ruleMatches({ ...r, args: undefined, undoable: undefined }, { server: session.info.server, client: session.info.client, tool }));
  }

  private absolute(value: string): string | null {
    // a relative path is resolved by the server its own way (the filesystem server: against its allowed
    // folders), which Airlock cannot know: it is not snapshotted rather than snapshotted at a guess
    const abs = absoluteArgPath(value, this.o.matchEnv, undefined);
    return abs !== null && isAbsolute(abs) ? abs : null;
  }

  /** A wrapper is about to send a call of a file tool: record the prior state of every path it names. */
  async prepare(session: Session, p: PrepareRequest): Promise<PrepareAnswer> {
    const server = session.info.server;
    const spec = this.o.fileTools.snapshotArgs(server, p.tool);
    if (!spec) return { ok: true, undoable: false, reason: `${p.tool} is not a tool whose files Airlock snapshots` };
    await this.storing.get(p.callId);
    const existing = this.records.get(p.callId);
    if (existing) return { ok: true, undoable: existing.state === 'prepared', ...(existing.reason ? { reason: existing.reason } : {}) };
    const base = { callId: p.callId, server, tool: p.tool, sessionId: session.info.id, kind: 'snapshot' as const, createdAt: this.o.clock.now(), undoneBy: null, undoOf: null };
    const entries: PathEntry[] = [];
    const contents = new Map<string, Buffer>();
    const early = await this.readPaths(spec, p.paths, entries, contents);
    if (early) {
      // nothing of this call is kept
      this.records.releaseHeld({ kind: 'snapshot', paths: entries });
      if (early.kind === 'refuse') return refusal(early.reason);
      // the wrapper judged this call undoable (its paths are absolute); a rule that decided on that must not
      // let it run now that it is not
      const rule = plannedUndo({ pathArgs: spec.args, inverse: false }, p.paths, (v) => this.absolute(v) !== null) === 'snapshot' ? this.ruleOnUndo(session, p.tool) : undefined;
      if (rule) {
        const reason = `this call could not be undone after all (${early.reason}), and rule ${rule.id} (${describeRule(rule)}) decides by whether a call can be undone, so it was not run`;
        return { ok: false, undoable: false, reason };
      }
      try {
        this.records.insert({ ...base, state: 'unavailable', reason: early.reason, plan: { kind: 'snapshot', paths: [] } });
      } catch {
        // the history entry will only say less
      }
      return { ok: true, undoable: false, reason: early.reason };
    }
    const rec = { ...base, state: 'prepared' as const, reason: null, plan: { kind: 'snapshot' as const, paths: entries } };
    if (this.storageFailed !== null) {
      // the last snapshot could not be stored: this one is stored before the call runs, or the call does not run
      try {
        await this.persist(rec, contents);
      } catch (err) {
        this.storageFailed = why(err);
        return refusal(`the snapshot of ${entries.map((e) => e.path).join(', ')} (${why(err)})`);
      }
      this.storageFailed = null;
      this.prepared.add(p.callId);
      return { ok: true, undoable: true };
    }
    // The prior state is read (bytes in memory and hashed, or the old file held by a link): the call may run. It
    // is written out right after this answer leaves, while the server runs the call: that write is most of what
    // a snapshot costs. Should it fail, the call is marked not undoable (an event says so), and the next
    // snapshot is stored before its call is let through.
    this.prepared.add(p.callId);
    this.storeLater(rec, contents);
    return { ok: true, undoable: true };
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
    const caps = this.caps();
    const notUndoable = (reason: string) => ({ kind: 'not-undoable' as const, reason });
    for (const arg of spec.args) {
      const value = paths[arg];
      if (typeof value !== 'string' || value === '' || value.length > MAX_PATH_ARG || value.includes('\0')) {
        return notUndoable(`its ${arg} argument is not a path Airlock can snapshot`);
      }
      const abs = this.absolute(value);
      if (abs === null) return notUndoable(`its ${arg} argument is a relative path: which file the server resolves it to is the server's business`);
      // a `..` after a symlink names two files (the kernel's and a text-normalising server's): both are kept
      let reals: string[];
      try {
        reals = distinct(readingsOf(expandArgPath(value, this.o.matchEnv) ?? abs, this.o.matchEnv));
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
        const name = spec.replaces && this.storageFailed === null ? `.held-${randomBytes(8).toString('hex')}` : null;
        const kept = name ? hold(real, this.blobs.heldPath(name), name) : null;
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
    for (const [sha, content] of contents) await this.blobs.write(sha, content);
    this.records.insert(rec, contents);
    this.prune(new Set([rec.callId]));
  }

  private storeLater(rec: Omit<UndoRecord, 'holds'>, contents: ReadonlyMap<string, Buffer>): void {
    const done = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.persist(rec, contents))
      .catch((err: unknown) => {
        this.storageFailed = why(err);
        const reason = `its snapshot could not be stored (${why(err)}); the call had already been let through`;
        try {
          this.records.insert({ ...rec, state: 'unavailable', reason, plan: { kind: 'snapshot', paths: [] } });
        } catch {
          // the event below still says it
        }
        this.records.releaseHeld(rec.plan);
        this.o.record('snapshot-failed', rec.server, rec.tool, { callId: rec.callId, error: why(err) });
      })
      .finally(() => this.storing.delete(rec.callId));
    this.storing.set(rec.callId, done);
  }

  // ---- after a call: its journal entry -------------------------------------------------------------------

  /** Calls journaled (a batch's events): a snapshotted call that ended gets its after-state; an inverse its plan. */
  journaled(events: readonly BrokerEvent[]): void {
    for (const e of events) {
      if (e.type !== 'call') continue;
      const d = e.detail as CallSummary;
      if (d.outcome === 'pending' || d.finishedAt === null || d.finishedAt === undefined) continue;
      if (this.prepared.has(d.id)) {
        this.prepared.delete(d.id);
        this.track(d.id, this.finish(d).then(() => this.known(d)));
      } else if (d.decision === 'allow' && d.outcome === 'ok' && !d.id.startsWith(UNDO_ID_PREFIX) && this.inverses.mayHave(d.server, d.tool)) {
        recordInverse(this.inverseRecords, d);
        this.known(d);
      }
    }
  }

  /** Resolves once the after-states being read now are recorded (what a history page read next will show). */
  async idle(): Promise<void> {
    while (this.finishing.size > 0 || this.storing.size > 0) await Promise.all([...this.finishing.values(), ...this.storing.values()]);
  }

  /** Say what undo can do for a call that ended (a front end's Undo button follows this). */
  private known(d: CallSummary): void {
    const r = this.records.get(d.id);
    if (r) this.o.record('undo-known', d.server, d.tool, { callId: d.id, undo: undoInfo({ decision: 'allow', outcome: 'ok', id: d.id }, r) });
  }

  private track(callId: string, work: Promise<void>): void {
    const done = work.catch(() => {}).finally(() => {
      if (this.finishing.get(callId) === done) this.finishing.delete(callId);
    });
    this.finishing.set(callId, done);
  }

  /**
   * The state a snapshotted call left its files in: what an undo checks the files against. The old files held by
   * a link are read now (their bytes kept as snapshots), if the server left them as they were.
   */
  private async finish(d: CallSummary): Promise<void> {
    await this.storing.get(d.id);
    const rec = this.records.get(d.id);
    if (!rec || rec.state !== 'prepared' || rec.plan?.kind !== 'snapshot') return;
    if (d.outcome === 'not-run') return this.records.remove(d.id);
    const now = () => this.o.clock.now();
    // a symlink or folder on the way changed while the call ran: which file it wrote is not known
    const drift = driftSince(rec.plan.paths, this.o.matchEnv);
    if (drift) {
      this.records.update(d.id, { state: 'unavailable', reason: drift }, now());
      this.records.releaseHeld(rec.plan);
      return;
    }
    const contents = new Map<string, Buffer>();
    const paths: PathEntry[] = [];
    for (const p of rec.plan.paths) {
      const after = await currentState(p.path, HASH_LIMIT);
      const dirsAfter = folderChainOrNone(p.path);
      if (!p.held) {
        paths.push({ ...p, after, ...(dirsAfter ? { dirsAfter } : {}) });
        continue;
      }
      let bytes: Buffer;
      try {
        bytes = await readHeld(this.blobs.heldPath(p.held.name), p.held);
      } catch (err) {
        this.records.update(d.id, { state: 'unavailable', reason: `${p.path}: ${why(err)}` }, now());
        return;
      }
      const sha = sha256(bytes);
      contents.set(sha, bytes);
      const { held: _held, ...entry } = p;
      paths.push({ ...entry, before: { ...(p.before as Extract<FileState, { type: 'file' }>), sha256: sha }, after, ...(dirsAfter ? { dirsAfter } : {}) });
    }
    const plan = { kind: 'snapshot' as const, paths };
    if (!paths.some((p) => !sameState(p.before, p.after))) {
      this.records.update(d.id, { state: 'unchanged', reason: 'the call left its files as they were', plan }, now());
      return;
    }
    try {
      for (const [sha, bytes] of contents) await this.blobs.write(sha, bytes);
      this.records.settle(d.id, { state: 'ready', plan }, contents, now());
    } catch (err) {
      this.records.update(d.id, { state: 'unavailable', reason: `its snapshot could not be stored (${why(err)})` }, now());
      this.o.record('snapshot-failed', rec.server, rec.tool, { callId: d.id, error: why(err) });
      return;
    } finally {
      this.records.releaseHeld(rec.plan);
    }
    if (contents.size) this.prune(new Set([d.id]));
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
      const pruned = this.records.prune(this.caps().totalBytes, keep, this.o.clock.now());
      if (pruned.records > 0) this.o.record('snapshots-pruned', null, null, { records: pruned.records, callIds: pruned.callIds.slice(0, 100), ...this.blobs.totals() });
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
    return this.serial(() => this.undoOne(callId, force));
  }

  /** Undo the newest call (of one server, or any) that can be undone. */
  undoLast(server: string | undefined, force: boolean): Promise<UndoReport> {
    return this.serial(async () => {
      await this.idle();
      const id = this.records.newestReady(server ?? null);
      if (!id) return refused({ callId: '', kind: null }, server ? `no call of ${server} can be undone` : 'no call can be undone');
      return this.undoOne(id, force);
    });
  }

  /** Undo every call of a session that can be, newest first; one that fails is reported, and the rest still run. */
  rollback(sessionId: string, force: boolean): Promise<RollbackReport> {
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
      this.o.record('rollback', null, null, { sessionId, undone: report.undone, failed: report.failed, skipped: skipped.length });
      return report;
    });
  }

  private async undoOne(callId: string, force: boolean): Promise<UndoReport> {
    await this.finishing.get(callId);
    const rec = this.records.get(callId);
    if (!rec) {
      const call = this.o.store.call(callId);
      if (!call) throw new IpcError('not-found', `no call ${callId} in the journal (see \`airlock history --json\`)`);
      return refused({ callId, kind: null }, undoInfo(call, undefined).reason ?? 'this call cannot be undone');
    }
    if (rec.state === 'ready' || rec.state === 'failed' || (rec.state === 'prepared' && force)) return runUndo(this.run, rec, force);
    if (rec.state === 'prepared') {
      return refused(rec, "the call's end has not been journaled, so Airlock cannot tell what it changed; force puts back the files as they were before it anyway");
    }
    return refused(rec, stateReason(rec));
  }
}

function refusal(reason: string): PrepareAnswer {
  return { ok: false, undoable: false, reason: `Airlock could not record ${reason} before the call, so the call was not run (it would not have been undoable)` };
}

function mb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 1024 * 1024 ? 2 : 1)} MB`;
}

function stateReason(r: UndoRecord): string {
  switch (r.state) {
    case 'undone':
      return `already undone${r.undoneBy ? ` (by ${r.undoneBy})` : ''}`;
    case 'unchanged':
      return r.reason ?? 'the call left its files as they were: nothing to undo';
    case 'prepared':
      return "the call's end has not been journaled yet";
    default:
      return r.reason ?? `cannot be undone (${r.state})`;
  }
}

/** What a history entry says about undoing its call. */
export function undoInfo(c: Pick<HistoryItem, 'decision' | 'outcome' | 'id'>, r: UndoRecord | undefined): UndoInfo {
  if (!r) {
    if (c.decision !== 'allow' || c.outcome === 'not-run') return { available: false, kind: null, reason: 'the call did not run' };
    if (c.outcome === 'pending') return { available: false, kind: null, reason: 'the call has not finished' };
    return { available: false, kind: null, reason: 'neither a file snapshot nor a declared inverse covers this tool' };
  }
  const info: UndoInfo = { available: r.state === 'ready' || r.state === 'failed', kind: r.kind, state: r.state };
  if (r.state !== 'ready') info.reason = stateReason(r);
  if (r.plan?.kind === 'snapshot' && r.plan.paths.length) info.paths = [...new Set(r.plan.paths.map((p) => p.path))];
  if (r.plan?.kind === 'inverse') info.inverse = r.plan.inverse;
  if (r.undoneBy) info.undoneBy = r.undoneBy;
  if (r.undoOf) info.undoOf = r.undoOf;
  return info;
}
