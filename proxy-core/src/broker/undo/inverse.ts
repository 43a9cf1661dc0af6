/**
 * Undo by a declared inverse. The inverse is a tools/call like any other: the broker asks a wrapper of the
 * call's own server to run it (`wrapper.call-tool`), and the wrapper runs it through its call pipeline
 * (wrap/undo-caller.ts): classification, rules, pins, E-Stop, a ticket when it asks (marked here as an undo,
 * showing the inverse's arguments), the tripwire's count, and the journal, under the undo's id, saying what it
 * undoes, who asked for it and what decided it. A denial or a ticket that times out is an undo not done.
 *
 * "The call's own server" is the command and arguments its session was started with (kept with the undo
 * record), under the same name: never whichever wrapper has the name. With no such wrapper connected the undo
 * is refused with what to start; the broker does not start the server itself (a command a wrapper reported is
 * not one to run on the person's say-so of "undo", and without the client's environment the server would not
 * be the same one anyway).
 */
import type Database from 'better-sqlite3';
import type { CallRecord, HistoryItem } from '../../protocol/api.js';
import type { CallSummary } from '../../protocol/events.js';
import { LIMITS } from '../../protocol/limits.js';
import { BrokerToWrapper } from '../../protocol/names.js';
import type { UndoReport } from '../../protocol/undo-api.js';
import { formatUndoSpec, inverseArguments, type InverseDecl } from '../../policy/undo-spec.js';
import { isDiskError } from '../db/files.js';
import type { Session } from '../sessions.js';
import type { InversePlan, UndoRecord, UndoRecords } from './records.js';
import { newUndoId, refused, type RunningInverse, type UndoContext } from './context.js';

/** How long the server may take with the inverse once it is sent (on top of a ticket's timeout). */
const SERVER_MS = 30_000;
/** The broker waits this much longer than the wrapper does, so it hears how the call ended. */
const GRACE_MS = 5_000;

/** The command a session was started with, from the sessions table (null: unknown, or unreadable). */
export function sessionCommands(db: Database.Database): (sessionId: string) => string[] | null {
  const stmt = db.prepare('SELECT command FROM sessions WHERE id = ?').pluck();
  return (sessionId) => {
    try {
      const parsed = JSON.parse(String(stmt.get(sessionId) ?? 'null')) as unknown;
      return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? (parsed as string[]) : null;
    } catch {
      return null;
    }
  };
}

/** What a held inverse's ticket says first, when the call asking is one the broker sent for an undo. */
export function undoTicketMark(running: ReadonlyMap<string, RunningInverse>, session: Session, callId: string, tool: string): { undoOf: string; reason: string } | undefined {
  const r = running.get(callId);
  if (!r || r.sessionId !== session.info.id || r.inverse !== tool) return undefined;
  return { undoOf: r.callId, reason: `an undo you asked for: ${tool} undoes call ${r.callId} (${r.tool}); approve it to run the undo, deny it to leave that call as it is` };
}

export interface InverseRecordDeps {
  records: UndoRecords;
  store: { call(id: string): HistoryItem | null };
  now(): number;
  declaration(server: string, sessionId: string | null | undefined, tool: string): InverseDecl | undefined;
  sessionCommand(sessionId: string): string[] | null;
}

/**
 * A call with a declared inverse ended: its undo record, with the inverse's arguments and its server's command.
 * Inside the transaction that files the call (`withinFiling`), a disk error is thrown: that filing fails whole and
 * is tried again, rather than commit the call without its record.
 */
