/**
 * The system broker (hardened mode, `airlock service install`): how a person's CLI and wrappers learn that it is
 * installed, and why they may believe it.
 *
 * The service's marker, /etc/airlock/service.json, is written by the installing administrator. It is believed
 * only when it and every folder above it belong to root and nobody else may write them (a sticky folder such as
 * /tmp counts as closed: others cannot rename or remove root's entries in it), so that no person, and no agent
 * running as one, can plant or edit it. What it names (the run folder, the secret) is checked again at connect
 * time: the run folder and the secret must belong to the service's user and be writable by nobody else, so no
 * person can have put a socket or a secret of their own there.
 *
 * Only node:fs: the wrapper loads this on its start-up path.
 */
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, sep } from 'node:path';
import { type BrokerEndpoint, dataDir, type Env, SYSTEM_PLACES, userEndpoint } from './paths.js';

/** The marker's place under a root (`/` on a real system). */
export const MARKER_PATH = SYSTEM_PLACES.marker;
export const SYSTEM_SOCKET = SYSTEM_PLACES.socket;
export const SYSTEM_SECRET = SYSTEM_PLACES.secret;

/** What `airlock service install` records about the service it set up. */
export interface ServiceMarker {
  version: 1;
  /** The service's user and its id (the owner clients require of the run folder and the secret). */
  user: string;
  uid: number;
  /** The group whose members may use the broker, and its id. */
  usersGroup: string;
  gid: number;
  dataDir: string;
  runDir: string;
}

export class ServiceMarkerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServiceMarkerError';
  }
}

const NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

/** Parse a marker's text; throws ServiceMarkerError naming what is wrong. */
export function parseServiceMarker(text: string, path: string): ServiceMarker {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ServiceMarkerError(`the Airlock service marker ${path} is not JSON; reinstall the service (sudo airlock service install)`);
  }
  const m = value as Partial<ServiceMarker> | null;
  const ok =
    typeof m === 'object' && m !== null && m.version === 1 &&
    typeof m.user === 'string' && NAME.test(m.user) && typeof m.usersGroup === 'string' && NAME.test(m.usersGroup) &&
    Number.isSafeInteger(m.uid) && m.uid! > 0 && Number.isSafeInteger(m.gid) && m.gid! > 0 &&
    typeof m.dataDir === 'string' && isAbsolute(m.dataDir) && typeof m.runDir === 'string' && isAbsolute(m.runDir);
  if (!ok) throw new ServiceMarkerError(`the Airlock service marker ${path} is damaged; reinstall the service (sudo airlock service install)`);
  const { version, user, uid, usersGroup, gid, dataDir: data, runDir } = m as ServiceMarker;
  return { version, user, uid, usersGroup, gid, dataDir: data, runDir };
}

/**
 * Throws unless `path` and every folder above it belong to root and are writable by no one else (a sticky folder
 * may be world-writable). Links are resolved first, so what is checked is what is opened.
 */
export function assertRootOwned(path: string, what: string): void {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (err) {
    throw new ServiceMarkerError(`cannot check ${what} ${path}: ${(err as Error).message}`);
  }
  const parts = real.split(sep).filter(Boolean);
  for (let i = parts.length; i >= 0; i--) {
    const p = sep + parts.slice(0, i).join(sep);
    const st = lstatSync(p);
    const sticky = (st.mode & 0o1000) !== 0;
    const othersWrite = (st.mode & 0o022) !== 0;
    if (st.uid !== 0 || (othersWrite && !(st.isDirectory() && sticky && p !== real))) {
      throw new ServiceMarkerError(`${what} ${path} is not trustworthy: ${p} belongs to uid ${st.uid} with mode ${(st.mode & 0o7777).toString(8)} (it must be root's, and writable by root only)`);
    }
  }
}

/**
 * The installed service under `root`, or null when there is none. Throws when a marker is there but cannot be
 * believed (wrong owner, writable by others, damaged): fail closed, never fall back to a person's own broker.
 */
