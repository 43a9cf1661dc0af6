/** Checks on what peers send the broker: a buggy or hostile peer gets an error, never a crash or a bad row. */
import { CLASS_ORDER, type ToolClass } from '../classify/classify.js';
import { IpcError } from '../ipc/channel.js';
import { ARGS_SHOWN_MAX, type JournalEntry, type Outcome, type Remember, type SessionInfo, type Ticket } from '../ipc/protocol.js';
import { argumentsHash } from '../jsonrpc/canonical.js';
import { isObject } from '../jsonrpc/messages.js';
import type { DecidedBy } from '../policy/decide.js';

export function bad(message: string): IpcError {
  return new IpcError('bad-request', message);
}

export function obj(v: unknown, what: string): Record<string, unknown> {
  if (!isObject(v)) throw bad(`${what} must be an object`);
  return v;
}

export function str(o: Record<string, unknown>, key: string, max = 4096): string {
  const v = o[key];
  if (typeof v !== 'string' || v.length === 0 || v.length > max) throw bad(`${key} must be a non-empty string of at most ${max} characters`);
  return v;
}

export function optStr(o: Record<string, unknown>, key: string, max = 4096): string | undefined {
  return o[key] === undefined || o[key] === null ? undefined : str(o, key, max);
}

export function bool(o: Record<string, unknown>, key: string): boolean {
  const v = o[key];
  if (typeof v !== 'boolean') throw bad(`${key} must be a boolean`);
  return v;
}

export function toolClass(v: unknown): ToolClass {
  // an unknown class from a peer is treated as the strictest one, not rejected: fail closed, keep going
  return typeof v === 'string' && (CLASS_ORDER as readonly string[]).includes(v) ? (v as ToolClass) : 'unclassifiable';
}

export function strings(v: unknown, max = 50): string[] {
  if (!Array.isArray(v)) return [];
  return v.filter((s): s is string => typeof s === 'string').slice(0, max).map((s) => s.slice(0, 2000));
}

const VALID_OUTCOMES: readonly Outcome[] = ['pending', 'ok', 'tool-error', 'rpc-error', 'cancelled', 'unknown', 'not-run'];
const VALID_DECIDED_BY: readonly DecidedBy[] = ['estop', 'rule', 'session', 'class', 'user', 'timeout', 'broker-down', 'cancelled', 'error'];

/** Settings a UI may change directly; E-Stop and the rest have their own requests (with policy pushes). */
export const USER_SETTINGS: Record<string, string[]> = { 'auto-protect': ['on', 'off'] };

export function settingKey(p: Record<string, unknown>): string {
  const key = str(p, 'key', 64);
  if (!Object.hasOwn(USER_SETTINGS, key)) throw bad(`unknown setting ${key}`);
  return key;
}

export function parseRemember(v: unknown): Remember {
  if (v === undefined || v === null) return 'once';
  if (v === 'once' || v === 'session' || v === 'always') return v;
  throw bad('remember must be once, session or always');
}

/** A journal entry as the broker stores it: who and where come from the session, never from the entry. */
export function checkEntry(session: { info: SessionInfo }, e: unknown): JournalEntry {
  const o = obj(e, 'journal entry');
  let args = typeof o.arguments === 'string' ? o.arguments : JSON.stringify(o.arguments ?? null);
  let truncated = o.argsTruncated === true;
  if (args.length > ARGS_SHOWN_MAX) {
    args = args.slice(0, ARGS_SHOWN_MAX);
    truncated = true;
  }
  const outcome = VALID_OUTCOMES.includes(o.outcome as Outcome) ? (o.outcome as Outcome) : 'unknown';
  const decidedBy = VALID_DECIDED_BY.includes(o.decidedBy as DecidedBy) ? (o.decidedBy as DecidedBy) : 'error';
  const entry: JournalEntry = {
    id: str(o, 'id', 128),
    sessionId: session.info.id,
    // who and where come from the session, not from what the entry claims
    client: session.info.client,
    server: session.info.server,
    tool: typeof o.tool === 'string' ? o.tool.slice(0, 1024) : '',
    arguments: args,
    argsTruncated: truncated,
    class: toolClass(o.class),
    reasons: strings(o.reasons),
    decision: o.decision === 'allow' ? 'allow' : 'deny',
    decidedBy,
    detail: typeof o.detail === 'string' ? o.detail.slice(0, 4000) : '',
    outcome,
    startedAt: typeof o.startedAt === 'number' ? o.startedAt : Date.now(),
  };
  if (typeof o.ticketId === 'string') entry.ticketId = o.ticketId.slice(0, 64);
  if (typeof o.durationMs === 'number' && Number.isFinite(o.durationMs)) entry.durationMs = o.durationMs;
  return entry;
}

/**
 * What a ticket keeps of a held call's arguments: at most ARGS_SHOWN_MAX characters of JSON text (marked when
 * cut) and the hash of the whole. A wrapper cuts big arguments itself and sends their hash; arguments sent
 * whole are hashed and cut here, so a held call can never make the broker hold or store more than that.
 */
export function ticketArguments(p: Record<string, unknown>): Pick<Ticket, 'arguments' | 'argsTruncated' | 'argsBytes' | 'argsSha256'> {
  if (p.argsTruncated === true) {
    if (typeof p.arguments !== 'string') throw bad('cut arguments must be sent as their JSON text');
    if (typeof p.argsSha256 !== 'string' || !/^[0-9a-f]{64}$/.test(p.argsSha256)) throw bad('cut arguments need the sha256 of the whole arguments');
    const bytes = typeof p.argsBytes === 'number' && Number.isSafeInteger(p.argsBytes) && p.argsBytes > 0 ? p.argsBytes : p.arguments.length;
    return { arguments: p.arguments.slice(0, ARGS_SHOWN_MAX), argsTruncated: true, argsBytes: bytes, argsSha256: p.argsSha256 };
  }
  const args = p.arguments ?? {};
  if (!isObject(args)) throw bad('arguments must be an object');
  const text = JSON.stringify(args);
  const sha = argumentsHash(args);
  if (text.length > ARGS_SHOWN_MAX) return { arguments: text.slice(0, ARGS_SHOWN_MAX), argsTruncated: true, argsBytes: text.length, argsSha256: sha };
  return { arguments: args, argsTruncated: false, argsBytes: text.length, argsSha256: sha };
}
