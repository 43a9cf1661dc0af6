/**
 * The app's own pages: their scheme and origin, the CSP every one of them gets, and which file of the built
 * renderer a URL names. Pure (no Electron), so the refusals are tested on their own.
 */
import { isAbsolute, join, relative } from 'node:path';

export const SCHEME = 'airlock';
export const APP_ORIGIN = `${SCHEME}://app`;

/** No inline script or style, nothing from elsewhere, no network: the renderer talks only through the preload. */
export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'none'; " +
  "object-src 'none'; frame-src 'none'; worker-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The URL of a renderer route (`/approvals`, `/ticket/ID`): the UI routes on the hash. */
export function appUrl(route: string): string {
  return `${APP_ORIGIN}/index.html#${route}`;
}

/** Whether a page's URL is one of the app's own. */
export function isAppUrl(url: string | undefined | null): boolean {
  if (!url) return false;
  try {
    const u = new URL(url);
    return u.protocol === `${SCHEME}:` && u.host === 'app';
  } catch {
    return false;
  }
}

/**
 * The file of `dist` a URL names, or null when it names none: another host, an encoded separator or NUL, or a
 * path that leaves `dist` (`..` after decoding).
 */
export function fileFor(dist: string, url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== `${SCHEME}:` || u.host !== 'app') return null;
  // an encoded slash, backslash or NUL is never part of a real asset name
  if (/%(2f|5c|00)/i.test(u.pathname) || u.pathname.includes('\\')) return null;
  let path: string;
  try {
    path = decodeURIComponent(u.pathname);
  } catch {
    return null;
  }
  if (path === '/' || path === '') path = '/index.html';
  const file = join(dist, ...path.split('/').filter(Boolean));
  const rel = relative(dist, file);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  return file;
}