export function readServiceMarker(root: string = sep): ServiceMarker | null {
  const path = join(root, MARKER_PATH);
  try {
    lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw new ServiceMarkerError(`cannot read the Airlock service marker ${path}: ${(err as Error).message}`);
  }
  assertRootOwned(path, 'the Airlock service marker');
  return parseServiceMarker(readFileSync(path, 'utf8'), path);
}

/** The system broker's endpoint as the marker describes it. */
export function systemEndpoint(marker: ServiceMarker): BrokerEndpoint {
  return {
    socketPath: join(marker.runDir, SYSTEM_SOCKET),
    secretPath: join(marker.runDir, SYSTEM_SECRET),
    owner: marker.uid,
    startHint: 'it runs as the Airlock service: see `airlock service status`, start it with `sudo systemctl start airlock` (macOS: `sudo launchctl kickstart system/com.airlock.broker`)',
  };
}

/**
 * The service that clients on this machine must use, if any. The real root's marker comes first and cannot be
 * overridden; AIRLOCK_SYSTEM_ROOT (a staged root: tests, packaging) is looked at only when the real root has
 * none, and its marker must pass the same checks, so setting it can add a system broker but never hide one.
 */
export function installedService(env: Env = process.env): ServiceMarker | null {
  const real = readServiceMarker(sep);
  if (real) return real;
  const staged = env.AIRLOCK_SYSTEM_ROOT;
  if (!staged) return null;
  if (!isAbsolute(staged)) throw new ServiceMarkerError(`AIRLOCK_SYSTEM_ROOT must be an absolute path (got "${staged}")`);
  const marker = readServiceMarker(staged);
  if (!marker) throw new ServiceMarkerError(`AIRLOCK_SYSTEM_ROOT is ${staged}, but there is no Airlock service marker at ${join(staged, MARKER_PATH)}`);
  return marker;
}

export interface Located {
  endpoint: BrokerEndpoint;
  /** The person's own data dir: where a wrapper keeps its journal spill (and, with no service, the broker's). */
  dir: string;
  system: ServiceMarker | null;
}

/**
 * Which broker a person's CLI or wrapper talks to. The order, and why:
 * 1. an installed service (a believed marker, above): always, whatever --home or AIRLOCK_HOME say, since those
 *    are the person's to change (protect writes --home into client configs), and a broker the person can start
 *    on their own data dir is one an agent can start too;
 * 2. otherwise `explicitHome` (a wrapper's --home), then AIRLOCK_HOME, then the per-user default data dir.
 * `note` hears that a --home or AIRLOCK_HOME was passed over for the service.
 */
export function locateBroker(explicitHome: string | undefined, env: Env = process.env, note?: (msg: string) => void): Located {
  const own = explicitHome ?? dataDir(env);
  const system = installedService(env);
  if (!system) return { endpoint: userEndpoint(own), dir: own, system: null };
  const asked = explicitHome ?? env.AIRLOCK_HOME;
  if (asked !== undefined && asked !== system.dataDir) {
    note?.(`airlock: the Airlock service is installed: using its broker (socket in ${system.runDir}), not the data dir ${asked}`);
  }
  return { endpoint: systemEndpoint(system), dir: own, system };
}

/**
 * Before a client trusts a system endpoint: the run folder and the secret must be the service user's and writable
 * by no one else, or another person could have put their own socket and secret there while the service was down.
 */
export function assertServiceOwned(endpoint: BrokerEndpoint): void {
  if (endpoint.owner === undefined) return;
  for (const [path, what] of [
    [dirname(endpoint.socketPath), "the system broker's run folder"],
    [endpoint.secretPath, "the system broker's secret"],
  ] as const) {
    const st = lstatSync(path);
    if (st.uid !== endpoint.owner || (st.mode & 0o022) !== 0 || st.isSymbolicLink()) {
      throw new ServiceMarkerError(`${what} ${path} belongs to uid ${st.uid} with mode ${(st.mode & 0o7777).toString(8)}; it must be the service user's (uid ${endpoint.owner}) and writable by it alone: refusing to use it`);
    }
  }
}
