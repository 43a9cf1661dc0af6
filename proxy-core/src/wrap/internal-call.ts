/**
 * A tools/call of Airlock's own (a declared inverse, run for an undo a person asked for): it takes the same way
 * through the wrapper's pipeline as a client's call (classification, rules, pins, E-Stop, a ticket when it
 * asks, the pre-forward stages, the journal), but its answer goes to the broker that asked, never to the client.
 */
import type { JsonRpcResponse } from '../jsonrpc/messages.js';
import type { DecidedBy } from '../policy/decide.js';

/** How an internal call ended. */
export type InternalEnd =
  /** The server answered (a result, or a JSON-RPC error). */
  | { kind: 'answered'; message: JsonRpcResponse }
  /** Denied before it was sent: the server never saw it. */
  | { kind: 'not-run'; decidedBy: DecidedBy; reason: string }
  /** Sent, and ended without the server's answer (E-Stop, the server gone): whether it ran is unknown. */
  | { kind: 'unknown'; reason: string };

export interface InternalSink {
  /** The first reason of its journal entry: what the call is (an undo of which call) and who asked for it. */
  readonly note: string;
  end(e: InternalEnd): void;
}
