/**
 * A folder Airlock makes for files of its own (undo's snapshots, the broker's socket, the database's and the client
 * configs' backups, the journal's spill files): made when missing, and used only when it is a real folder of this
 * process's user, never a symlink. The agent Airlock gates runs as the same user, and another person's process may
 * reach /tmp: either can put a symlink where such a folder goes. Followed, Airlock would set the mode of, write into
 * and sweep whatever it points to (a snapshots folder made a link to ~/Documents would lose every file there to the
 * sweep of blobs no row refers to). Refused instead, with the folder named and what to do.
 *
 * The check is made on the folder opened (O_NOFOLLOW, then fstat and fchmod), not on a path looked up again after
 * it. On Linux a held folder's files are reached through `/proc/self/fd/N/<name>`, which the kernel resolves through
 * the folder held: a folder swapped for a link after the check is not followed either. Elsewhere the names are paths
 * again, checked once.
 */
import { closeSync, constants, existsSync, fchmodSync, fchownSync, fstatSync, lstatSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';

/** Where a held folder's descriptor can be named as a path (Linux), or null. */
export const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd') ? '/proc/self/fd' : null;

/** How a folder is opened to be held: a folder only, and never through a symlink at its last step. */
export const DIR_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0);

/** (No `code`: what reports an error by its code, as undo does an errno, says this one's message instead.) */
export class NotOwnFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotOwnFolderError';
  }
}

/** A folder checked and held: `at(name)` reaches `name` inside it; `close()` lets it go. */
export interface OwnFolder {
  readonly path: string;
  /** The folder itself, as a path to list. */
  readonly self: string;
  at(name: string): string;
  /** The folder is no longer there to write in: removed while held (or, where not held, no longer a folder at its path). */
  gone(): boolean;
  /** `text` (an error's message) with the descriptor's path, where it names the folder, said as the folder's own path. */
  said(text: string): string;
  close(): void;
}

/**
 * Make `path` (and the folders above it) when missing, check that it is a real folder of this user, give it the
 * group `gid` when asked, set its mode to `mode`, and hold it. Throws NotOwnFolderError when it is a symlink, not a
 * folder, or another user's.
 */
export function holdOwnFolder(path: string, what: string, mode = 0o700, gid?: number): OwnFolder {
  try {
    mkdirSync(path, { recursive: true, mode });
  } catch (err) {
    // a link that leads nowhere (ENOENT), or a file there (EEXIST, said below as what it is)
    if (isLink(path)) throw refused(what, path, 'a symlink');
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (process.platform === 'win32' || typeof process.getuid !== 'function') {
    // no O_NOFOLLOW nor owners here: a link is refused by its look, and the path used as it is
    if (isLink(path)) throw refused(what, path, 'a symlink');
    return byPath(path);
  }
  let fd: number;
  try {
    fd = openSync(path, DIR_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // a link: ELOOP or EMLINK (O_NOFOLLOW), or ENOTDIR where O_DIRECTORY is looked at first (Linux); a file: ENOTDIR
    if (code === 'ELOOP' || code === 'EMLINK' || code === 'ENOTDIR') throw refused(what, path, isLink(path) ? 'a symlink' : 'not a folder');
    throw err;
  }
  try {
    const st = fstatSync(fd);
    const uid = process.getuid();
    if (st.uid !== uid) throw refused(what, path, `uid ${st.uid}'s folder, not this user's (uid ${uid})`);
    // the group first: until the mode is widened, no member of a wrong group can enter
    if (gid !== undefined && st.gid !== gid) fchownSync(fd, -1, gid);
    if ((st.mode & 0o7777) !== mode) fchmodSync(fd, mode);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  if (!PROC_FD) {
    closeSync(fd);
    return byPath(path);
  }
  const self = `${PROC_FD}/${fd}`;
  // the descriptor's path, not the start of another's (fd 23 in /proc/self/fd/234); it holds no pattern character
  const descriptorPath = new RegExp(`${self}(?![0-9])`, 'g');
  let open = true;
  return {
    path,
    self,
    at: (name) => `${self}/${name}`,
    said: (text) => text.replace(descriptorPath, () => path),
    // a removed folder has no link left to it
    gone: () => !open || fstatSync(fd).nlink === 0,
    close: () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** A folder checked once, then used by its path (no descriptor to hold it by here). */
function byPath(path: string): OwnFolder {
  return {
    path,
    self: path,
    at: (name) => join(path, name),
    gone: () => {
      try {
        return !lstatSync(path).isDirectory();
      } catch {
        return true;
      }
    },
    said: (text) => text,
    close: () => {},
  };
}

/** `holdOwnFolder` of a folder that is there (null when nothing is: it is not made). */
export function holdOwnFolderThere(path: string, what: string, mode = 0o700): OwnFolder | null {
  try {
    lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return holdOwnFolder(path, what, mode);
}

/**
 * Run `fn` with `path` made when missing, checked and held as `holdOwnFolder` does, and let it go once `fn` is done
 * (`whileHeld`): what `fn` creates through `folder.at` lands in the folder checked, even when the path is swapped
 * for a link meanwhile.
 */
export function inOwnFolder<T>(path: string, what: string, fn: (folder: OwnFolder) => T): T {
  return whileHeld(holdOwnFolder(path, what), fn);
}

/**
 * Run `fn` with `folder`, and let the folder go once `fn` is done (its promise settled, when it returns one). `fn`
 * must be done with the folder by then. A failure is said with the folder's path, not the descriptor's it was
 * reached through.
 */
export function whileHeld<T>(folder: OwnFolder, fn: (folder: OwnFolder) => T): T {
  let result: T;
  try {
    result = fn(folder);
  } catch (err) {
    folder.close();
    throw named(err, folder);
  }
  if (!(result instanceof Promise)) {
    folder.close();
    return result;
  }
  return result.then(
    (value: unknown) => {
      folder.close();
      return value;
    },
    (err: unknown) => {
      folder.close();
      throw named(err, folder);
    },
  ) as T;
}

/** `err` with the held folder's descriptor path, in its message and its `path` and `dest`, said as the folder's own. */
function named(err: unknown, folder: OwnFolder): unknown {
  if (!(err instanceof Error)) return err;
  err.message = folder.said(err.message);
  const withPaths = err as Error & { path?: unknown; dest?: unknown };
  if (typeof withPaths.path === 'string') withPaths.path = folder.said(withPaths.path);
  if (typeof withPaths.dest === 'string') withPaths.dest = folder.said(withPaths.dest);
  return err;
}

/** `holdOwnFolder`, let go at once: the folder is there, this user's, and of mode `mode` (and group `gid`). */
export function ensureOwnFolder(path: string, what: string, mode = 0o700, gid?: number): void {
  holdOwnFolder(path, what, mode, gid).close();
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function refused(what: string, path: string, found: string): NotOwnFolderError {
  return new NotOwnFolderError(
    `${what} ${path} is ${found}: Airlock keeps its own files only in a real folder of its own, and will not use this one. Move it away and Airlock makes a new one.`,
  );
}
