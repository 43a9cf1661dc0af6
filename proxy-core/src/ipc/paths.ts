/**
 * Where Airlock keeps its state, and the broker's address. Derived from the environment at call time so that
 * tests (and users) can point everything at a throwaway folder with AIRLOCK_HOME.
 */
import { createRequire } from 'node:module';
import { homedir, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

// node:crypto only where a digest is needed (a named pipe, a data dir too deep for a socket path): loading it
// takes 3-5 ms, and a wrapper locates its broker before it spawns its server, which every client then waits on
const requireBuiltin = createRequire(import.meta.url);
const digestOf = (dir: string): string =>
  (requireBuiltin('node:crypto') as typeof import('node:crypto')).createHash('sha256').update(dir).digest('hex').slice(0, 16);

export type Env = Record<string, string | undefined>;

/** The per-user data dir: $AIRLOCK_HOME, else the OS's per-user app data folder. */
export function dataDir(env: Env = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.AIRLOCK_HOME) return env.AIRLOCK_HOME;
  const home = env.HOME || env.USERPROFILE || homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'Airlock');
  if (platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'Airlock');
  return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'airlock');
}

/** Unix socket paths are capped near 104 bytes (macOS) / 108 (Linux); stay well under. */
const MAX_SOCKET_PATH = 100;

/**
 * The broker's address. Unix: `<data>/run/broker.sock` when short enough, else a 0700 folder in the temp dir
 * named after the data dir, so two data dirs never share a socket. Windows: a named pipe whose name is
 * derived from the user and data dir (pipes are world-readable by default, hence the secret handshake).
 */
export function brokerAddress(dir: string, platform: NodeJS.Platform = process.platform): { path: string; folder: string | null } {
  if (platform === 'win32') {
    const digest = digestOf(dir);
    let user = 'user';
    try {
      user = userInfo().username.replace(/[^A-Za-z0-9_-]/g, '_');
    } catch {
      // no user name on this system: the digest alone still separates data dirs
    }
    return { path: `\\\\.\\pipe\\airlock-${user}-${digest}`, folder: null };
  }
  const folder = join(dir, 'run');
  const path = join(folder, 'broker.sock');
  if (Buffer.byteLength(path) <= MAX_SOCKET_PATH) return { path, folder };
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const short = join(tmpdir(), `airlock-${uid}-${digestOf(dir)}`);
  return { path: join(short, 'broker.sock'), folder: short };
}

export function secretPath(dir: string): string {
  return join(dir, 'secret');
}

/** Where a client finds the broker: its socket (or pipe) and the secret it must prove it knows. */
export interface BrokerEndpoint {
  socketPath: string;
  secretPath: string;
  /** The system broker's user id: the socket's folder and the secret must be that user's (ipc/system.ts). */
  owner?: number;
  /** How a client is told to start this broker when it is not there. */
  startHint?: string;
}

/** The broker a person runs on a data dir of their own. */
export function userEndpoint(dir: string): BrokerEndpoint {
  return { socketPath: brokerAddress(dir).path, secretPath: secretPath(dir) };
}

export function databasePath(dir: string): string {
  return join(dir, 'airlock.db');
}

/** Held (an OS file lock, see broker/lock.ts) by the one broker running on this data dir. */
export function brokerLockPath(dir: string): string {
  return join(dir, 'broker.lock');
}

/**
 * The database's own backups. Not `backups/`: that folder holds the first copies of client config files
 * (clients/backup.ts), which must never be mixed up with or overwritten by a database copy.
 */
export function databaseBackupDir(dir: string): string {
  return join(dir, 'db-backups');
}

/** The latest online backup of the database, replaced atomically at start and every hour. */
export function databaseBackupPath(dir: string): string {
  return join(databaseBackupDir(dir), 'airlock.db.bak');
}

/** Where the original of each client config is kept before Airlock first changes it. */
export function configBackupDir(dir: string): string {
  return join(dir, 'backups');
}

/**
 * The system service's places (hardened mode, ipc/system.ts and service/): its marker under a root, and on
 * Linux its user, data dir and run folder, where its socket and the users group's copy of the secret are.
 */
export const SYSTEM_PLACES = {
  marker: join('etc', 'airlock', 'service.json'),
  socket: 'broker.sock',
  secret: 'secret',
  user: 'airlock',
  usersGroup: 'airlock-users',
  dataDir: '/var/lib/airlock',
  runDir: '/run/airlock',
} as const;
