/**
 * The headless host of the browser UI: an HTTP server on 127.0.0.1 that serves the built renderer and puts the
 * broker's front-end API and event stream behind a token.
 *
 * - The token (printed once by whoever starts the host) is traded, on a GET with `?token=`, for a session
 *   cookie (HttpOnly, SameSite=Strict) and a redirect to the same path without it; nothing else opens a door.
 * - Every request must name this host (Host 127.0.0.1:PORT or localhost:PORT: a rebound DNS name is refused),
 *   and an Origin header, when sent, must be this host's. A call that changes something (anything but GET)
 *   must come with that Origin and with `Content-Type: application/json`, which a cross-site form cannot send.
 * - `POST /api/call/<method>` runs `broker.callUser`: the protocol's schemas validate the params and a
 *   wrapper's methods are refused as forbidden. `GET /api/events` is the event stream as Server-Sent Events.
 */
import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Broker } from '../broker/broker.js';
import { IpcError } from '../ipc/channel.js';
import type { BrokerEvent } from '../protocol/api.js';
import { UserMethod } from '../protocol/names.js';
import { notBuiltPage, signInPage } from './pages.js';
import {
  cookieValues,
  hostAllowed,
  isJsonContentType,
  newSecret,
  originAllowed,
  secretMatches,
  SECURITY_HEADERS,
  sessionCookie,
  sessionCookieName,
  Sessions,
} from './security.js';
import { hasIndex, lookupStatic, staticPath } from './static.js';

/** What the host needs of the broker. */
export type UiBroker = Pick<Broker, 'callUser' | 'subscribe' | 'unsubscribe'>;

export const DEFAULT_UI_PORT = 7331;
export const MAX_BODY_BYTES = 1024 * 1024;
/** An event stream whose unsent bytes pass this is dropped (its reader resumes with Last-Event-ID). */
export const MAX_STREAM_BACKLOG = 4 * 1024 * 1024;

export interface UiHostOptions {
  broker: UiBroker;
  /** Default 7331; 0 picks a free port. */
  port?: number;
  /** The built renderer (its index.html and assets). Missing or without index.html: `/` says how to build it. */
  staticDir?: string;
  /** The sign-in token (default: 32 random bytes, base64url). */
  token?: string;
  /** How often an idle event stream gets a `: ping` comment (default 15 s). */
  pingMs?: number;
  maxBodyBytes?: number;
  maxStreamBacklog?: number;
}

export interface UiHost {
  port: number;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** The sign-in URL, token included: print it to the person, nowhere else. */
  url: string;
  token: string;
  close(): Promise<void>;
}

/** The host could not start (the port is taken, ...): one line for the person. */
export class UiHostError extends Error {
  override name = 'UiHostError';
}

/** The HTTP status of a broker error code. */
export function statusForCode(code: string): number {
  switch (code) {
    case 'bad-request':
      return 400;
    case 'unauthorized':
      return 401;
    case 'forbidden':
      return 403;
    case 'unknown-method':
    case 'not-found':
    case 'not-pending':
      return 404;
    case 'bad-state':
      return 409;
    default:
      return 500;
  }
}

/** Methods that need a connection of their own: over HTTP the stream is GET /api/events. */
const NOT_OVER_HTTP = new Set<string>([UserMethod.subscribe, UserMethod.unsubscribe]);

type BodyResult = { ok: true; body: Buffer } | { ok: false; tooLarge: true };

