/**
 * The two eras of MCP a client may speak through the wrapper, one per connection, decided by what the client
 * sends first: the 2025 revisions open with an `initialize` handshake; the 2026-07-28 revision has none, and every
 * request carries the protocol version, the client's capabilities and its identity in `_meta`. What is read and
 * written of the 2026 wire here is pure (no state): the connection's state is in `connection-era.ts`.
 */
import { errorResponse, isObject, type JsonRpcId, type JsonRpcResponse } from '../jsonrpc/messages.js';

export type Era = '2025' | '2026';

/** The stateless revision this wrapper speaks. */
export const MODERN_VERSION = '2026-07-28';
export const MODERN_VERSIONS: readonly string[] = [MODERN_VERSION];
export const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT = 'io.modelcontextprotocol/clientInfo';
/** The JSON-RPC error a 2026 request naming a version nobody here speaks gets. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;
/** The longest a server's `ttlMs` is taken at its word, and the shortest (a smaller one would re-list in a loop). */
const MAX_TTL_MS = 24 * 3600_000;
const MIN_TTL_MS = 100;

/** The protocol version a request's `_meta` names, or undefined when it names none (a 2025 request, or a notification). */
export function metaVersion(params: unknown): unknown {
  if (!isObject(params)) return undefined;
  const meta = params._meta;
  return isObject(meta) ? meta[META_VERSION] : undefined;
}

/** The -32022 error for a request naming `requested` (what the wrapper can speak without a handshake is listed). */
export function unsupportedVersion(id: JsonRpcId, requested: unknown): JsonRpcResponse {
  const shown = typeof requested === 'string' ? requested.slice(0, 100) : JSON.stringify(requested ?? null).slice(0, 100);
  return errorResponse(id, UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version ${JSON.stringify(shown)}; this connection speaks ${MODERN_VERSION} (or a 2025 revision after initialize)`, {
    supported: [...MODERN_VERSIONS],
    requested: shown,
  });
}

/** The `_meta` the wrapper's own requests carry in a 2026 connection: the three keys the client's request gave. */
export function requestMeta(params: unknown): Record<string, unknown> | undefined {
  if (!isObject(params) || !isObject(params._meta)) return undefined;
  const meta = params._meta;
  const out: Record<string, unknown> = { [META_VERSION]: meta[META_VERSION] };
  if (meta[META_CAPABILITIES] !== undefined) out[META_CAPABILITIES] = meta[META_CAPABILITIES];
  if (meta[META_CLIENT] !== undefined) out[META_CLIENT] = meta[META_CLIENT];
  return out;
}

/** A request of the wrapper's own with `_meta` added (its own `_meta`, if any, is kept beside it). */
export function stamped(message: unknown, meta: Record<string, unknown>): unknown {
  if (!isObject(message) || typeof message.method !== 'string' || message.id === undefined) return message;
  const params = isObject(message.params) ? message.params : {};
  const own = isObject(params._meta) ? params._meta : {};
  return { ...message, params: { ...params, _meta: { ...own, ...meta } } };
}

/** Airlock's own result in a 2026 connection: every result says what it is (`resultType: "complete"`). */
export function withResultType<T>(message: T): T {
  if (!isObject(message) || !isObject(message.result) || message.result.resultType !== undefined) return message;
  return { ...message, result: { resultType: 'complete', ...message.result } };
}

/** How long a tools/list answer may be cached (its `ttlMs`), bounded; undefined when it does not say. */
export function listingTtl(result: unknown): number | undefined {
  if (!isObject(result) || !Array.isArray(result.tools)) return undefined;
  const ttl = result.ttlMs;
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl < 0) return undefined;
  return Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, ttl));
}

/** What a multi round-trip answer asks for (`resultType: "input_required"`), or undefined for any other result. */
export interface InputRequired {
  /** The opaque state the retry must echo (undefined when the server gave none). */
  requestState: string | undefined;
  /** What the server asks the client for, by key: method and a short description, for the journal and the card. */
  requests: { key: string; method: string; summary: string }[];
}

export function inputRequired(result: unknown): InputRequired | undefined {
  if (!isObject(result) || result.resultType !== 'input_required') return undefined;
  const requests: InputRequired['requests'] = [];
  const asked = result.inputRequests;
  if (isObject(asked)) {
    for (const [key, r] of Object.entries(asked).slice(0, 50)) {
      const method = isObject(r) && typeof r.method === 'string' ? r.method : 'unknown';
      const params = isObject(r) && isObject(r.params) ? r.params : {};
      const text = typeof params.message === 'string' ? params.message : typeof params.url === 'string' ? params.url : '';
      requests.push({ key: key.slice(0, 100), method: method.slice(0, 100), summary: text.slice(0, 200) });
    }
  }
  return { requestState: typeof result.requestState === 'string' ? result.requestState : undefined, requests };
}

/**
 * The round a retried tools/call carries: its echoed state, the keys it answers and, shown with each, how (an
 * elicitation's action: accept, decline, cancel). Undefined: not a retry.
 */
export function retryOf(params: unknown): { requestState: unknown; answered: string[]; shown: string[] } | undefined {
  if (!isObject(params) || (params.requestState === undefined && params.inputResponses === undefined)) return undefined;
  const responses = isObject(params.inputResponses) ? Object.entries(params.inputResponses).slice(0, 50) : [];
  const answered = responses.map(([k]) => k.slice(0, 100));
  const shown = responses.map(([k, r]) => {
    const action = isObject(r) && typeof r.action === 'string' ? ` (${r.action.slice(0, 20)})` : '';
    return `${JSON.stringify(k.slice(0, 100))}${action}`;
  });
  return { requestState: params.requestState, answered, shown };
}

/** One line for the journal and the card: what the server asked for in a round. */
export function describeRequests(r: InputRequired): string {
  if (r.requests.length === 0) return 'the server asked to be called again with its state';
  return `the server asked for input: ${r.requests.map((q) => `${q.key} (${q.method}${q.summary ? `: ${JSON.stringify(q.summary)}` : ''})`).join(', ')}`;
}
