/**
 * `airlock daemon --ui`: a real daemon process, its printed sign-in URL, and real HTTP (Node's fetch, and
 * node:http where a request must carry what fetch would normalise or refuse: a foreign Host, a raw `..`).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BrokerEvent } from '../../proxy-core/src/protocol/api.js';
import { cleanup, cli, cliJson } from '../helpers/airlock.js';
import { startUiAirlock, type UiAirlock } from '../helpers/e2e.js';
import { eventsTicket, signIn, type UiSignIn } from '../helpers/ui-sign-in.js';

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request exactly as written (no URL normalisation, any Host). */
function raw(port: number, path: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { Host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Read Server-Sent Events from a fetch response, one parsed `data:` event at a time. */
function sseReader(res: Response): { next(timeoutMs?: number): Promise<{ id: string | undefined; event: BrokerEvent }>; comments: string[] } {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const comments: string[] = [];
  return {
    comments,
    async next(timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const cut = buffer.indexOf('\n\n');
        if (cut >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let id: string | undefined;
          let data: string | undefined;
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) comments.push(line);
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data = line.slice(6);
          }
          if (data !== undefined) return { id, event: JSON.parse(data) as BrokerEvent };
          continue;
        }
        if (Date.now() > until) throw new Error('no event in time');
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
    },
  };
}

let home: string;
let ui: UiAirlock;
let cookie: string;
let session: UiSignIn;

