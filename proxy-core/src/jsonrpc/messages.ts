/** Just enough JSON-RPC 2.0 to route MCP traffic; anything else is relayed as the bytes it came in. */
import { LastNumberText } from '../util/number-text.js';

export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: unknown;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
}

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export type Message = Record<string, unknown>;

export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isId(v: unknown): v is JsonRpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

export function isRequest(m: Message): m is Message & JsonRpcRequest {
  return typeof m.method === 'string' && isId(m.id);
}

export function isResponse(m: Message): m is Message & JsonRpcResponse {
  return m.method === undefined && ('result' in m || 'error' in m);
}

/** The last numeric id's digits: a request's id is checked, then routed, in the same turn. */
const lastNumericId = new LastNumberText();

/**
 * A key for an id that keeps 1 and "1" apart (they are different JSON-RPC ids). Made for every message, so a
 * number's digits are written without V8's number-string cache (util/number-text.ts).
 */
export function idKey(id: JsonRpcId): string {
  if (typeof id !== 'number') return `s:${id}`;
  // a number JSON cannot hold (1e400 reads as Infinity) keeps a key of its own, as it always had: a request with
  // one is refused, and a notification naming one finds nothing
  return `n:${Number.isFinite(id) ? lastNumericId.of(id) : id}`;
}

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** Serialize for a line-framed stream. JSON.stringify never emits a raw newline, so framing holds. */
export function frame(message: unknown): string {
  return JSON.stringify(message) + '\n';
}
