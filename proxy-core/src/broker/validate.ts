/**
 * Checks on what peers send the broker beyond the protocol's schemas: a buggy or hostile peer gets an error
 * (or its entry is cut to size), never a crash, a bad row, or memory it should not make the broker hold.
 */
import { isAbsolute } from 'node:path';
import type { z } from 'zod';
import { CLASS_ORDER, type ToolClass } from '../classify/classify.js';
import { IpcError } from '../ipc/channel.js';
import { isObject } from '../jsonrpc/messages.js';
import { argumentsHash } from '../jsonrpc/canonical.js';
import { type ArgCondition, type CallRecord, DecidedBySchema, OutcomeSchema, type RuleAction, type Ticket } from '../protocol/api.js';
import { LIMITS } from '../protocol/limits.js';
import { isSettingKey, settingProblem } from '../protocol/settings.js';
import { isTraceparent } from '../protocol/trace-context.js';

export function bad(message: string): IpcError {
  return new IpcError('bad-request', message);
}

/** One line a person can read from a schema failure. */
export function schemaMessage(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.join('.') : 'params'}: ${i.message}`)
    .join('; ');
}

export function toolClass(v: unknown): ToolClass {
  // an unknown class from a peer is treated as the strictest one, not rejected: fail closed, keep going
  return typeof v === 'string' && (CLASS_ORDER as readonly string[]).includes(v) ? (v as ToolClass) : 'unclassifiable';
}

export function strings(v: unknown, max = 50): string[] {
  if (!Array.isArray(v)) return [];
  return v.filter((s): s is string => typeof s === 'string').slice(0, max).map((s) => s.slice(0, LIMITS.reason));
}

/** A setting key (and value) a front end may use: checked against the one table in protocol/settings.ts. */
export function checkSetting(key: string, value?: string): void {
  const problem = settingProblem(key, value ?? '');
  if (problem && (value !== undefined || !isSettingKey(key))) throw bad(problem);
}

/**
 * Argument conditions a rule may carry (rules.add, or an approval scoped by them), beyond their schema. A path
 * condition names an absolute folder (or one under `~`): a relative one would never match a real path, and a
 * deny that never matches is worse than a refusal. A range has a bound, and its min is not above its max.
 */
export function checkArgConditions(conditions: readonly ArgCondition[] | undefined): void {
  for (const c of conditions ?? []) {
    if (c.kind === 'path' && !(c.glob === '~' || c.glob.startsWith('~/') || isAbsolute(c.glob))) {
      throw bad(`argument ${c.arg}: a path condition needs an absolute folder (or one under ~), not "${c.glob}"`);
    }
    if (c.kind === 'range') {
      if (c.min === undefined && c.max === undefined) throw bad(`argument ${c.arg}: a range needs a min or a max`);
      if (c.min !== undefined && c.max !== undefined && c.min > c.max) throw bad(`argument ${c.arg}: ${c.min} is above ${c.max}`);
    }
  }
}

/**
 * A rule's condition on undo. An allow for only the calls that cannot be undone would let exactly the riskiest
 * calls run unasked, which nobody means: it is refused, with what to write instead.
 */
export function checkUndoCondition(action: RuleAction, undoable: boolean | undefined): void {
  if (action === 'allow' && undoable === false) {
    throw bad('an allow rule for only the calls that cannot be undone would let the riskiest calls run without asking; allow them all (no --irreversible), or allow only what can be undone (--undoable)');
  }
}

/** Cut a JSON text to `max`, saying whether it was cut. */
function cut(text: unknown, max: number): { text: string; truncated: boolean } | undefined {
  if (typeof text !== 'string') return undefined;
  return text.length > max ? { text: text.slice(0, max), truncated: true } : { text, truncated: false };
}

const DECISIONS = new Set(DecidedBySchema.options);
const OUTCOMES = new Set(OutcomeSchema.options);

function optionalNumber(e: Record<string, unknown>, key: string, integer: boolean): number | undefined {
  const v = e[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (integer && !Number.isInteger(v))) throw bad(`journal entry: ${key} must be a ${integer ? 'whole ' : ''}number of 0 or more`);
  return v;
}

/** What a journal row holds for arguments that came with an earlier copy of its entry the broker did not keep. */
export const ARGUMENTS_NOT_RECEIVED: string = JSON.stringify('(not received: they came with an earlier copy of this entry, which was not stored)');

/**
 * A journal entry as the broker stores it: who and where come from the session, never from the entry; texts
 * over their limits are cut and marked rather than refused. Throws (bad-request) when it is not a call record.
 *
 * This runs for every call at tens of thousands a second, so it is written out by hand instead of going through
 * zod (which cost a third of the broker's time per entry); it accepts exactly what CallRecordSchema accepts once
 * texts are cut, and test/proxy-core/broker/validate.test.ts holds the two to that on a table of records.
 */
export function checkEntry(session: { info: { id: string; client: string; server: string } }, e: unknown): CallRecord {
  if (!isObject(e)) throw bad('a journal entry must be an object');
  const id = e.id;
  if (typeof id !== 'string' || id.length === 0 || id.length > 128) throw bad('journal entry: id must be a string of 1 to 128 characters');
  // A later copy of an entry the broker acknowledged comes without its arguments (the stored row keeps the first
  // copy's, and an update never touches them). Should that row be missing after all (the first copy was refused,
  // or the database was swapped), the entry says so rather than store a made-up "null".
  const args = e.arguments === undefined ? { text: ARGUMENTS_NOT_RECEIVED, truncated: false } : cut(typeof e.arguments === 'string' ? e.arguments : JSON.stringify(e.arguments), LIMITS.argsShown)!;
  if (e.argsTruncated !== undefined && typeof e.argsTruncated !== 'boolean') throw bad(`journal entry ${id}: argsTruncated must be a boolean`);
  const decision = e.decision;
  if (decision !== 'allow' && decision !== 'deny') throw bad(`journal entry ${id}: decision must be allow or deny`);
  if (typeof e.decidedBy !== 'string' || !DECISIONS.has(e.decidedBy as never)) throw bad(`journal entry ${id}: decidedBy is not one Airlock knows`);
  if (typeof e.outcome !== 'string' || !OUTCOMES.has(e.outcome as never)) throw bad(`journal entry ${id}: outcome is not one Airlock knows`);
  const startedAt = e.startedAt;
  if (typeof startedAt !== 'number' || !Number.isFinite(startedAt) || startedAt < 0) throw bad(`journal entry ${id}: startedAt must be a time`);
  const record: CallRecord = {
    id,
    sessionId: session.info.id,
    client: session.info.client,
    server: session.info.server,
    tool: typeof e.tool === 'string' ? e.tool.slice(0, LIMITS.toolName) : '',
    arguments: args.text,
    argsTruncated: args.truncated || e.argsTruncated === true,
    class: toolClass(e.class),
    reasons: strings(e.reasons),
    decision,
    decidedBy: e.decidedBy as CallRecord['decidedBy'],
    detail: typeof e.detail === 'string' ? e.detail.slice(0, LIMITS.detail) : '',
    outcome: e.outcome as CallRecord['outcome'],
    startedAt,
  };
  const argsBytes = optionalNumber(e, 'argsBytes', true);
  if (argsBytes !== undefined) record.argsBytes = argsBytes;
  if (e.argsSha256 !== undefined) {
    if (typeof e.argsSha256 !== 'string' || !/^[0-9a-f]{64}$/.test(e.argsSha256)) throw bad(`journal entry ${id}: argsSha256 must be 64 hex digits`);
    record.argsSha256 = e.argsSha256;
  }
  if (e.ticketId !== undefined) {
    if (typeof e.ticketId !== 'string' || e.ticketId.length > 64) throw bad(`journal entry ${id}: ticketId must be a short string`);
    record.ticketId = e.ticketId;
  }
  const result = cut(e.result, LIMITS.resultShown);
  if (e.result !== undefined && !result) throw bad(`journal entry ${id}: result must be JSON text`);
  if (e.resultTruncated !== undefined && typeof e.resultTruncated !== 'boolean') throw bad(`journal entry ${id}: resultTruncated must be a boolean`);
  if (result) {
    record.result = result.text;
    record.resultTruncated = result.truncated || e.resultTruncated === true;
  } else if (e.resultTruncated !== undefined) record.resultTruncated = e.resultTruncated as boolean;
  const resultBytes = optionalNumber(e, 'resultBytes', true);
  if (resultBytes !== undefined) record.resultBytes = resultBytes;
  for (const key of ['askedAt', 'decidedAt', 'forwardedAt', 'finishedAt', 'durationMs'] as const) {
    const v = optionalNumber(e, key, false);
    if (v !== undefined) record[key] = v;
  }
  // a malformed trace context is not the call's fault: the export starts a trace of its own for it
  if (isTraceparent(e.traceparent)) record.traceparent = e.traceparent;
  return record;
}

/**
 * What a ticket keeps of a held call's arguments: at most LIMITS.argsShown characters of JSON text (marked when
 * cut) and the hash of the whole. A wrapper cuts big arguments itself and sends their hash; arguments sent
 * whole are hashed and cut here, so a held call can never make the broker hold or store more than that.
 */
export function ticketArguments(p: Record<string, unknown>): Pick<Ticket, 'arguments' | 'argsTruncated' | 'argsBytes' | 'argsSha256'> {
  if (p.argsTruncated === true) {
    if (typeof p.arguments !== 'string') throw bad('cut arguments must be sent as their JSON text');
    if (typeof p.argsSha256 !== 'string' || !/^[0-9a-f]{64}$/.test(p.argsSha256)) throw bad('cut arguments need the sha256 of the whole arguments');
    const bytes = typeof p.argsBytes === 'number' && Number.isSafeInteger(p.argsBytes) && p.argsBytes > 0 ? p.argsBytes : p.arguments.length;
    return { arguments: p.arguments.slice(0, LIMITS.argsShown), argsTruncated: true, argsBytes: bytes, argsSha256: p.argsSha256 };
  }
  const args = p.arguments ?? {};
  if (!isObject(args)) throw bad('arguments must be an object');
  const text = JSON.stringify(args);
  const sha = argumentsHash(args);
  if (text.length > LIMITS.argsShown) return { arguments: text.slice(0, LIMITS.argsShown), argsTruncated: true, argsBytes: text.length, argsSha256: sha };
  return { arguments: args, argsTruncated: false, argsBytes: text.length, argsSha256: sha };
}
