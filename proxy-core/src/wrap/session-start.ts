/**
 * What the client's `initialize` is answered when this wrapper cannot serve it honestly. A client's health check
 * (`claude mcp list`, `gemini mcp list`, `qwen mcp list`) only looks at whether initialize succeeds: a success
 * while Airlock's broker is down, or after the server failed to start, shows "Connected" for a server whose every
 * call would be refused. So initialize fails instead, with a JSON-RPC error whose message says why and what to do:
 * clients that show little show "failed to connect", and those that show the error show Airlock's reason.
 *
 * A broker that comes up a moment later (started together with the client, at login) is waited for first, with
 * the link's own retries going on: only a broker still down after BROKER_START_WAIT_MS fails the session.
 */
import { START_HINT } from '../ipc/connect.js';
import { errorResponse, type JsonRpcId, type JsonRpcResponse } from '../jsonrpc/messages.js';
import type { BrokerLinkLike } from './broker-link.js';

/** How long an initialize answer waits for a broker that is not up yet. */
export const BROKER_START_WAIT_MS = 3000;
/** JSON-RPC error code of a session Airlock cannot serve (the implementation-defined server error range). */
export const AIRLOCK_UNAVAILABLE = -32001;

/** True once the link is up, false when it is not within `ms` (its own retries go on meanwhile). */
export function untilBrokerUp(link: BrokerLinkLike, ms: number): Promise<boolean> {
  if (link.state === 'up') return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const done = (up: boolean) => {
      clearTimeout(timer);
      link.off('policy', onPolicy);
      resolve(up);
    };
    const onPolicy = () => {
      if (link.state === 'up') done(true);
    };
    const timer = setTimeout(() => done(link.state === 'up'), ms);
    timer.unref?.();
    link.on('policy', onPolicy);
    // try now too (a link between retries waits for its next one otherwise)
    void link.ensureUp(ms).then((up) => up && done(true));
  });
}

export function brokerDownMessage(server: string): string {
  return (
    `Airlock is not running, so every call to "${server}" would be refused (Airlock fails closed). ` +
    `To use this server, ${START_HINT}, then reconnect the server in this client (or restart the client).`
  );
}

/** The error a client's initialize gets while the broker is down. */
export function brokerDownAnswer(id: JsonRpcId, server: string): JsonRpcResponse {
  return errorResponse(id, AIRLOCK_UNAVAILABLE, brokerDownMessage(server), { airlock: 'broker-down' });
}

export function startFailureMessage(server: string, command: readonly string[], description: string): string {
  return `Airlock could not run the MCP server "${server}": its command \`${command.join(' ')}\` ${description}. Check the command in this client's MCP settings.`;
}

/** The error a client's initialize gets when the server ended before it could answer (it did not start, or exited at once). */
export function startFailureAnswer(id: JsonRpcId, server: string, command: readonly string[], description: string): JsonRpcResponse {
  return errorResponse(id, AIRLOCK_UNAVAILABLE, startFailureMessage(server, command, description), { airlock: 'server-failed', description });
}

/**
 * How long a wrapper whose server ended before any session began waits for the client's initialize to answer.
 * A client writes it as it starts the wrapper, so it is already in the pipe: this only bounds a client that
 * never sends one.
 */
export const START_FAILURE_WAIT_MS = 2000;

/**
 * A request of the client's read after the server ended before any session began (the usual case for a command
 * not found: the client's initialize comes a moment after the spawn failed): its id and method, to answer it
 * with the failure; null for anything else (a notification, a line that is not JSON-RPC).
 */
export function requestOf(line: Buffer): { id: JsonRpcId; method: string } | null {
  let m: unknown;
  try {
    m = JSON.parse(line.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof m !== 'object' || m === null) return null;
  const { id, method } = m as { id?: unknown; method?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) ? { id, method } : null;
}
