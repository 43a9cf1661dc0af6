/**
 * The folders on the way to a file undo puts back must be the folders the call wrote in. A snapshot records the
 * identity (device and inode) of every folder above each path; an undo walks the path again one folder at a
 * time, never following a symlink, and checks each against that record before it reads or writes anything. A
 * folder swapped since (for a symlink, or another folder) is a conflict that forcing cannot override: the write
 * would land somewhere the call never touched.
 *
 * Node has no openat. On Linux the walk holds each folder open and goes on from `/proc/self/fd/N/<name>`, which
 * the kernel resolves through the open folder, not the path: once verified, a folder cannot be swapped under
 * the undo, and every read, write, rename and removal goes through it. Elsewhere (no /proc) the folders are
 * checked by lstat, and checked again just before each write and after it; a swap in the microseconds between
 * that check and the write is the race that remains there.
 */
import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, type BigIntStats } from 'node:fs';
import { dirname, join, parse, sep } from 'node:path';
import { argPaths, type PathEnv } from '../../policy/path-resolve.js';
import { DIR_FLAGS, PROC_FD } from '../../util/own-folder.js';

/** A folder's identity, `dev:ino` (as text: an inode may not fit a double). */
export type FolderId = string;


function idOf(st: BigIntStats): FolderId {
  return `${st.dev}:${st.ino}`;
}

/** The folders above `path` (root first) as names: `/a/b/c.txt` is ['a', 'b']. */
function partsAbove(path: string): string[] {
  const dir = dirname(path);
  return dir.slice(parse(dir).root.length).split(sep).filter((p) => p !== '');
}

/**
 * The identity of each folder above `path` that exists, root first, stopping at the first missing one (what a
 * call then creates is recorded when it ends). Throws when one is not a real folder (a symlink: the path was
 * resolved, so one there now was swapped in on the way).
 */
