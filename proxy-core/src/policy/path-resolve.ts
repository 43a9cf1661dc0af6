/**
 * Which file a path argument names, resolved the way the operating system resolves it: one component at a time,
 * a symlink followed before the next `..` (so `notes/Dropbox/../x`, with `notes/Dropbox` a symlink to
 * `~/Dropbox`, is `~/x`, not `notes/x`), with the kernel's limit on symlinks followed (ELOOP), a dangling symlink
 * followed to where it points (a write through it creates the file there), and the part that does not exist
 * yet taken as written.
 *
 * A server may instead normalise `..` as text before it opens anything (the reference filesystem server does),
 * so a path argument has two readings: `kernel` (what open(2) on the raw text reaches) and `lexical` (`..`
 * removed as text first, then resolved). They differ only for a `..` after a symlink. Every reader of a path
 * argument (path rules in the wrapper, previews, proposed scopes, undo snapshots in the broker) goes through
 * here, and treats a path with two readings as naming both: an allow must hold for both, a deny or an ask for
 * either.
 *
 * Synchronous and cheap (one lstat per component, a readlink per symlink): path rules are judged in the
 * wrapper in the same tick as the call. Windows normalises `..` as text before its kernel sees the path, so
 * there the two readings are the same.
 */
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';
import { realPath } from '../util/real-path.js';

export interface PathEnv {
  platform: NodeJS.Platform;
  home: string;
  /** The real path of an existing path (symlinks followed); throws when it does not exist. */
  realpath(path: string): string;
  /**
   * The target of the symlink at `path` (as stored), null when something else is there, 'missing' (or a throw
   * of ENOENT, ENOTDIR) when nothing is. Without it, a symlink is told by its realpath (a dangling one then
   * looks missing).
   */
  readlink?(path: string): string | null | 'missing';
  /** Does the path (symlinks followed) exist? A cheaper test than a realpath that throws; optional. */
  exists?(path: string): boolean;
}

export const systemPathEnv: PathEnv = {
  platform: process.platform,
  home: homedir(),
  // the kernel's own walk where it can be asked for (util/real-path.ts), realpath(3) elsewhere
  realpath: realPath,
  readlink: (p) => {
    // no exception for the common case of a file not yet written: creating one costs more than the lstat
    const st = lstatSync(p, { throwIfNoEntry: false });
    return st === undefined ? 'missing' : st.isSymbolicLink() ? readlinkSync(p) : null;
  },
  exists: (p) => existsSync(p),
};

export interface Readings {
  /** What the kernel opens for the raw text: each symlink followed before the `..` after it. */
  kernel: string;
  /** `..` and `.` removed as text first, then the symlinks followed. */
  lexical: string;
}

/** Symlinks the kernel follows in one lookup before it gives up with ELOOP (Linux: 40; macOS, BSD: 32). */
/** The longest path Linux takes (PATH_MAX, with its NUL); macOS takes less. */
const PATH_MAX = 4095;

export function symlinkLimit(platform: NodeJS.Platform): number {
  return platform === 'linux' || platform === 'android' ? 40 : 32;
}

export function pathApi(platform: NodeJS.Platform): typeof posix {
  return platform === 'win32' ? win32 : posix;
}

/**
 * The absolute path an argument names, `..` left in place (resolving them is the file system's business):
 * `~` and `~/x` from the home folder, a relative path from `cwd`. Null for a relative path with no usable cwd.
 */
export function expandArgPath(value: string, env: Pick<PathEnv, 'home' | 'platform'>, cwd?: string): string | null {
  const path = pathApi(env.platform);
  if (value === '~') return env.home;
  if (value.startsWith('~/') || (env.platform === 'win32' && value.startsWith('~\\'))) return `${env.home}${path.sep}${value.slice(2)}`;
  if (path.isAbsolute(value)) return value;
  if (cwd === undefined || !path.isAbsolute(cwd)) return null;
  return `${cwd}${path.sep}${value}`;
}

function fsError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** The symlink target at `path`, null for anything else, 'missing' when nothing is there. Other errors come through. */
function linkAt(path: string, env: PathEnv): string | null | 'missing' {
  try {
    if (env.readlink) return env.readlink(path);
    const real = env.realpath(path);
    return real === path ? null : real;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    throw err;
  }
}

/**
 * Resolve an absolute path as the kernel does (see the header). Throws ELOOP past the symlink limit, and any
 * error other than a missing component (EACCES on a folder on the way, say): what cannot be resolved is not
 * guessed.
 */
