/**
 * The state of one path as undo sees it, read without following a symlink at the path itself and without ever
 * blocking on a FIFO or a device: absent (with the folders above it that are missing too), a regular file (its
 * sha256, size, mode and mtime; its bytes when capturing), a folder (its mode), or something else (never read).
 * And the writes that put a state back: atomic (a temporary file beside the target, then a rename), mode and
 * mtime included.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, linkSync, lstatSync, openSync, readSync, type Stats, unlinkSync } from 'node:fs';
import { mkdir, open, rename, rmdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export type FileState =
  /** Nothing there; `missing` lists the folders above it that did not exist either, deepest first. */
  | { type: 'absent'; missing?: string[] }
  | { type: 'file'; sha256: string; size: number; mode: number; mtimeMs: number }
  | { type: 'dir'; mode: number }
  /** A symlink, FIFO, socket or device: never read, never written by undo. */
  | { type: 'other'; what: string }
  /** Could not be read (or hashed): undo cannot tell what it is. */
  | { type: 'unknown'; why: string };

/** Reads never follow a symlink at the path, and never wait on a FIFO. */
const READ_FLAGS = process.platform === 'win32' ? constants.O_RDONLY : constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
const CHUNK = 1024 * 1024;
/**
 * Files up to this size are read with synchronous calls: a call waits on its snapshot, and each asynchronous
 * step costs a thread-pool round trip (for 100 KB, reading it that way took twice as long). Reading 1 MiB holds
 * the broker's loop for about a millisecond; bigger files are read asynchronously.
 */
export const SYNC_BYTES = 1024 * 1024;
/** Folders above an absent path looked at: more than this is not a tree a tool call made. */
const MAX_MISSING = 64;
/** Files bigger than this are not hashed (their state is unknown to undo: a conflict unless forced). */
export const HASH_LIMIT = 1024 * 1024 * 1024;

export function why(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
}

/** Two states are the same as far as undo is concerned: same kind, same bytes and mode. */
export function sameState(a: FileState | undefined, b: FileState | undefined): boolean {
  if (!a || !b || a.type !== b.type) return false;
  if (a.type === 'absent') return true;
  if (a.type === 'file' && b.type === 'file') return a.sha256 === b.sha256 && (a.mode & 0o7777) === (b.mode & 0o7777);
  if (a.type === 'dir' && b.type === 'dir') return (a.mode & 0o7777) === (b.mode & 0o7777);
  return false;
}

/** A state in a few words, for conflicts and reports. */
export function describeState(s: FileState): string {
  switch (s.type) {
    case 'absent':
      return 'absent';
    case 'file':
      return `a file of ${s.size} bytes (sha256 ${s.sha256.slice(0, 12)}…, mode ${(s.mode & 0o7777).toString(8)})`;
    case 'dir':
      return 'a folder';
    case 'other':
      return `a ${s.what}`;
    case 'unknown':
      return `unreadable (${s.why})`;
  }
}

type Stat = Stats;

function otherKind(st: Stat): string {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isFIFO()) return 'FIFO';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'device';
  return 'special file';
}

