/**
 * The app's own scheme, `airlock://app/`, serving the built renderer. A custom protocol rather than `file:`:
 * every page has one origin of its own, each answer carries the CSP, and nothing outside `renderer/dist` can
 * be read through it (a `file:` page could load any file on the disk).
 */
import { protocol } from 'electron';
import { readFile, realpath } from 'node:fs/promises';
import { extname, relative, sep } from 'node:path';
import { CSP, fileFor, SCHEME } from './app-url.js';

const HEADERS = { 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Must run before the app is ready: a standard, secure scheme gets an origin, relative URLs and module scripts. */
export function registerScheme(): void {
  protocol.registerSchemesAsPrivileged([{ scheme: SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
}

/** Serve `airlock://app/…` from the built renderer (a page saying how to build it when it was never built). */
export function setupProtocol(deps: { env: { rendererDist: string } }): void {
  const dist = deps.env.rendererDist;
  protocol.handle(SCHEME, async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return answer(405, 'method not allowed');
    const file = fileFor(dist, request.url);
    if (!file) return answer(404, 'not found');
    try {
      // a symlink inside dist must not lead out of it either
      const [real, root] = await Promise.all([realpath(file), realpath(dist)]);
      if (real !== root && !real.startsWith(root + sep)) return answer(404, 'not found');
      const body = await readFile(real);
      return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), {
        status: 200,
        headers: { ...HEADERS, 'Content-Type': TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream' },
      });
    } catch {
      if (relative(dist, file) === 'index.html') return answer(200, NOT_BUILT, 'text/html; charset=utf-8');
      return answer(404, 'not found');
    }
  });
}

function answer(status: number, body: string, type = 'text/plain; charset=utf-8'): Response {
  return new Response(body, { status, headers: { ...HEADERS, 'Content-Type': type } });
}

const NOT_BUILT =
  '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Airlock</title></head>\n' +
  '<body><h1>Airlock</h1><p>The window\'s interface is not built: run <code>npm run build</code> and open Airlock again.</p></body></html>\n';