export async function startUiHost(opts: UiHostOptions): Promise<UiHost> {
  const { broker } = opts;
  const token = opts.token ?? newSecret();
  const pingMs = opts.pingMs ?? 15_000;
  const maxBody = opts.maxBodyBytes ?? MAX_BODY_BYTES;
  const maxBacklog = opts.maxStreamBacklog ?? MAX_STREAM_BACKLOG;
  const sessions = new Sessions();
  const streams = new Set<(reason: string) => void>();
  let port = 0;

  const send = (res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': String(Buffer.byteLength(body)), ...headers });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  };
  const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void =>
    send(res, status, 'application/json; charset=utf-8', JSON.stringify(value), { 'Cache-Control': 'no-store', ...headers });
  const fail = (res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void =>
    json(res, status, { error: { code, message } }, headers);
  const html = (res: ServerResponse, status: number, body: string): void => send(res, status, 'text/html; charset=utf-8', body, { 'Cache-Control': 'no-store' });

  /** Read a body of at most maxBody bytes; past that, stop keeping it (what still arrives is discarded). */
  const readBody = (req: IncomingMessage): Promise<BodyResult> =>
    new Promise((resolve, reject) => {
      const declared = Number(req.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > maxBody) return resolve({ ok: false, tooLarge: true });
      const chunks: Buffer[] = [];
      let size = 0;
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBody) {
          req.off('data', onData);
          req.off('end', onEnd);
          chunks.length = 0;
          resolve({ ok: false, tooLarge: true });
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = () => resolve({ ok: true, body: Buffer.concat(chunks) });
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', reject);
    });

  const tooLarge = (req: IncomingMessage, res: ServerResponse): void => {
    fail(res, 413, 'too-large', `a request body may hold at most ${maxBody} bytes`, { Connection: 'close' });
    // nothing more is kept; let the client finish sending so it can read the answer, then hang up regardless
    req.resume();
    setTimeout(() => req.socket.destroy(), 2000).unref();
  };

  const call = async (req: IncomingMessage, res: ServerResponse, rawMethod: string): Promise<void> => {
    let method: string;
    try {
      method = decodeURIComponent(rawMethod);
    } catch {
      return fail(res, 404, 'unknown-method', 'unknown method');
    }
    const read = await readBody(req);
    if (!read.ok) return tooLarge(req, res);
    if (!/^[a-z][a-z.-]{0,63}$/i.test(method)) return fail(res, 404, 'unknown-method', 'unknown method');
    if (NOT_OVER_HTTP.has(method)) return fail(res, 403, 'forbidden', `${method} is not called over HTTP: read the event stream with GET /api/events?since=N`);
    let params: unknown = {};
    const text = read.body.toString('utf8');
    if (text.trim() !== '') {
      try {
        params = JSON.parse(text) as unknown;
      } catch {
        return fail(res, 400, 'bad-request', 'the body is not JSON');
      }
    }
    try {
      const result = await broker.callUser(method, params);
      json(res, 200, { result: result ?? null });
    } catch (err) {
      if (err instanceof IpcError) return fail(res, statusForCode(err.code), err.code, err.message);
      fail(res, 500, 'internal', err instanceof Error ? err.message : String(err));
    }
  };

  const events = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void => {
    const lastId = req.headers['last-event-id'];
    // a reconnect's Last-Event-ID wins over the since of the URL it reconnects to
    const raw = typeof lastId === 'string' && lastId.trim() !== '' ? lastId.trim() : (query.get('since') ?? '0');
    if (!/^\d{1,15}$/.test(raw)) return fail(res, 400, 'bad-request', 'since (or Last-Event-ID) must be a sequence number (0 or more)');
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    res.write(': airlock events\n\n');
    let open = true;
    let subscription: string | null = null;
    const end = (reason?: string): void => {
      if (!open) return;
      open = false;
      clearInterval(ping);
      streams.delete(end);
      if (subscription) broker.unsubscribe(subscription);
      subscription = null;
      if (reason !== undefined && !res.destroyed) {
        res.end(`event: ended\ndata: ${JSON.stringify({ ended: reason })}\n\n`);
        // a reader that does not read does not get to keep its buffer either
        setTimeout(() => res.destroy(), 5000).unref();
      } else res.end();
    };
    const ping = setInterval(() => res.write(': ping\n\n'), pingMs);
    ping.unref();
    streams.add(end);
    res.on('close', () => end());
    subscription = broker.subscribe(Number(raw), {
      send: (event: BrokerEvent) => {
        if (!open || res.writableLength > maxBacklog) return false;
        res.write(`id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`);
        return true;
      },
      ended: (reason) => {
        subscription = null; // the bus has already let go of it
        end(reason);
      },
    }).subscription;
    if (!open) broker.unsubscribe(subscription);
  };

  const api = async (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> => {
    if (path === '/api/events') {
      if (req.method !== 'GET') return fail(res, 405, 'method-not-allowed', 'the event stream is read with GET', { Allow: 'GET' });
      return events(req, res, query);
    }
    const m = /^\/api\/call\/([^/]+)$/.exec(path);
    if (m) {
      if (req.method !== 'POST') return fail(res, 405, 'method-not-allowed', 'a call is a POST with a JSON body of params', { Allow: 'POST' });
      return call(req, res, m[1]!);
    }
    fail(res, 404, 'not-found', `no API at ${path}`);
  };

  const files = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { Allow: 'GET, HEAD' });
    const checked = staticPath(path);
    if (typeof checked !== 'object') return send(res, 400, 'text/plain; charset=utf-8', `refused: ${checked}\n`);
    if (!opts.staticDir || !(await hasIndex(opts.staticDir))) {
      if (checked.segments.length === 0) return html(res, 200, notBuiltPage());
      return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    }
    const found = await lookupStatic(opts.staticDir, path);
    if (found.kind === 'refused') return send(res, 400, 'text/plain; charset=utf-8', `refused: ${found.reason}\n`);
    if (found.kind === 'missing') return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    res.writeHead(200, {
      'Content-Type': found.type,
      'Content-Length': String(found.size),
      'Cache-Control': found.type.startsWith('text/html') ? 'no-store' : 'no-cache',
    });
    if (req.method === 'HEAD') return void res.end();
    const stream = createReadStream(found.path);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    const target = req.url ?? '';
    if (!hostAllowed(req.headers.host, port)) {
      return fail(res, 421, 'bad-host', `this host answers to 127.0.0.1:${port} and localhost:${port} only`, { Connection: 'close' });
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, port)) return fail(res, 403, 'bad-origin', 'requests from other origins are refused');
    if (!target.startsWith('/')) return fail(res, 400, 'bad-request', 'the request target must be a path');
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : target.slice(q + 1));
    const isApi = path === '/api' || path.startsWith('/api/');
    const reading = req.method === 'GET' || req.method === 'HEAD';

    if (reading && query.has('token')) {
      if (secretMatches(query.get('token'), token)) {
        query.delete('token');
        const rest = query.toString();
        // only a plain path of this host: never `//elsewhere` (a protocol-relative redirect)
        const where = /^\/(?![/\\])[^\\]*$/.test(path) ? path : '/';
        res.writeHead(303, { Location: where + (rest ? `?${rest}` : ''), 'Set-Cookie': sessionCookie(port, sessions.create()), 'Cache-Control': 'no-store', 'Content-Length': '0' });
        return void res.end();
      }
      // a wrong token opens nothing: the request goes on as one without a cookie would
    }
    const signedIn = cookieValues(req.headers.cookie, sessionCookieName(port)).some((v) => sessions.has(v));
    if (isApi) {
      res.setHeader('Cache-Control', 'no-store');
      if (!signedIn) return fail(res, 401, 'unauthorized', 'sign in first: run `airlock daemon --ui` and open the URL it prints');
      if (req.headers['sec-fetch-site'] === 'cross-site') return fail(res, 403, 'bad-origin', 'cross-site requests are refused');
      if (!reading) {
        if (origin === undefined) return fail(res, 403, 'bad-origin', `a ${req.method} needs an Origin header of this host`);
        if (!isJsonContentType(req.headers['content-type'])) return fail(res, 415, 'unsupported-media-type', 'the body must be JSON, sent as Content-Type: application/json');
      }
      return api(req, res, path, query);
    }
    if (!signedIn) return html(res, 401, signInPage());
    return files(req, res, path);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) fail(res, 500, 'internal', err instanceof Error ? err.message : String(err));
      else res.destroy();
    });
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });

  const wanted = opts.port ?? DEFAULT_UI_PORT;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'the port is in use (choose another with --port)' : err.message;
      reject(new UiHostError(`cannot serve the UI on 127.0.0.1:${wanted}: ${why}`));
    };
    server.once('error', onError);
    server.listen(wanted, '127.0.0.1', () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : wanted;
  const origin = `http://127.0.0.1:${port}`;
  let closed: Promise<void> | null = null;
  return {
    port,
    origin,
    url: `${origin}/?token=${token}`,
    token,
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const end of [...streams]) end('the UI host is stopping');
        sessions.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