export function recordInverse(deps: InverseRecordDeps, d: Pick<CallSummary, 'id' | 'server' | 'tool'>, withinFiling = false): void {
  try {
    if (deps.records.get(d.id)) return;
    const call = deps.store.call(d.id);
    if (!call) return;
    const decl = deps.declaration(d.server, call.sessionId, d.tool);
    if (!decl) return;
    const base = { callId: d.id, server: d.server, tool: d.tool, sessionId: call.sessionId ?? null, kind: 'inverse' as const, createdAt: deps.now(), undoneBy: null, undoOf: null };
    const source = inverseSource(decl, call);
    const args = 'reason' in source ? source : inverseArguments(decl, source.value);
    if (!args.ok) {
      deps.records.insert({ ...base, state: 'unavailable', reason: args.reason, plan: null });
      return;
    }
    const command = call.sessionId ? deps.sessionCommand(call.sessionId) : null;
    const plan: InversePlan = { kind: 'inverse', inverse: decl.inverse, arguments: args.args, spec: formatUndoSpec(decl), ...(command ? { command } : {}) };
    deps.records.insert({ ...base, state: 'ready', reason: null, plan });
  } catch (err) {
    if (withinFiling && isDiskError(err)) throw err;
    // a call whose inverse could not be recorded is simply not undoable; its history entry says no more
  }
}

/** The source an inverse is built from: the call's arguments, or its result's structuredContent. */
function inverseSource(decl: InverseDecl, call: HistoryItem): { value: unknown } | { ok: false; reason: string } {
  if (decl.from === 'args') {
    if (call.argsTruncated) return { ok: false, reason: "the call's arguments were too large to keep, so its inverse cannot be built from them" };
    return parsed(call.arguments, "the call's arguments");
  }
  if (call.result === undefined) return { ok: false, reason: 'the call has no result to build its inverse from' };
  if (call.resultTruncated) return { ok: false, reason: "the call's result was too large to keep, so its inverse cannot be built from it" };
  const result = parsed(call.result, "the call's result");
  if (!('value' in result)) return result;
  const structured = (result.value as { structuredContent?: unknown } | null)?.structuredContent;
  if (structured === undefined) return { ok: false, reason: "the call's result has no structuredContent to build its inverse from" };
  return { value: structured };
}

function parsed(text: string, what: string): { value: unknown } | { ok: false; reason: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: `${what} cannot be read back` };
  }
}

