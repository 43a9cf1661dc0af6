/**
 * The UI host's static files: the built renderer, from one directory and nothing outside it. A path is decoded
 * once, refused if any segment is `..` (or holds a NUL or a backslash), resolved below the root, and then
 * resolved again through symlinks: a link that leads out of the directory is refused like `..`.
 */
import { realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

export function contentType(file: string): string {
  return TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export type StaticLookup =
  | { kind: 'file'; path: string; size: number; type: string }
  /** The path tries to leave the directory, or cannot be a file name: refused, never looked up. */
  | { kind: 'refused'; reason: string }
  | { kind: 'missing' };

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The segments of a URL path (raw, percent-encoded, without the query), or why it cannot name a file below
 * the UI directory: decoded once; `..` and `.` segments, NUL and backslashes are refused (before and after
 * decoding, so `%2e%2e` and `..%2f` are refused like `..`).
 */
export function staticPath(urlPath: string): { segments: string[] } | string {
  if (!urlPath.startsWith('/')) return 'the path must start with /';
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return 'the path is not valid percent-encoding';
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return 'the path holds a character a file name here cannot';
  const segments = decoded.split('/');
  if (segments.some((s) => s === '..' || s === '.')) return 'the path leaves the UI directory';
  return { segments: segments.filter(Boolean) };
}

/**
 * Find the file a URL path names below `root` (`/` is index.html). `urlPath` is the raw path of the request,
 * percent-encoded, without the query.
 */
export async function lookupStatic(root: string, urlPath: string): Promise<StaticLookup> {
  const checked = staticPath(urlPath);
  if (typeof checked !== 'object') return { kind: 'refused', reason: checked };
  const rel = checked.segments.join(sep);
  const base = resolve(root);
  const wanted = resolve(base, rel === '' ? 'index.html' : rel);
  if (!inside(base, wanted)) return { kind: 'refused', reason: 'the path leaves the UI directory' };
  let real: string;
  let realRoot: string;
  try {
    realRoot = await realpath(base);
    real = await realpath(wanted);
  } catch {
    return { kind: 'missing' };
  }
  if (!inside(realRoot, real)) return { kind: 'refused', reason: 'the path leads out of the UI directory' };
  try {
    const s = await stat(real);
    if (!s.isFile()) return { kind: 'missing' };
    return { kind: 'file', path: real, size: s.size, type: contentType(real) };
  } catch {
    return { kind: 'missing' };
  }
}

/** Whether the directory has a built UI to serve (its index.html is a file). */
export async function hasIndex(root: string | undefined): Promise<boolean> {
  if (!root) return false;
  try {
    return (await stat(join(root, 'index.html'))).isFile();
  } catch {
    return false;
  }
}
