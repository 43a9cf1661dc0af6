/**
 * The broker's socket: one listener per user, authenticated by the shared secret in both directions.
 * A stale socket left by a crashed broker is removed only after a connect attempt is refused.
 */
import { chmodSync, chownSync, rmdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Channel, IpcError } from '../ipc/channel.js';
import { AUTH, HELLO, type Role, USER_ROLES, WRAPPER_ROLES } from '../protocol/names.js';
import { brokerAddress } from '../ipc/paths.js';
import { newNonce, proof, proofMatches } from '../ipc/secret.js';
import { ensureOwnFolder } from '../util/own-folder.js';

const HANDSHAKE_TIMEOUT_MS = 5000;
/**
 * What a peer may send before it has proved the secret: the auth request is one line of about 200 bytes
 * (a nonce of at most 128 characters, a 64-character proof, a role). Anything past these bounds is not a
 * client of ours, and is cut off before it can make the broker hold more than a few KiB for it.
 */
export const HANDSHAKE_MAX_FRAME = 1024;
export const HANDSHAKE_MAX_BYTES = 4096;
const ROLES: readonly Role[] = [...WRAPPER_ROLES, ...USER_ROLES];

export class AlreadyRunning extends Error {
  constructor(path: string, message = `another Airlock broker is already running on ${path}`) {
    super(message);
    this.name = 'AlreadyRunning';
  }
}

/** Whether a process answers on the broker address of `dir`, or on `socketPath` (without talking to it). */
export function probeBroker(dir: string, socketPath?: string): Promise<'alive' | 'stale' | 'absent'> {
  return probe(socketPath ?? brokerAddress(dir).path);
}

/**
 * A socket somewhere else than the data dir's, in a folder the caller has prepared (the system broker's run
 * folder): its mode, and the group that may connect to it.
 */
export interface ListenAt {
  path: string;
  mode: number;
  gid?: number;
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
export async function listenBroker(dir: string, secret: Buffer, onConnection: (channel: Channel, role: Role) => void, at?: ListenAt): Promise<Listening> {
  const { path, folder } = at ? { path: at.path, folder: null } : brokerAddress(dir);
  // (in /tmp when the data dir's path is too long for a socket: a place other people's processes reach too)
  if (folder) ensureOwnFolder(folder, "the broker's socket folder");
  const state = await probe(path);
  if (state === 'alive') throw new AlreadyRunning(path);
  if (state === 'stale' && process.platform !== 'win32') unlinkSync(path);

  const server = createServer((socket) => handshake(socket, secret, onConnection));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRINUSE' ? new AlreadyRunning(path) : err));
    // umask would leave the socket group/world-connectable for a moment; the 0700 folder already closes that gap
    server.listen(path, () => resolve());
  });
  if (process.platform !== 'win32') {
    // the group first: until the mode is widened, no member can connect to a socket of the wrong group
    if (at?.gid !== undefined) chownSync(path, -1, at.gid);
    chmodSync(path, at?.mode ?? 0o600);
  }
  // out of file handles (EMFILE), libuv closes the connection it cannot take and goes on accepting once handles
  // are free (measured: the broker stays up and the next CLI gets in). This listener is there so that an accept
  // error that does surface as an event can never end the broker: an unhandled 'error' would
  server.on('error', () => {});
  return {
    server,
    path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          // the socket is gone with the server; a folder made for it in the temp dir (a data dir too deep for a
          // socket path) goes too, unless something else is in it (rmdir refuses then)
          if (folder && folder !== join(dir, 'run')) {
            try {
              rmdirSync(folder);
            } catch {
              // not empty, or already gone: left as it is
            }
          }
          resolve();
        });
      }),
  };
}

function handshake(socket: Socket, secret: Buffer, onConnection: (channel: Channel, role: Role) => void): void {
  let done = false;
  // counted before the channel sees the bytes (this listener is added first), so an oversized first chunk
  // is refused before any of it is parsed
  let received = 0;
  const count = (chunk: Buffer) => {
    if (done) return;
    received += chunk.length;
    if (received > HANDSHAKE_MAX_BYTES) channel.destroy(new IpcError('handshake-too-large', 'too much data before authentication'));
  };
  socket.on('data', count);
  const channel = new Channel(socket, { maxFrame: HANDSHAKE_MAX_FRAME });
  const brokerNonce = newNonce();
  const timer = setTimeout(() => {
    if (!done) channel.destroy(new IpcError('handshake-timeout', 'no handshake'));
  }, HANDSHAKE_TIMEOUT_MS);
  timer.unref();
  channel.setHandlers({
    request: (method, params) => {
      if (done) throw new IpcError('bad-state', 'already authenticated');
      if (method !== AUTH) {
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
      socket.off('data', count);
      channel.setMaxFrame();
      const answer = { proof: proof(secret, 'broker', brokerNonce, p.nonce) };
      // hand over before answering, so no frame the peer sends after the answer can miss its handler
      onConnection(channel, role);
      return answer;
    },
    close: () => clearTimeout(timer),
  });
  channel.notify(HELLO, { nonce: brokerNonce, v: 1 });
}
