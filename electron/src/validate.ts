/**
 * What a window's message must be before the main process acts on it. A renderer is the least trusted part of
 * the app (it shows text that came from MCP servers), so its arguments are checked here for shape and size; the
 * broker then checks each method's params against its schema on top.
 */
import { MAX_PARAMS_BYTES, SUBSCRIPTION_ID } from './ipc-contract.js';

const MAX_DEPTH = 32;

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Params of a call: a plain JSON object (undefined counts as `{}`) of at most MAX_PARAMS_BYTES. */
export function checkParams(params: unknown): Checked<Record<string, unknown>> {
  if (params === undefined) return { ok: true, value: {} };
  if (!isPlainObject(params)) return { ok: false, reason: 'params must be a plain object' };
  const problem = jsonProblem(params, 0);
  if (problem) return { ok: false, reason: problem };
  const size = Buffer.byteLength(JSON.stringify(params), 'utf8');
  if (size > MAX_PARAMS_BYTES) return { ok: false, reason: `params are ${size} bytes; at most ${MAX_PARAMS_BYTES}` };
  return { ok: true, value: params };
}

/** A stream's starting point: a `seq`, 0 for everything the journal keeps. */
export function checkSince(since: unknown): Checked<number> {
  return Number.isSafeInteger(since) && (since as number) >= 0 ? { ok: true, value: since as number } : { ok: false, reason: 'since must be a whole number ≥ 0' };
}

export function checkSubscriptionId(id: unknown): Checked<string> {
  return typeof id === 'string' && SUBSCRIPTION_ID.test(id) ? { ok: true, value: id } : { ok: false, reason: 'a subscription id is 1 to 64 letters, digits, _ or -' };
}

export function checkBoolean(on: unknown): Checked<boolean> {
  return typeof on === 'boolean' ? { ok: true, value: on } : { ok: false, reason: 'expected true or false' };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Why `v` is not plain JSON (IPC's structured clone also carries Dates, Maps, typed arrays, BigInts…). */
function jsonProblem(v: unknown, depth: number): string | null {
  if (depth > MAX_DEPTH) return `params nest deeper than ${MAX_DEPTH}`;
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return null;
  if (typeof v === 'number') return Number.isFinite(v) ? null : 'params hold a number that is not finite';
  if (Array.isArray(v)) {
    for (const item of v) {
      const p = jsonProblem(item, depth + 1);
      if (p) return p;
    }
    return null;
  }
  if (isPlainObject(v)) {
    for (const item of Object.values(v)) {
      const p = jsonProblem(item, depth + 1);
      if (p) return p;
    }
    return null;
  }
  return `params hold a value JSON cannot carry (${typeof v === 'object' ? Object.prototype.toString.call(v) : typeof v})`;
}