const api = (method: string, params: unknown, headers: Record<string, string> = {}) =>
  fetch(`${ui.origin}/api/call/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: ui.origin, ...session.headers, ...headers },
    body: JSON.stringify(params),
  });
/** A fresh sign-in link, as `airlock ui --json` prints it. */
const freshLink = async (): Promise<URL> => new URL((await cliJson<{ url: string }>(home, ['ui', '--json'])).url);

beforeAll(async () => {
  ui = await startUiAirlock();
  home = ui.home;
  session = await signIn(ui.url.href);
  cookie = session.cookie;
});
afterAll(cleanup);

describe('airlock daemon --ui', () => {
  test('prints a URL on localhost (where passkeys work) with a 32-byte base64url token', () => {
    expect(ui.url.hostname).toBe('localhost');
    expect(ui.port).toBeGreaterThan(0);
    expect(Buffer.from(ui.token, 'base64url')).toHaveLength(32);
  });

  test('a link buys a session cookie (not the token) and a redirect that drops it and hands the key in its fragment, once', async () => {
    const token = (await freshLink()).searchParams.get('token')!;
    const res = await fetch(`${ui.origin}/?token=${token}&view=tickets`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location).toMatch(/^\/\?view=tickets#airlock-key=[A-Za-z0-9_-]{43}$/);
    expect(await res.text()).toBe('');
    const set = res.headers.get('set-cookie')!;
    expect(set).toMatch(new RegExp(`^airlock_ui_${ui.port}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/$`));
    expect(set).not.toContain(token);
    expect(set).not.toContain(location.split('=').at(-1)!);
    // the link is spent
    const again = await fetch(`${ui.origin}/?token=${token}`, { redirect: 'manual' });
    expect(again.status).toBe(401);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await again.text()).toContain('airlock ui');
    expect(cookie).toMatch(new RegExp(`^airlock_ui_${ui.port}=`));
    // with the cookie, / is served (the not-built page when renderer/dist has no index.html)
    const page = await fetch(`${ui.origin}/`, { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toBe(CSP);
    // a wrong token buys nothing
    const wrong = await fetch(`${ui.origin}/?token=${token.slice(0, -2)}AA`, { redirect: 'manual' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(await wrong.text()).toContain('airlock ui');
  });

  test('without the cookie, every /api path is 401 and / says how to get in', async () => {
    for (const [path, init] of [
      ['/api/call/status', { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: ui.origin }, body: '{}' }],
      ['/api/events?since=0', {}],
      ['/api/anything', {}],
    ] as const) {
      const res = await fetch(`${ui.origin}${path}`, init);
      expect(res.status, path).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
    const forged = await fetch(`${ui.origin}/api/call/status`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: ui.origin, Cookie: `airlock_ui_${ui.port}=${ui.token}` },
      body: '{}',
    });
    expect(forged.status).toBe(401); // the token is not a session
    const page = await fetch(`${ui.origin}/`);
    expect(page.status).toBe(401);
    const text = await page.text();
    expect(text).toContain('airlock ui');
    expect(text).not.toContain('<script');
  });

  test('a foreign Host (DNS rebinding) and a foreign Origin are refused', async () => {
    const rebound = await raw(ui.port, '/api/call/status', { Host: `evil.example:${ui.port}`, ...session.headers, 'Content-Type': 'application/json', Origin: ui.origin }, 'POST', '{}');
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.body).error.code).toBe('bad-host');
    const page = await raw(ui.port, `/?token=${(await freshLink()).searchParams.get('token')}`, { Host: `evil.example:${ui.port}` });
    expect(page.status).toBe(421);
    expect(page.headers['set-cookie']).toBeUndefined();
    expect((await raw(ui.port, '/', { Host: '127.0.0.1:1', Cookie: cookie })).status).toBe(421);
    expect((await raw(ui.port, '/', { Host: `localhost:${ui.port}`, Cookie: cookie })).status).toBe(200);
    for (const origin of ['http://evil.example', `http://evil.example:${ui.port}`, 'null', `https://127.0.0.1:${ui.port}`]) {
      const res = await api('status', {}, { Origin: origin });
      expect(res.status, origin).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad-origin');
    }
    expect((await api('status', {}, { Origin: `http://localhost:${ui.port}` })).status).toBe(200);
  });

  test('a POST that is not application/json, or has no Origin, is refused', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await fetch(`${ui.origin}/api/call/estop`, { method: 'POST', headers: { 'Content-Type': type, Origin: ui.origin, ...session.headers }, body: '{"on":true}' });
      expect(res.status, type).toBe(415);
    }
    const noOrigin = await raw(ui.port, '/api/call/estop', { ...session.headers, 'Content-Type': 'application/json' }, 'POST', '{"on":true}');
    expect(noOrigin.status).toBe(403);
    expect(((await (await api('status', {})).json()) as { result: { estop: boolean } }).result.estop).toBe(false);
  });

  test('status works through /api/call/status, with the API headers', async () => {
    const res = await api('status', {});
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const { result } = (await res.json()) as { result: { estop: boolean; pid: number; dataDir: string } };
    expect(result.estop).toBe(false);
    expect(result.pid).toBe(ui.daemon.proc.pid);
  });

  test('a wrapper-only method is 403 forbidden, an unknown one 404, bad params 400 naming the field', async () => {
    const ask = await api('call.ask', { call: {} });
    expect(ask.status).toBe(403);
    expect(((await ask.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    const sub = await api('events.subscribe', { since: 0 });
    expect(sub.status).toBe(403);
    const unknown = await api('no.such', {});
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('unknown-method');
    const bad = await api('estop', { on: 'yes' });
    expect(bad.status).toBe(400);
    const { error } = (await bad.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('bad-request');
    expect(error.message).toMatch(/\bon\b/);
    const notJson = await fetch(`${ui.origin}/api/call/status`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: ui.origin, ...session.headers }, body: '{' });
    expect(notJson.status).toBe(400);
    const missing = await api('approve', { id: 'nope' });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not-pending');
  });

  test('the event stream delivers events of a CLI in order, and a Last-Event-ID reconnect misses and repeats nothing', async () => {
    const first = new AbortController();
    const res = await fetch(`${ui.origin}/api/events?since=0&ticket=${await eventsTicket(ui.origin, session)}`, { headers: { Cookie: cookie, Accept: 'text/event-stream' }, signal: first.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const stream = sseReader(res);
    expect((await cli(home, ['estop', 'on'])).code).toBe(0);
    const seen: number[] = [];
    let estopOn: BrokerEvent | undefined;
    while (!estopOn) {
      const { id, event } = await stream.next();
      expect(id).toBe(String(event.seq));
      seen.push(event.seq);
      if (event.type === 'estop-on') estopOn = event;
    }
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(seen.length);
    const last = estopOn.seq;
    first.abort();

    // while nobody listens
    expect((await cli(home, ['estop', 'off'])).code).toBe(0);
    expect((await cli(home, ['estop', 'on'])).code).toBe(0);

    // the reconnect names since=0 in its URL, as an EventSource would: Last-Event-ID wins
    const second = new AbortController();
    const again = await fetch(`${ui.origin}/api/events?since=0&ticket=${await eventsTicket(ui.origin, session)}`, { headers: { Cookie: cookie, 'Last-Event-ID': String(last) }, signal: second.signal });
    const resumed = sseReader(again);
    const after: BrokerEvent[] = [];
    while (after.filter((e) => e.type === 'estop-on').length < 1) after.push((await resumed.next()).event);
    second.abort();
    const stored = ((await (await api('events', { limit: 1000 })).json()) as { result: { events: BrokerEvent[] } }).result.events;
    const top = after.at(-1)!.seq;
    expect(after.map((e) => e.seq)).toEqual(
      stored
        .map((e) => e.seq)
        .filter((s) => s > last && s <= top)
        .sort((a, b) => a - b),
    );
    expect(after.map((e) => e.type).filter((t) => t.startsWith('estop'))).toEqual(['estop-off', 'estop-on']);
    expect((await cli(home, ['estop', 'off'])).code).toBe(0);
  });

  test('`..` and its encodings are refused, never served', async () => {
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/%2E%2E/%2e%2e/package.json', '/..%2fpackage.json', '/%2e%2e%2fpackage.json', '/assets/../../package.json', '/..\\package.json', '/%00']) {
      const res = await raw(ui.port, path, { Cookie: cookie });
      expect(res.status, path).toBe(400);
      expect(res.body, path).not.toContain('"workspaces"');
    }
  });

  test('a body over 1 MiB is 413, and the host keeps serving', async () => {
    const big = JSON.stringify({ key: 'x'.repeat(1024 * 1024) });
    const res = await fetch(`${ui.origin}/api/call/settings.get`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: ui.origin, ...session.headers }, body: big });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('too-large');
    expect((await api('status', {})).status).toBe(200);
  });
});
