/** Checks on what peers send the broker: a buggy or hostile peer gets an error, never a crash or a bad row. */
import { CLASS_ORDER, type ToolClass } from '../classify/classify.js';
import { IpcError } from '../ipc/channel.js';
import { isObject } from '../jsonrpc/messages.js';

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
