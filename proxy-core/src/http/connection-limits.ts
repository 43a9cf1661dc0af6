/**
 * Bounds on what connections to the UI host can hold, so that no number of them can take the broker's file
 * handles (its socket for wrappers and the CLI, the journal) away:
 * - at most `maxConnections` in all (256, and never more than a quarter of the process's file handles; past
 *   that, Node closes a new one as soon as it is accepted);
 * - a connection that has not yet made a signed-in request is "unproven": at most `maxUnproven` of them
 *   (a new one past that closes the oldest), each closed after `unprovenIdleMs` without a byte;
 * - what an unproven connection can send is the request head (`maxHeaderSize`, with `headersTimeout` to send
 *   it): a request that is refused is answered with `Connection: close`, and its body is never read.
 * A proven connection keeps Node's keep-alive timeout (an open event stream is kept alive by its pings).
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  maxConnections: number;
  maxUnproven: number;
  unprovenIdleMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export const CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: 256,
  maxUnproven: 64,
  unprovenIdleMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
};

/** The request head's byte cap: what an unproven connection can make the host read. */
export const MAX_HEADER_BYTES = 8 * 1024;
/** How often Node checks headersTimeout and requestTimeout (its default, 30 s, would let a slow head live 40 s). */
export const HEADERS_CHECK_MS = 2000;

/**
 * The soft limit on open files of this process, where the OS says (Linux: /proc/self/limits; Node has raised
 * it to the hard limit at start already), else undefined.
 */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

/** At most a quarter of the file handles go to HTTP: the rest stay for the socket, the journal and the wrappers. */
export function connectionCap(limit: number | undefined, cap = CONNECTION_LIMITS.maxConnections): number {
  return limit === undefined ? cap : Math.max(16, Math.min(cap, Math.floor(limit / 4)));
}

export interface ConnectionGuard {
  /** The connection made a signed-in request: it leaves the unproven pool. */
  prove(socket: Socket): void;
  unproven(): number;
}

export function guardConnections(server: Server, limits: Partial<ConnectionLimits> = {}): ConnectionGuard {
  const l = { ...CONNECTION_LIMITS, ...limits };
  server.maxConnections = limits.maxConnections ?? connectionCap(openFileLimit());
  l.maxUnproven = Math.min(l.maxUnproven, server.maxConnections);
  server.headersTimeout = l.headersTimeoutMs;
  server.requestTimeout = l.requestTimeoutMs;
  // insertion order is age: the first is the oldest
  const unproven = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    unproven.add(socket);
    socket.setTimeout(l.unprovenIdleMs, () => {
      if (unproven.has(socket)) socket.destroy();
    });
    socket.once('close', () => unproven.delete(socket));
    while (unproven.size > l.maxUnproven) {
      const oldest = unproven.values().next().value as Socket;
      unproven.delete(oldest);
      oldest.destroy();
    }
  });
  return {
    prove(socket) {
      if (!unproven.delete(socket)) return;
      socket.setTimeout(0);
    },
    unproven: () => unproven.size,
  };
}