/** lstat (synchronous: one metadata lookup), with a missing path (or folder on the way) as null; other errors come through. */
function lstatOrNull(path: string): Stat | null {
  try {
    return lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/** The folders above an absent path that are missing too, deepest first (what a `mkdir -p` would create). */
async function missingAbove(path: string): Promise<string[]> {
  const missing: string[] = [];
  let dir = dirname(path);
  while (missing.length < MAX_MISSING && dir !== dirname(dir) && lstatOrNull(dir) === null) {
    missing.push(dir);
    dir = dirname(dir);
  }
  return missing;
}

export type Captured =
  | { state: FileState; content?: Buffer }
  /** A regular file over the limit: its state is known, its bytes are not kept. */
  | { state: FileState; tooLarge: true };

/**
 * The state of a path before a call, with the bytes of a regular file of at most `maxBytes` (a bigger one comes
 * back `tooLarge`, unread). Throws when the path exists but cannot be read.
 */
export async function capture(path: string, maxBytes: number): Promise<Captured> {
  const st = lstatOrNull(path);
  if (st === null) return { state: { type: 'absent', missing: await missingAbove(path) } };
  if (st.isDirectory()) return { state: { type: 'dir', mode: st.mode } };
  if (!st.isFile()) return { state: { type: 'other', what: otherKind(st) } };
  if (st.size <= Math.min(SYNC_BYTES, maxBytes)) {
    const got = readSmall(path);
    if (got.content) return { state: { ...got.state }, content: got.content };
    return { state: got.state };
  }
  const handle = await open(path, READ_FLAGS);
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { state: { type: 'other', what: 'special file' } };
    const base = { size: info.size, mode: info.mode, mtimeMs: info.mtimeMs };
    if (info.size > maxBytes) return { state: { type: 'file', sha256: '', ...base }, tooLarge: true };
    // one byte past the size tells a file that grew since the stat (someone is writing it) from one that did not
    const buf = Buffer.alloc(info.size + 1);
    let total = 0;
    while (total < buf.length) {
      const { bytesRead } = await handle.read(buf, total, buf.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    if (total > info.size) throw new Error('the file grew while it was being read');
    const content = buf.subarray(0, total);
    return { state: { type: 'file', sha256: sha256(content), ...base, size: total }, content };
  } finally {
    await handle.close();
  }
}

/** The old file a call replaces, held by a hard link in place of a copy of its bytes (see `hold`). */
export interface Held {
  /** The link's name in the snapshots folder. */
  name: string;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/**
 * For a call that replaces a file (writes a new one and renames it over), keep the old one by a hard link at
 * `linkPath` rather than copying its bytes before the call: the call then waits for a link, not for a copy. The
 * bytes are read once the call is over, and only if the old file was left as it was (same size and mtime: a
 * server that wrote into it after all is caught there). Null when this cannot be done (another filesystem, a
 * file with other links that someone else could write through, a file swapped on the way): copy it instead.
 */
export function hold(path: string, linkPath: string, name: string): { state: FileState; held: Held } | null {
  // On Linux, link(2) never follows a symlink at the path (one is linked as a symlink, and let go below): what the
  // link holds is what the path named when it was made, and nothing need be looked at before it (the call waits
  // for each system call). Elsewhere it may follow one: the path is looked at first, and the link must be that file.
  let st: Stat | null = null;
  if (process.platform !== 'linux') {
    st = lstatOrNull(path);
    if (st === null || !st.isFile() || st.nlink !== 1) return null;
  }
  try {
    linkSync(path, linkPath);
  } catch {
    // a folder, a missing file, another filesystem
    return null;
  }
  const linked = lstatOrNull(linkPath);
  // two names, the path's and the link's: a file with a third could be written through it meanwhile
  if (linked === null || !linked.isFile() || linked.nlink !== 2 || (st !== null && (linked.ino !== st.ino || linked.dev !== st.dev))) {
    try {
      unlinkSync(linkPath);
    } catch {
      // nothing was kept
    }
    return null;
  }
  return {
    state: { type: 'file', sha256: '', size: linked.size, mode: linked.mode, mtimeMs: linked.mtimeMs },
    held: { name, dev: linked.dev, ino: linked.ino, size: linked.size, mtimeMs: linked.mtimeMs },
  };
}

/** The bytes of a held file, if it is still the file it was when it was held (throws, saying why, if not). */
export async function readHeld(linkPath: string, held: Held): Promise<Buffer> {
  const st = lstatOrNull(linkPath);
  if (st === null) throw new Error('the old file Airlock held is gone');
  if (st.ino !== held.ino || st.dev !== held.dev || !st.isFile()) throw new Error('the old file Airlock held was replaced');
  if (st.size !== held.size || st.mtimeMs !== held.mtimeMs) throw new Error('the server wrote into the old file instead of replacing it, so its prior bytes are lost');
  if (st.size <= SYNC_BYTES) {
    const got = readSmall(linkPath);
    if (!got.content) throw new Error('the old file Airlock held cannot be read');
    return got.content;
  }
  const got = await capture(linkPath, Number.MAX_SAFE_INTEGER);
  if (!('content' in got) || !got.content) throw new Error('the old file Airlock held cannot be read');
  return got.content;
}

/**
 * Is the held link still the file that was held, and now its only name (the server renamed a new file over the
 * old one, so nothing but Airlock's link refers to it)? Then its bytes can become a blob as they are (no copy).
 */
export function heldAlone(linkPath: string, held: Held): boolean {
  const st = lstatOrNull(linkPath);
  return st !== null && st.isFile() && st.nlink === 1 && st.ino === held.ino && st.dev === held.dev && st.size === held.size && st.mtimeMs === held.mtimeMs;
}

/**
 * The state of a path now, a regular file hashed as it is read (up to `hashLimit` bytes; past that it is
 * `unknown`). Never throws: what cannot be read is `unknown`.
 */
export async function currentState(path: string, hashLimit: number): Promise<FileState> {
  try {
    const st = lstatOrNull(path);
    if (st === null) return { type: 'absent' };
    if (st.isDirectory()) return { type: 'dir', mode: st.mode };
    if (!st.isFile()) return { type: 'other', what: otherKind(st) };
    if (st.size > hashLimit) return { type: 'unknown', why: `over ${hashLimit} bytes, too large to hash` };
    if (st.size <= SYNC_BYTES) return readSmall(path).state;
    const handle = await open(path, READ_FLAGS);
    try {
      const info = await handle.stat();
      if (!info.isFile()) return { type: 'other', what: 'special file' };
      const hash = createHash('sha256');
      const buf = Buffer.alloc(Math.min(CHUNK, info.size + 1));
      let total = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buf, 0, buf.length, total);
        if (bytesRead === 0) break;
        total += bytesRead;
        if (total > hashLimit) return { type: 'unknown', why: `over ${hashLimit} bytes, too large to hash` };
        hash.update(buf.subarray(0, bytesRead));
      }
      return { type: 'file', sha256: hash.digest('hex'), size: total, mode: info.mode, mtimeMs: info.mtimeMs };
    } finally {
      await handle.close();
    }
  } catch (err) {
    return { type: 'unknown', why: why(err) };
  }
}

/**
 * A small regular file read synchronously: its state and bytes (a file that grew to more than SYNC_BYTES since
 * its lstat comes back as grown: the caller reads it again). Throws when it cannot be read.
 */
function readSmall(path: string): { state: FileState; content?: Buffer } {
  const fd = openSync(path, READ_FLAGS);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { state: { type: 'other', what: 'special file' } };
    // unsafe: only the bytes read are ever looked at
    const buf = Buffer.allocUnsafe(info.size + 1);
    let total = 0;
    while (total < buf.length) {
      const n = readSync(fd, buf, total, buf.length - total, total);
      if (n === 0) break;
      total += n;
    }
    if (total > info.size) throw new Error('the file grew while it was being read');
    const content = buf.subarray(0, total);
    return { state: { type: 'file', sha256: sha256(content), size: total, mode: info.mode, mtimeMs: info.mtimeMs }, content };
  } finally {
    closeSync(fd);
  }
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Put a regular file back: its bytes, mode and mtime, written beside it and renamed over whatever is there (a
 * file; a symlink is replaced, never followed). Its folder must exist (the undo walked and verified it, and
 * `path` reaches the file through it: dirs.ts). Throws on failure.
 */
export async function writeBack(path: string, content: Buffer, mode: number, mtimeMs: number): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path).slice(0, 100)}.airlock-undo-${randomBytes(6).toString('hex')}`);
  try {
    // mode and times set on the open file, never by name: a symlink put in the temporary file's place meanwhile
    // would be followed by a chmod or utimes by name
    const handle = await open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(content);
      await handle.chmod(mode & 0o7777);
      const seconds = mtimeMs / 1000;
      await handle.utimes(seconds, seconds);
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

/** Remove what a call created at `path` (a file, or an empty folder); absent already is fine. Throws on failure. */
export async function removePath(path: string): Promise<void> {
  const st = lstatOrNull(path);
  if (st === null) return;
  if (st.isDirectory()) await rmdir(path);
  else await unlink(path);
}

/** Remove the folders a call created above a path, deepest first, as long as they are empty; what stays is returned. */
export async function removeEmptyFolders(folders: readonly string[]): Promise<string[]> {
  const kept: string[] = [];
  for (const dir of folders) {
    try {
      await rmdir(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') kept.push(`${dir} (${code ?? why(err)})`);
    }
  }
  return kept;
}

/** Put a folder back: create it when it is gone (empty: its contents were never copied), else restore its mode. Its parent must exist. */
export async function folderBack(path: string, mode: number): Promise<'recreated' | 'restored'> {
  const st = lstatOrNull(path);
  if (st === null) {
    await mkdir(path, { mode: mode & 0o7777 });
    return 'recreated';
  }
  if (!st.isDirectory()) throw new Error(`${path} is no longer a folder`);
  // by the open folder, not its name: a symlink swapped in since the lstat is not followed
  const handle = await open(path, process.platform === 'win32' ? constants.O_RDONLY : constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    await handle.chmod(mode & 0o7777);
  } finally {
    await handle.close();
  }
  return 'restored';
}
