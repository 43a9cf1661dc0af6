/**
 * What the client hears when a remote server refuses a request over HTTP. The SDK's transport turns a non-2xx
 * answer into a bare error; the wrapper keeps what the server said (status, JSON-RPC error, WWW-Authenticate)
 * and passes it on: a modern server's JSON-RPC error as that error, an authorization challenge as an error that
 * says where to authorize and how to give Airlock a token.
 */
import { errorResponse, INTERNAL_ERROR, isObject, type JsonRpcRequest, type JsonRpcResponse, type Message } from '../jsonrpc/messages.js';
import { authChallenge, HEADER_MISMATCH, MODERN_REFUSALS } from './http-metadata.js';

export interface Refusal {
  status: number;
  /** The JSON-RPC error response the server sent with it, if it sent one. */
  body?: Record<string, unknown>;
  wwwAuthenticate: string | null;
}

/** The JSON-RPC error code this server chose, if it gave one. */
export function codeOf(r: Refusal | undefined): number | undefined {
  const error = r?.body?.error;
  return isObject(error) && typeof error.code === 'number' ? error.code : undefined;
}

/**
 * Whether refusing the first POST so may mean the server only speaks HTTP+SSE (2024-11-05): 400, 404 or 405
 * without a JSON-RPC error a modern server gives (unsupported version, unknown method, header mismatch).
 */
export function mayBeOlderTransport(status: number, r: Refusal | undefined): boolean {
  if (![400, 404, 405].includes(status)) return false;
  const code = codeOf(r);
  return code === undefined || !MODERN_REFUSALS.has(code);
}

/** The answer to send the client for a refused request, and a line for the wrapper's log if it is worth one. */
export function describeRefusal(m: Message & JsonRpcRequest, r: Refusal, url: URL): { response: JsonRpcResponse; log?: string } {
  if (r.status === 401 || r.status === 403) {
    const challenge = authChallenge(r.wwwAuthenticate);
    const where = challenge.resourceMetadata ? `; its authorization metadata is at ${challenge.resourceMetadata}` : '';
    const scope = challenge.scope ? ` (scope "${challenge.scope}")` : '';
    const what = r.status === 401 ? 'requires authorization' : `refused the credentials it was given${challenge.error ? ` (${challenge.error})` : ''}`;
    const message =
      `the remote MCP server ${url.origin} ${what}: HTTP ${r.status}${scope}${where}. ` +
      'Airlock does not sign in for you: get a token and pass it with --header "Authorization: Bearer ${TOKEN}", TOKEN set in the environment';
    return {
      response: errorResponse(m.id, INTERNAL_ERROR, message, { httpStatus: r.status, wwwAuthenticate: r.wwwAuthenticate, ...challenge }),
      log: `airlock: ${message}`,
    };
  }
  const error = r.body?.error;
  if (isObject(error) && typeof error.code === 'number' && typeof error.message === 'string') {
    // the server's own answer, under the id the client used
    const response = { jsonrpc: '2.0' as const, id: m.id, error: { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) } };
    // Airlock set the headers from the very body it sent: a mismatch means something on the way changed one
    const log =
      error.code === HEADER_MISMATCH
        ? `airlock: ${url.origin} says the headers of a ${String(m.method)} request do not match its body (${error.message}); something between Airlock and the server changed them`
        : undefined;
    return { response, ...(log ? { log } : {}) };
  }
  return { response: errorResponse(m.id, INTERNAL_ERROR, `the remote MCP server ${url.origin} refused the request: HTTP ${r.status}`, { httpStatus: r.status }) };
}
