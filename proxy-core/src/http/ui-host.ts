/**
 * The headless host of the browser UI: an HTTP server on 127.0.0.1 (used as http://localhost:PORT, where
 * passkeys work) that serves the built renderer and puts the
 * broker's front-end API and event stream behind a token.
 *
 * - A sign-in link (`?token=`: single-use, 2 minutes; `airlock ui` asks the broker for a fresh one) is traded
 *   for a session (sessions.ts): a cookie (HttpOnly, SameSite=Strict) and a redirect whose URL fragment holds
 *   the session's key, which the page keeps and sends as `X-Airlock-Key` on every API call. The cookie alone
 *   opens no API (other loopback ports get it too); the event stream takes a one-time ticket instead of the
 *   header (POST /api/events/ticket), since an EventSource cannot send one.
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
import { UserMethod } from '../protocol/names.js';
import { EventStreams } from './event-stream.js';
import { type ConnectionLimits, guardConnections, HEADERS_CHECK_MS, MAX_HEADER_BYTES } from './connection-limits.js';
import { notBuiltPage, signInPage } from './pages.js';
import { cookieValues, hostAllowed, isJsonContentType, originAllowed, SECURITY_HEADERS, sessionCookie, sessionCookieName } from './security.js';
import { sessionFile } from './session-file.js';
import { type SessionLimits, type SessionRecord, UiSessions } from './sessions.js';
import { hasIndex, lookupStatic, staticPath } from './static.js';

/** What the host needs of the broker. */
export type UiBroker = Pick<Broker, 'callUser' | 'subscribe' | 'unsubscribe'>;

export const DEFAULT_UI_PORT = 7331;
/** The header that carries a session's key on every API call (the cookie alone opens nothing). */
export const KEY_HEADER = 'x-airlock-key';
/** The name of the redirect's URL fragment that hands the page its key, once, at sign-in. */
export const KEY_FRAGMENT = 'airlock-key';
const SIGNED_OUT = 'not signed in: run `airlock ui` and open the link it prints (`airlock ui --open` opens it)';

const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};
export const MAX_BODY_BYTES = 1024 * 1024;
/** An event stream whose unsent bytes pass this is dropped (its reader resumes with Last-Event-ID). */
export const MAX_STREAM_BACKLOG = 4 * 1024 * 1024;

export interface UiHostOptions {
  broker: UiBroker;
  /** Default 7331; 0 picks a free port. */
  port?: number;
  /** The built renderer (its index.html and assets). Missing or without index.html: `/` says how to build it. */
  staticDir?: string;
  /** Where session records (hashes) outlive the process, so a signed-in page survives a restart. */
  sessionFile?: string;
  sessionLimits?: Partial<SessionLimits>;
  connectionLimits?: Partial<ConnectionLimits>;
  /** How often an idle event stream gets a `: ping` comment (default 15 s). */
  pingMs?: number;
  maxBodyBytes?: number;
  /** How long the rest of an over-limit upload is read (and dropped) after its 413, before the host hangs up (2 s). */
  uploadLingerMs?: number;
  maxStreamBacklog?: number;
}