function sameCommand(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function shown(command: readonly string[]): string {
  return command.join(' ').slice(0, 300);
}

/** The connected session the inverse may run in: of the same name and started with the same command. */
function sessionFor(ctx: UndoContext, rec: UndoRecord, command: readonly string[]): { session: Session } | { refusal: string } {
  const named = ctx.port.sessions().filter((s) => s.info.server === rec.server);
  const same = named.filter((s) => sameCommand(s.info.command, command));
  const session = same.find((s) => s.info.id === rec.sessionId) ?? same[0];
  if (session) return { session };
  const other = named[0] ? ` (the wrapper connected as ${rec.server} runs \`${shown(named[0].info.command)}\`: another server, so the inverse is not run there)` : '';
  return {
    refusal: `no wrapper of ${rec.server} started with \`${shown(command)}\` is connected${other}; start the client whose configuration runs that server through airlock wrap, then undo again`,
  };
}

type Ended = { outcome: CallRecord['outcome']; residue: string[]; ran: boolean };

/** Read the wrapper's answer (wrap/undo-caller.ts ToolCallAnswer); anything else is an unknown outcome. */
function ended(inverse: string, answer: unknown): Ended {
  const a = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>;
  if (a.ok === true) {
    const result = a.result;
    const isError = typeof result === 'object' && result !== null && (result as { isError?: unknown }).isError === true;
    return isError ? { outcome: 'tool-error', residue: [`the inverse call ${inverse} returned an error: ${textOf(result)}`], ran: true } : { outcome: 'ok', residue: [], ran: true };
  }
  const notRun = a.notRun as { decidedBy?: unknown; reason?: unknown } | undefined;
  if (notRun && typeof notRun === 'object') {
    return { outcome: 'not-run', residue: [`the inverse call ${inverse} was not run (${String(notRun.decidedBy ?? 'error')}: ${String(notRun.reason ?? 'no reason given')})`], ran: true };
  }
  if (typeof a.unknown === 'string') return { outcome: 'unknown', residue: [`the inverse call ${inverse} ${a.unknown.slice(0, 500)}`], ran: true };
  const error = a.error as { message?: unknown } | undefined;
  if (error && typeof error === 'object') return { outcome: 'rpc-error', residue: [`the server refused the inverse call ${inverse}: ${String(error.message ?? 'no reason given').slice(0, 500)}`], ran: true };
  return { outcome: 'unknown', residue: [`the wrapper's answer to the inverse call ${inverse} cannot be read; whether it ran is unknown`], ran: true };
}

export async function undoInverse(ctx: UndoContext, rec: UndoRecord, plan: InversePlan): Promise<UndoReport> {
  const fail = (summary: string) => {
    const report = refused(rec, summary, { residue: [summary] });
    ctx.port.record('undo', rec.server, rec.tool, report);
    return report;
  };
  if (ctx.port.estop()) return fail(`E-Stop is on: the inverse (${plan.inverse}) is a tool call, and E-Stop refuses every one; release it and undo again`);
  const command = plan.command ?? (rec.sessionId ? ctx.sessionCommand(rec.sessionId) : null);
  if (!command) return fail(`Airlock does not know which command started the server of call ${rec.callId}, so it cannot tell which wrapper is that server: the inverse (${plan.inverse}) is not run`);
  const found = sessionFor(ctx, rec, command);
  if ('refusal' in found) return fail(found.refusal);
  const session = found.session;

  const undoId = newUndoId();
  const waitMs = ctx.port.ticketTimeoutSeconds() * 1000 + SERVER_MS;
  const note = `undo of call ${rec.callId} (${rec.tool}), asked for by you`;
  ctx.running.set(undoId, { sessionId: session.info.id, inverse: plan.inverse, callId: rec.callId, tool: rec.tool });
  let end: Ended;
  try {
    const answer = await ctx.port.request(session.info.id, BrokerToWrapper.callTool, { tool: plan.inverse, arguments: plan.arguments, undoId, note, waitMs }, waitMs + GRACE_MS);
    end = ended(plan.inverse, answer);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const before = code === 'refused' || code === 'bad-request' || code === 'not-found' || code === 'unknown-method';
    end = {
      outcome: before ? 'not-run' : 'unknown',
      residue: [before ? `the wrapper did not run the inverse call ${plan.inverse}: ${(err as Error).message}` : `the inverse call ${plan.inverse} did not answer (${(err as Error).message}); whether it ran is unknown`],
      // a refused request never reached the pipeline: there is no journal entry of it
      ran: !before,
    };
  } finally {
    ctx.running.delete(undoId);
  }
  const ok = end.outcome === 'ok';
  const summary = ok ? `called ${plan.inverse} through the wrapper of ${rec.server} (session ${session.info.id})` : `undo not done: ${end.residue.join('; ')}`;
  const report: UndoReport = { callId: rec.callId, ok, kind: 'inverse', ...(end.ran ? { undoId } : {}), summary, restored: [], conflicts: [], residue: end.residue };
  const now = ctx.port.clock.now();
  if (end.ran) {
    try {
      // the undo's own record (its journal entry is the wrapper's); a file tool's inverse already has one: its snapshot
      if (!ctx.records.get(undoId)) {
        ctx.records.insert({ callId: undoId, server: rec.server, tool: plan.inverse, sessionId: session.info.id, kind: 'inverse', state: 'unavailable', reason: 'Airlock cannot redo an inverse call', plan: null, createdAt: now, undoneBy: null, undoOf: rec.callId });
      }
    } catch {
      // only the redo's record is lost; the report and the event say what happened
    }
  }
  if (ok) ctx.records.update(rec.callId, { state: 'undone', reason: null, undoneBy: undoId }, now);
  else ctx.records.update(rec.callId, { state: 'failed', reason: `the last undo${end.ran ? ` (${undoId})` : ''} was not done: ${end.residue.join('; ')}`.slice(0, LIMITS.detail) }, now);
  ctx.port.record('undo', rec.server, rec.tool, report);
  return report;
}

function textOf(result: unknown): string {
  const content = (result as { content?: unknown })?.content;
  const text = Array.isArray(content) ? content.map((c) => (typeof (c as { text?: unknown })?.text === 'string' ? (c as { text: string }).text : '')).join(' ') : '';
  return (text || JSON.stringify(result) || '').slice(0, 500);
}
