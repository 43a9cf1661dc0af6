/**
 * What the wrapper accepts from the client, checked before anything is routed. The gate judges the parsed
 * message and the server is sent that same message re-serialised, never the client's original bytes: a server
 * whose JSON parser differs from Node's (first value wins on a duplicate key, a string cut at NUL, a lenient
 * number) cannot be made to run something other than what was judged. Pure: a line in, a verdict out.
 */
import { CONTROL_CHARACTERS } from '../classify/classify.js';
import { lineText } from './line-text.js';
import { errorResponse, isId, isObject, type JsonRpcId, type JsonRpcResponse, type Message } from './messages.js';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
/**
 * The deepest nesting of objects and arrays a client message may have. JSON.parse takes any depth, but
 * JSON.stringify, hashing and every other recursive walk of a message overflow the stack somewhere past a few
 * thousand levels; MCP messages are a handful of levels deep.
 */
export const MAX_NESTING = 100;

/** A byte-order mark some writers put before JSON; accepted and dropped. */
const BOM = '\uFEFF';

/** Parse one line; a leading BOM is accepted. `undefined` when the line is not JSON. */
export function parseLine(line: Buffer): unknown {
  let text = lineText(line);
  if (text.startsWith(BOM)) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}


/**
 * A method that a lenient server could take for `tools/call` without being it: other case, surrounding
 * blanks, compatibility forms (a fullwidth solidus), or invisible characters.
 */
function looksLikeToolsCall(method: string): boolean {
  if (method === 'tools/call') return false;
  const folded = method
    .normalize('NFKC')
    .replace(/[\s\u200b-\u200f\u2060-\u2064\ufeff]/g, '')
    .toLowerCase();
  return folded === 'tools/call';
}

export type ClientVerdict =
  | { ok: true; message: Message }
  /** Refused: answer the client with `reply` (when there is one) and never forward the message. */
  | { ok: false; reply: JsonRpcResponse | null; why: string };

export interface ClientCheckContext {
  /** Is a request with this id already in flight (held, forwarded, or running)? */
  inFlight(id: JsonRpcId): boolean;
  /** Does this id belong to the wrapper's own requests to the server? */
  reserved(id: JsonRpcId): boolean;
}

/**
 * Check one message from the client. Every message whose method is `tools/call` comes out either accepted
 * (then the gate decides it) or refused; nothing malformed is forwarded because it was too odd to route.
 */
export function checkClientMessage(m: unknown, ctx: ClientCheckContext, textBytes = Infinity): ClientVerdict {
  if (!isObject(m)) return refuse(null, `a JSON-RPC message must be an object, not ${describe(m)}`);
  const hasId = Object.hasOwn(m, 'id');
  const id = m.id;
  const usableId = hasId && isId(id) ? id : null;
  if (mayNestDeeper(textBytes) && nestedDeeperThan(m, MAX_NESTING)) return refuse(replyId(usableId, ctx), `the message is nested deeper than ${MAX_NESTING} levels`);

  if (Object.hasOwn(m, 'method')) {
    const method = m.method;
    if (typeof method !== 'string') return refuse(replyId(usableId, ctx), 'method must be a string');
    if (CONTROL_CHARACTERS.test(method)) return refuse(null, `method ${JSON.stringify(method)} contains control characters`);
    if (looksLikeToolsCall(method)) return refuse(null, `method ${JSON.stringify(method)} is not "tools/call"; refused rather than guessed`);
    if (hasId) {
      if (!isId(id)) return refuse(null, `request id must be a string or a finite number, not ${describe(id)}`);
      if (ctx.reserved(id)) return refuse(null, `request id ${JSON.stringify(id)} is reserved for Airlock's own requests`);
      if (ctx.inFlight(id)) return refuse(null, `a request with id ${JSON.stringify(id)} is already in flight`);
    } else if (method === 'tools/call') {
      return refuse(null, 'tools/call is a request: it needs an id (a string or a number)');
    }
    return { ok: true, message: m };
  }

  // no method: the client's answer to a request the server sent it
  if (Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error')) {
    if (usableId !== null || (id === null && Object.hasOwn(m, 'error'))) return { ok: true, message: m };
    // a response cannot be answered; it is dropped and logged
    return { ok: false, reply: null, why: `a response with an unusable id (${describe(id)})` };
  }
  return refuse(replyId(usableId, ctx), 'a JSON-RPC message needs a method, or a result or an error');
}

/**
 * Whether JSON text of this many bytes can nest deeper than MAX_NESTING at all: each level takes an opening and a
 * closing bracket, so a text of 2 × MAX_NESTING bytes or fewer cannot, and most messages need no walk.
 */
export function mayNestDeeper(textBytes: number): boolean {
  return textBytes > 2 * MAX_NESTING;
}

/** The walk's stack, kept between checks: every message is checked, so the check must not allocate per node. */
const walkStack: unknown[] = [];

/**
 * Whether objects and arrays in `value` nest deeper than `max` (the value itself is level 1). Walked with a
 * stack of its own, never by recursion, so the check cannot overflow on what it is there to refuse; its cost
 * is the number of objects and arrays (a long string is one leaf), and it allocates nothing per node (an
 * allocation per node on every message made V8 grow the wrapper's heap by megabytes over a few thousand calls).
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack = walkStack;
  stack.push(value, 1);
  try {
    while (stack.length > 0) {
      const depth = stack.pop() as number;
      const v = stack.pop() as Record<string, unknown> | unknown[];
      if (depth > max) return true;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const child = v[i];
          if (typeof child === 'object' && child !== null) stack.push(child, depth + 1);
        }
      } else {
        // parsed JSON: own properties only, and for-in walks them without building an array of them
        for (const key in v) {
          const child = v[key];
          if (typeof child === 'object' && child !== null) stack.push(child, depth + 1);
        }
      }
    }
    return false;
  } finally {
    stack.length = 0;
  }
}

/** The id to answer a refusal with: the request's own, unless that id is ambiguous (then null). */
function replyId(id: JsonRpcId | null, ctx: ClientCheckContext): JsonRpcId | null {
  if (id === null || ctx.reserved(id) || ctx.inFlight(id)) return null;
  return id;
}

function refuse(id: JsonRpcId | null, why: string): ClientVerdict {
  return { ok: false, reply: errorResponse(id, INVALID_REQUEST, `Airlock refused this message: ${why}`), why };
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'a number out of range';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? v.slice(0, 60) + '…' : v);
  return String(v);
}

/** The parse-error answer for a line that is not JSON (id null: there is no id to read). */
export function parseErrorReply(): JsonRpcResponse {
  return errorResponse(null, PARSE_ERROR, 'Airlock could not parse this line as JSON');
}

/** The answer for an empty batch, or a line that is JSON but not a message at all. */
export function invalidRequestReply(why: string): JsonRpcResponse {
  return errorResponse(null, INVALID_REQUEST, `Airlock refused this message: ${why}`);
}