export interface UiHost {
  port: number;
  /**
   * `http://localhost:PORT`: where the UI is used (it listens on 127.0.0.1 only). Passkeys need a name: WebAuthn
   * takes no IP address as its relying party, and localhost is a secure context over plain HTTP.
   */
  origin: string;
  /** The first sign-in link (single-use, short-lived): print it to the person, nowhere else. */
  url: string;
  /** A fresh single-use sign-in link (`airlock ui`). */
  signInUrl(): string;
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
    case 'presence-required':
    case 'presence-refused':
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

/** Methods that need a connection of their own (over HTTP the stream is GET /api/events), and sign-in links (the socket only). */
const NOT_OVER_HTTP = new Set<string>([UserMethod.subscribe, UserMethod.unsubscribe, UserMethod.uiLink]);

type BodyResult = { ok: true; body: Buffer } | { ok: false; tooLarge: true };

export async function startUiHost(opts: UiHostOptions): Promise<UiHost> {
  const { broker } = opts;
  const pingMs = opts.pingMs ?? 15_000;
  const maxBody = opts.maxBodyBytes ?? MAX_BODY_BYTES;
  const maxBacklog = opts.maxStreamBacklog ?? MAX_STREAM_BACKLOG;
  const sessions = new UiSessions(opts.sessionLimits, undefined, opts.sessionFile ? sessionFile(opts.sessionFile) : undefined);
  const streams = new EventStreams({ broker, pingMs, maxBacklog });
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
    // No `Connection: close`: Node would then close the socket as soon as the answer is written, and closing on
    // bytes not yet read sends a reset, which can throw away the answer before a client still uploading reads it.
    // Instead the rest of the body is read and dropped (a lingering close), and the connection is cut if it goes on.
    fail(res, 413, 'too-large', `a request body may hold at most ${maxBody} bytes`);
    req.resume();
    const cut = setTimeout(() => req.socket.destroy(), opts.uploadLingerMs ?? 2000).unref();
    req.once('end', () => clearTimeout(cut));
    req.once('close', () => clearTimeout(cut));
  };

