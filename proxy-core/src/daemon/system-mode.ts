/**
 * The broker as a system service (`airlock daemon --system`): it runs as a user of its own, and the people who
 * may use it are the members of one group. What each of them may do is set by the file system:
 * - the data dir (database, lock, backups, the secret's own copy): the service user's alone, 0700;
 * - the run folder (/run/airlock): the service user's, group = the users group, 0750: members may enter it and
 *   open what is in it, but neither add, rename nor remove anything there, so the socket cannot be replaced;
 * - the socket: 0660, of the users group (connecting needs write permission on it);
 * - a copy of the secret, 0640, of the users group: members can prove they know it, none can change it. Knowing
 *   it lets a member talk to the broker, not pose as it: that needs the socket's path, which only the service
 *   user can bind.
 * The service user must be a member of the users group (the unit's SupplementaryGroups) to give files to it.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SYSTEM_SECRET, SYSTEM_SOCKET } from '../ipc/system.js';
import { ensureOwnFolder } from '../util/own-folder.js';

export interface SystemMode {
  /** The folder of the socket and the secret's copy (the unit's RuntimeDirectory). */
  runDir: string;
  /** The users group's id. */
  gid: number;
}

export class SystemModeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SystemModeError';
  }
}

export function systemSocketPath(mode: SystemMode): string {
  return join(mode.runDir, SYSTEM_SOCKET);
}

/** Checked and made before the broker takes its lock: a broker that cannot be kept apart does not start. */
export function prepareSystemDirs(dataDir: string, mode: SystemMode): void {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') throw new SystemModeError('--system is for Linux and macOS (see the README for Windows)');
  if (process.getuid() === 0) throw new SystemModeError("the system broker does not run as root: run it as the service's own user (`airlock service install` sets that up)");
  if (!process.getgroups?.().includes(mode.gid)) {
    throw new SystemModeError(`this broker's user is not a member of the users group (gid ${mode.gid}), so it cannot open its socket to them: add it (the unit's SupplementaryGroups, or usermod -aG)`);
  }
  // (util/own-folder.ts: a real folder of this user's, never a link; NotOwnFolderError says which and why)
  ensureOwnFolder(dataDir, 'the data dir', 0o700);
  ensureOwnFolder(mode.runDir, 'the run folder', 0o750, mode.gid);
}

/** The secret, readable by the users group: written aside, given its group and mode, then put in place whole. */
export function publishSecret(mode: SystemMode, secret: Buffer): void {
  const final = join(mode.runDir, SYSTEM_SECRET);
  const aside = join(mode.runDir, `.secret-${randomBytes(6).toString('hex')}`);
  try {
    writeFileSync(aside, secret.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    chownSync(aside, -1, mode.gid);
    chmodSync(aside, 0o640);
    renameSync(aside, final);
  } catch (err) {
    rmSync(aside, { force: true });
    throw err;
  }
}