export function folderChain(path: string): FolderId[] {
  const root = parse(path).root;
  const out: FolderId[] = [];
  let at = root;
  for (const part of ['', ...partsAbove(path)]) {
    if (part !== '') at = join(at, part);
    let st: BigIntStats;
    try {
      st = lstatSync(at, { bigint: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return out;
      throw err;
    }
    if (!st.isDirectory()) throw Object.assign(new Error(`${at} is not a folder (a ${st.isSymbolicLink() ? 'symlink' : 'file'})`), { code: 'ENOTDIR' });
    out.push(idOf(st));
  }
  return out;
}

/** The folder a path is in, verified: `at(name)` is a path that reaches `name` inside it. */
export interface HeldFolder {
  at(name: string): string;
  /** A path that reaches the folder `folder` (one on the way) through the folder above it; null when not on the way. */
  entry(folder: string): string | null;
  /** Still the same folders (always true when held by descriptor); a reason when not. */
  verify(): string | null;
  close(): void;
}

export type FolderWalk = { ok: true; folder: HeldFolder; created: string[] } | { ok: false; conflict: string };

/**
 * Walk to the folder holding `path`, each folder checked against `expected` (snapshot time, then what the call
 * created) where known, and never a symlink. A missing folder is created when `create` (a file being put back),
 * else the walk stops there (`missing`: nothing below exists to undo).
 */
export function walkToFolder(path: string, expected: readonly (FolderId | undefined)[], create: boolean): FolderWalk | { ok: 'missing' } {
  const root = parse(path).root;
  const parts = partsAbove(path);
  const fds: number[] = [];
  const plain: string[] = [root];
  const created: string[] = [];
  const fail = (conflict: string): FolderWalk => {
    for (const fd of fds) closeSync(fd);
    return { ok: false, conflict };
  };
  const fresh = new Set<number>();
  const check = (depth: number, st: BigIntStats, shown: string): string | null => {
    if (!st.isDirectory()) return `${shown} is no longer a folder (now a ${st.isSymbolicLink() ? 'symlink' : 'file'})`;
    // a folder undo just created is new: no record can name it
    const want = fresh.has(depth) ? undefined : expected[depth];
    if (want !== undefined && want !== idOf(st)) return `${shown} is not the folder the call wrote in (it was replaced since)`;
    return null;
  };
  try {
    for (let depth = 0; depth <= parts.length; depth++) {
      const shown = plain[depth]!;
      const via = depth === 0 ? root : PROC_FD ? `${PROC_FD}/${fds[depth - 1]}/${parts[depth - 1]}` : shown;
      let st: BigIntStats;
      try {
        st = lstatSync(via, { bigint: true });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT') return fail(`${shown} cannot be read (${code ?? String(err)})`);
        if (!create) {
          for (const fd of fds) closeSync(fd);
          return { ok: 'missing' };
        }
        // mkdir never follows a symlink at its last component: it fails if anything is there
        mkdirSync(via);
        created.push(shown);
        fresh.add(depth);
        st = lstatSync(via, { bigint: true });
      }
      const bad = check(depth, st, shown);
      if (bad) return fail(bad);
      if (PROC_FD) {
        const fd = openSync(via, DIR_FLAGS);
        fds.push(fd);
        const held = fstatSync(fd, { bigint: true });
        // the folder opened is the one checked (not one swapped in between the lstat and the open)
        if (idOf(held) !== idOf(st)) return fail(`${shown} was swapped while undo was checking it`);
      }
      if (depth < parts.length) plain.push(join(shown, parts[depth]!));
    }
  } catch (err) {
    return fail(`the folders above ${path} cannot be checked (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const folder: HeldFolder = {
    at: (name) => (PROC_FD ? `${PROC_FD}/${fds[fds.length - 1]}/${name}` : join(plain[plain.length - 1]!, name)),
    entry: (dir) => {
      const k = plain.indexOf(dir);
      if (k <= 0) return null;
      return PROC_FD ? `${PROC_FD}/${fds[k - 1]}/${parts[k - 1]}` : dir;
    },
    verify: () => {
      if (PROC_FD) return null;
      for (let depth = 0; depth < plain.length; depth++) {
        let st: BigIntStats;
        try {
          st = lstatSync(plain[depth]!, { bigint: true });
        } catch (err) {
          return `${plain[depth]} is gone (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
        }
        const bad = check(depth, st, plain[depth]!);
        if (bad) return bad;
      }
      return null;
    },
    close: () => {
      for (const fd of fds.splice(0)) closeSync(fd);
    },
  };
  return { ok: true, folder, created };
}

/** Undo goes through held folders where it can (Linux); said in reports and tests. */
export const FOLDERS_HELD_BY_DESCRIPTOR = PROC_FD !== null;

/** The folders an undo expects above a path: as they were before the call, then the ones it created. */
export function expectedFolders(entry: { dirs?: FolderId[]; dirsAfter?: FolderId[] }): (FolderId | undefined)[] {
  const before = entry.dirs ?? [];
  const after = entry.dirsAfter ?? [];
  const out: (FolderId | undefined)[] = [...before];
  for (let i = before.length; i < after.length; i++) out.push(after[i]);
  return out;
}

/** folderChain, or undefined when it cannot be read (the undo then checks only that no folder is a symlink). */
export function folderChainOrNone(path: string): FolderId[] | undefined {
  try {
    return folderChain(path);
  } catch {
    return undefined;
  }
}

/** The folder of a walk that must succeed (a file being put back), or an error saying why nothing was written. */
export function heldOrThrow(walk: FolderWalk | { ok: 'missing' }): HeldFolder {
  if (walk.ok === true) return walk.folder;
  throw new Error(walk.ok === false ? `${walk.conflict}: nothing was written there` : 'a folder on the way could not be made');
}

/**
 * Did the way to a snapshotted file change while its call ran (a folder above it swapped, or a symlink in the
 * argument pointed elsewhere)? Then the call may have written a file that was never snapshotted, and the files
 * that were say nothing: the reason, or null when the way is as it was.
 */
export function driftSince(entries: readonly { path: string; dirs?: FolderId[]; raw?: string }[], env: PathEnv): string | null {
  for (const e of entries) {
    if (e.dirs) {
      const now = folderChainOrNone(e.path);
      if (!now || e.dirs.some((id, i) => now[i] !== id)) return `a folder above ${e.path} was replaced while the call ran, so which file it wrote is not known`;
    }
    if (e.raw !== undefined) {
      const now = argPaths(e.raw, env);
      const known = now !== null && now.every((p) => entries.some((x) => x.path === p));
      if (!known) return `${e.raw} led to another file once the call had run (a symlink on the way changed), so which file it wrote is not known`;
    }
  }
  return null;
}