  const call = async (req: IncomingMessage, res: ServerResponse, rawMethod: string, session: SessionRecord): Promise<void> => {
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
      // a UI session is one front end: its presence lease and its challenges are its own (never another tab's key)
      const result = await broker.callUser(method, params, { kind: 'ui', key: `ui:${session.keyHash}`, peer: null });
      json(res, 200, { result: result ?? null });
    } catch (err) {
      if (err instanceof IpcError) return fail(res, statusForCode(err.code), err.code, err.message);
      fail(res, 500, 'internal', err instanceof Error ? err.message : String(err));
    }
  };

  const events = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams, session: SessionRecord): void => {
    const lastId = req.headers['last-event-id'];
    // a reconnect's Last-Event-ID wins over the since of the URL it reconnects to
    const raw = typeof lastId === 'string' && lastId.trim() !== '' ? lastId.trim() : (query.get('since') ?? '0');
    if (!/^\d{1,15}$/.test(raw)) return fail(res, 400, 'bad-request', 'since (or Last-Event-ID) must be a sequence number (0 or more)');
    streams.serve(res, Number(raw), session);
  };

  const api = async (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, session: SessionRecord): Promise<void> => {
    if (path === '/api/events') {
      if (req.method !== 'GET') return fail(res, 405, 'method-not-allowed', 'the event stream is read with GET', { Allow: 'GET' });
      return events(req, res, query, session);
    }
    const m = /^\/api\/call\/([^/]+)$/.exec(path);
    if (m) {
      if (req.method !== 'POST') return fail(res, 405, 'method-not-allowed', 'a call is a POST with a JSON body of params', { Allow: 'POST' });
      return call(req, res, m[1]!, session);
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

  /** Refused before sign-in: answered, and the connection closed (its body is never read). */
  const refuse = (res: ServerResponse, status: number, code: string, message: string): void => {
    res.shouldKeepAlive = false;
    fail(res, status, code, message, { Connection: 'close' });
  };

  const signIn = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): void => {
    const redeemed = sessions.redeem(query.get('token'), cookieValues(req.headers.cookie, sessionCookieName(port)));
    if (!redeemed.ok) {
      res.shouldKeepAlive = false;
      res.setHeader('Connection', 'close');
      return html(res, redeemed.why === 'full' ? 503 : 401, signInPage(redeemed.why === 'full' ? 'full' : 'spent'));
    }
    guard.prove(req.socket);
    query.delete('token');
    const rest = query.toString();
    // only a plain path of this host: never `//elsewhere` (a protocol-relative redirect). The key goes in the
    // fragment: never sent to a server, and this answer is the only one that ever holds it
    const where = /^\/(?![/\\])[^\\#]*$/.test(path) ? path : '/';
    res.writeHead(303, {
      Location: `${where}${rest ? `?${rest}` : ''}#${KEY_FRAGMENT}=${redeemed.key}`,
      'Set-Cookie': sessionCookie(port, redeemed.cookie),
      'Cache-Control': 'no-store',
      'Content-Length': '0',
    });
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    const target = req.url ?? '';
    if (!hostAllowed(req.headers.host, port)) return refuse(res, 421, 'bad-host', `this host answers to 127.0.0.1:${port} and localhost:${port} only`);
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, port)) return refuse(res, 403, 'bad-origin', 'requests from other origins are refused');
    if (!target.startsWith('/')) return refuse(res, 400, 'bad-request', 'the request target must be a path');
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : target.slice(q + 1));
    const isApi = path === '/api' || path.startsWith('/api/');
    const reading = req.method === 'GET' || req.method === 'HEAD';

    // only a GET spends a sign-in link: a HEAD (a link previewer, a prefetch) gets the page, and the link stays good
    if (req.method === 'GET' && !isApi && query.has('token')) return signIn(req, res, path, query);
    const cookies = cookieValues(req.headers.cookie, sessionCookieName(port));
    if (isApi) {
      res.setHeader('Cache-Control', 'no-store');
      if (req.headers['sec-fetch-site'] === 'cross-site') return refuse(res, 403, 'bad-origin', 'cross-site requests are refused');
      // the stream: a one-time ticket of the session the cookie names; everything else: the cookie and the key
      const session = path === '/api/events' && reading ? sessions.redeemTicket(query.get('ticket'), cookies) : sessions.authenticate(cookies, headerOf(req, KEY_HEADER));
      if (!session) return refuse(res, 401, 'unauthorized', SIGNED_OUT);
      guard.prove(req.socket);
      if (!reading) {
        if (origin === undefined) return fail(res, 403, 'bad-origin', `a ${req.method} needs an Origin header of this host`);
        if (!isJsonContentType(req.headers['content-type'])) return fail(res, 415, 'unsupported-media-type', 'the body must be JSON, sent as Content-Type: application/json');
      }
      if (path === '/api/events/ticket') {
        if (req.method !== 'POST') return fail(res, 405, 'method-not-allowed', 'a ticket is asked for with POST', { Allow: 'POST' });
        return json(res, 200, { result: { ticket: sessions.issueTicket(session) } });
      }
      if (path === '/api/sign-out') {
        if (req.method !== 'POST') return fail(res, 405, 'method-not-allowed', 'sign out with POST', { Allow: 'POST' });
        sessions.signOut(session);
        streams.endFor(session, 'signed out');
        return json(res, 200, { result: { ok: true } });
      }
      return api(req, res, path, query, session);
    }
    // the app's files hold nothing secret: the cookie is enough to load them (and the page then needs its key)
    if (!sessions.byCookie(cookies)) {
      res.shouldKeepAlive = false;
      res.setHeader('Connection', 'close');
      return html(res, 401, signInPage('none'));
    }
    guard.prove(req.socket);
    return files(req, res, path);
  };

  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES, connectionsCheckingInterval: HEADERS_CHECK_MS }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) fail(res, 500, 'internal', err instanceof Error ? err.message : String(err));
      else res.destroy();
    });
  });
  const guard = guardConnections(server, opts.connectionLimits);
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
  // an accept that fails (EMFILE: no file handle free) must not take the broker down; libuv goes on accepting
  // once handles are free again
  server.on('error', () => {});
  const origin = `http://localhost:${port}`;
  const signInUrl = (): string => `${origin}/?token=${sessions.issueLink()}`;
  let closed: Promise<void> | null = null;
  return {
    port,
    origin,
    url: signInUrl(),
    signInUrl,
    close() {
      closed ??= new Promise<void>((resolve) => {
        streams.endAll('the UI host is stopping');
        sessions.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