export function kernelPath(absolute: string, env: PathEnv): string {
  const path = pathApi(env.platform);
  if (!path.isAbsolute(absolute)) throw fsError('EINVAL', `not an absolute path: ${absolute}`);
  if (env.platform === 'win32') return lexicalWin32(absolute, env);
  // the kernel refuses a longer path (ENAMETOOLONG); resolving one would only cost time
  if (absolute.length > PATH_MAX) throw fsError('ENAMETOOLONG', 'the path is too long for the file system');
  const root = path.parse(absolute).root;
  const parts = absolute.slice(root.length).split(path.sep);
  const prefix = (k: number) => root + parts.slice(0, k).join(path.sep);
  // The longest prefix that exists is resolved by one realpath(3), which follows symlinks before `..` just as the
  // kernel does; only what lies past it (a missing component, or a dangling symlink) is walked here. A prefix
  // exists only if every shorter one does, so the longest is found by halving.
  let k = parts.length;
  if (env.exists && !env.exists(prefix(k))) {
    let lo = 0;
    let hi = parts.length - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (env.exists(prefix(mid))) lo = mid;
      else hi = mid - 1;
    }
    k = lo;
  }
  for (; k > 0; k--) {
    let real: string;
    try {
      real = env.realpath(prefix(k));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw err;
    }
    return k === parts.length ? real : walk(real, parts.slice(k), absolute, env);
  }
  return walk(root, parts, absolute, env);
}

/** Walk `parts` from the real folder `start`, component by component (see kernelPath). */
function walk(start: string, parts: readonly string[], absolute: string, env: PathEnv): string {
  const path = pathApi(env.platform);
  const limit = symlinkLimit(env.platform);
  let current = start;
  let links = 0;
  // past a component that does not exist, the rest is taken as written: nothing there can be a symlink yet
  let missing = false;
  const todo = [...parts].reverse();
  while (todo.length > 0) {
    const part = todo.pop()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const base = path.parse(current).root;
    const next = current === base ? `${base}${part}` : `${current}${path.sep}${part}`;
    if (missing) {
      current = next;
      continue;
    }
    const link = linkAt(next, env);
    if (link === 'missing') {
      missing = true;
      current = next;
    } else if (link === null) {
      current = next;
    } else {
      if (++links > limit) throw fsError('ELOOP', `too many symlinks on the way to ${absolute}`);
      todo.push(...link.split(path.sep).reverse());
      // a relative target is read from the folder holding the link; an absolute one from the root
      if (path.isAbsolute(link)) current = path.parse(link).root;
    }
  }
  return current;
}

/** Windows: `..` is text there; the existing part's symlinks (and junctions) followed by realpath. */
function lexicalWin32(absolute: string, env: PathEnv): string {
  const path = win32;
  const rest: string[] = [];
  let existing = path.resolve(absolute);
  for (;;) {
    try {
      const real = env.realpath(existing);
      return rest.length ? path.join(real, ...rest.reverse()) : real;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      const parent = path.dirname(existing);
      if (parent === existing) return path.resolve(absolute);
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}

/** Both readings of an absolute path (see the header). Throws when it cannot be resolved (ELOOP, EACCES, ...). */
export function readingsOf(absolute: string, env: PathEnv): Readings {
  const path = pathApi(env.platform);
  const kernel = kernelPath(absolute, env);
  const normalised = path.resolve(absolute);
  const lexical = normalised === absolute || !hasDotSegment(absolute, path.sep) ? kernel : kernelPath(normalised, env);
  return { kernel, lexical };
}

/** The distinct files a path may name: one, or two when a `..` comes after a symlink. */
export function distinct(r: Readings): string[] {
  return r.kernel === r.lexical ? [r.kernel] : [r.kernel, r.lexical];
}

function hasDotSegment(p: string, sep: string): boolean {
  return p.split(sep).some((s) => s === '..' || s === '.');
}

/**
 * The files an argument may name (absolute, real), or null when that cannot be known: a relative path with no
 * working directory, a path that cannot be resolved (a symlink loop, a folder that cannot be read).
 */
export function argPaths(value: string, env: PathEnv, cwd?: string): string[] | null {
  const absolute = expandArgPath(value, env, cwd);
  if (absolute === null) return null;
  try {
    return distinct(readingsOf(absolute, env));
  } catch {
    return null;
  }
}
