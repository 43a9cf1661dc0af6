/**
 * The broker's socket: one listener per user, authenticated by the shared secret in both directions.
 * A stale socket left by a crashed broker is removed only after a connect attempt is refused.
 */
import { chmodSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Channel, IpcError } from '../ipc/channel.js';
import type { Role } from '../ipc/connect.js';
import { brokerAddress } from '../ipc/paths.js';
import { ensurePrivateDir, newNonce, proof, proofMatches } from '../ipc/secret.js';

const HANDSHAKE_TIMEOUT_MS = 5000;
const ROLES: readonly Role[] = ['wrapper', 'cli', 'ui'];

export class AlreadyRunning extends Error {
  constructor(path: string) {
    super(`another Airlock broker is already running on ${path}`);
    this.name = 'AlreadyRunning';
  }
}

function probe(path: string): Promise<'alive' | 'stale' | 'absent'> {
  return new Promise((resolve) => {
    const s: Socket = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve('alive');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'stale' : 'absent'));
  });
}

export interface Listening {
  server: Server;
  path: string;
  close(): Promise<void>;
}

/** Listen on the broker address for `dir`; each authenticated connection goes to `onConnection`. */
export async function listenBroker(dir: string, secret: Buffer, onConnection: (channel: Channel, role: Role) => void): Promise<Listening> {
  const { path, folder } = brokerAddress(dir);
  if (folder) ensurePrivateDir(folder);
  const state = await probe(path);
  if (state === 'alive') throw new AlreadyRunning(path);
  if (state === 'stale' && process.platform !== 'win32') unlinkSync(path);

  const server = createServer((socket) => handshake(socket, secret, onConnection));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRINUSE' ? new AlreadyRunning(path) : err));
    // umask would leave the socket group/world-connectable for a moment; the 0700 folder already closes that gap
    server.listen(path, () => resolve());
  });
  if (process.platform !== 'win32') chmodSync(path, 0o600);
  return {
    server,
    path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

function handshake(socket: Socket, secret: Buffer, onConnection: (channel: Channel, role: Role) => void): void {
  const channel = new Channel(socket);
  const brokerNonce = newNonce();
  let done = false;
  const timer = setTimeout(() => {
    if (!done) channel.destroy(new IpcError('handshake-timeout', 'no handshake'));
  }, HANDSHAKE_TIMEOUT_MS);
  timer.unref();
  channel.setHandlers({
    request: (method, params) => {
      if (done) throw new IpcError('bad-state', 'already authenticated');
      if (method !== 'auth') {
        setImmediate(() => channel.destroy());
        throw new IpcError('unauthorized', 'authenticate first');
      }
      const p = (params ?? {}) as { nonce?: unknown; proof?: unknown; role?: unknown };
      const role = p.role as Role;
      if (typeof p.nonce !== 'string' || p.nonce.length < 16 || p.nonce.length > 128 || !ROLES.includes(role) ||
        !proofMatches(proof(secret, 'client', brokerNonce, p.nonce), p.proof)) {
        setImmediate(() => channel.destroy());
        throw new IpcError('unauthorized', 'wrong secret: this process may not talk to Airlock');
      }
      done = true;
      clearTimeout(timer);
      const answer = { proof: proof(secret, 'broker', brokerNonce, p.nonce) };
      // hand over before answering, so no frame the peer sends after the answer can miss its handler
      onConnection(channel, role);
      return answer;
    },
    close: () => clearTimeout(timer),
  });
  channel.notify('hello', { nonce: brokerNonce, v: 1 });
}
