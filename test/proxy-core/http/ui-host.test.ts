/**
 * The UI host in process, over a stand-in broker (the real EventBus over events in memory) and a built UI in a
 * temp dir: static files and their types, symlinks that leave the directory, a chunked body past the limit, an
 * upload that goes on after its 413, the event stream's Last-Event-ID, unsubscribe on close, the ping, a reader
 * that stops reading, and the bounds on connections that have not signed in.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { EventBus } from '../../../proxy-core/src/broker/events.js';
import { startUiHost, type UiBroker, type UiHost } from '../../../proxy-core/src/http/ui-host.js';
import { IpcError } from '../../../proxy-core/src/ipc/channel.js';
import type { BrokerEvent } from '../../../proxy-core/src/protocol/api.js';
import { waitFor } from '../../helpers/airlock.js';
import { eventsTicket, signIn, type UiSignIn } from '../../helpers/ui-sign-in.js';

const undo: (() => unknown)[] = [];
afterEach(async () => {
  while (undo.length) await undo.pop()!();
});

function fakeBroker() {
  const events: BrokerEvent[] = [];
  const bus = new EventBus({ eventsSince: (seq, limit) => events.filter((e) => e.seq > seq).slice(0, limit) });
  const add = (n: number, detail: Record<string, unknown> = {}) => {
    const made: BrokerEvent[] = [];
    for (let i = 0; i < n; i++) made.push({ seq: events.length + made.length + 1, at: Date.now(), type: 'setting-changed', server: null, tool: null, detail } as unknown as BrokerEvent);
    events.push(...made);
    bus.publish(made);
  };
  const broker: UiBroker = {
    callUser: (method: string) => {
      if (method === 'boom') throw new Error('kaboom');
      if (method === 'busy') throw new IpcError('bad-state', 'not now');
      return { method };
    },
    subscribe: (since, subscriber) => ({ subscription: bus.subscribe(since, subscriber), head: events.length }),
    unsubscribe: (id) => {
      bus.unsubscribe(id);
      return { ok: true };
    },
  } as UiBroker;
  return { broker, bus, add };
}

async function host(extra: Partial<Parameters<typeof startUiHost>[0]> = {}) {
  const fake = fakeBroker();
  const h = await startUiHost({ broker: fake.broker, port: 0, ...extra });
  undo.push(() => h.close());
  const s = await signIn(h.url);
  return { ...fake, h, s, cookie: s.cookie };
}

function raw(h: UiHost, path: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; body: string; type?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: h.port, path, method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, ...(res.headers['content-type'] ? { type: res.headers['content-type'] } : {}) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('static files', () => {
  test('served with their types from the directory, and nothing a symlink reaches outside it', async () => {
    const base = mkdtempSync(join(tmpdir(), 'al-ui-'));
    undo.push(() => rmSync(base, { recursive: true, force: true }));
    const dist = join(base, 'dist');
    mkdirSync(join(dist, 'assets'), { recursive: true });
    writeFileSync(join(dist, 'index.html'), '<!doctype html><title>ui</title>');
    writeFileSync(join(dist, 'assets', 'app.js'), 'export {};');
    writeFileSync(join(dist, 'assets', 'app.css'), 'body{}');
    writeFileSync(join(dist, 'assets', 'logo.svg'), '<svg/>');
    writeFileSync(join(dist, 'assets', 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    writeFileSync(join(dist, 'manifest.json'), '{}');
    writeFileSync(join(base, 'secret.txt'), 'outside');
    mkdirSync(join(base, 'private'));
    writeFileSync(join(base, 'private', 'key.txt'), 'outside too');
    symlinkSync(join(base, 'secret.txt'), join(dist, 'leak.txt'));
    symlinkSync(join(base, 'private'), join(dist, 'linked'));
    symlinkSync(join(dist, 'assets', 'app.js'), join(dist, 'alias.js')); // inside: fine
    const { h, cookie } = await host({ staticDir: dist });
    const get = (p: string) => raw(h, p, { Host: `127.0.0.1:${h.port}`, Cookie: cookie });
    expect(await get('/')).toMatchObject({ status: 200, type: 'text/html; charset=utf-8', body: '<!doctype html><title>ui</title>' });
    expect(await get('/assets/app.js')).toMatchObject({ status: 200, type: 'text/javascript; charset=utf-8' });
    expect(await get('/assets/app.css')).toMatchObject({ status: 200, type: 'text/css; charset=utf-8' });
    expect(await get('/assets/logo.svg')).toMatchObject({ status: 200, type: 'image/svg+xml' });
    expect(await get('/assets/logo.png')).toMatchObject({ status: 200, type: 'image/png' });
    expect(await get('/manifest.json')).toMatchObject({ status: 200, type: 'application/json; charset=utf-8' });
    expect(await get('/alias.js')).toMatchObject({ status: 200, body: 'export {};' });
    expect((await get('/leak.txt')).status).toBe(400);
    expect((await get('/linked/key.txt')).status).toBe(400);
    expect((await get('/%2e%2e/secret.txt')).status).toBe(400);
    expect((await get('/assets/%2e%2e%2f%2e%2e%2fsecret.txt')).status).toBe(400);
    expect((await get('/assets')).status).toBe(404); // a directory is not a file
    expect((await get('/nope.js')).status).toBe(404);
    for (const p of ['/leak.txt', '/linked/key.txt', '/%2e%2e/secret.txt']) expect((await get(p)).body).not.toContain('outside');
    // without the cookie, nothing of the UI: only the page that says how to get in
    expect((await raw(h, '/assets/app.js', { Host: `127.0.0.1:${h.port}` })).status).toBe(401);
  });

  test('without a built UI, / says how to build it', async () => {
    const { h, cookie } = await host({ staticDir: join(tmpdir(), 'al-no-such-dir') });
    const res = await raw(h, '/', { Host: `localhost:${h.port}`, Cookie: cookie });
    expect(res.status).toBe(200);
    expect(res.body).toContain('no built browser UI');
    expect(res.body).toContain('/api/events');
  });
});

describe('calls', () => {
  const post = (h: UiHost, s: UiSignIn, method: string, body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(`${h.origin}/api/call/${method}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: h.origin, ...s.headers, ...headers }, body });
  /** The head of a signed-in POST to `status` as raw bytes, with its framing header (`Content-Length: N`, or chunked). */
  const rawHead = (h: UiHost, s: UiSignIn, framing: string) =>
    [`POST /api/call/status HTTP/1.1`, `Host: 127.0.0.1:${h.port}`, `Origin: ${h.origin}`, `Cookie: ${s.cookie}`, `X-Airlock-Key: ${s.key}`, 'Content-Type: application/json', framing, '', ''].join('\r\n');

  /** A raw connection to the host: what it has read so far, and when it closed (a reset counts as closed). */
  const open = (h: UiHost) => {
    const sock = connect(h.port, '127.0.0.1');
    let got = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (got += d));
    sock.on('error', () => {});
    const closed = new Promise<void>((r) => sock.on('close', () => r()));
    return { sock, closed, got: () => got };
  };
  /** The first answer in `text` is whole (its head and all of its Content-Length). */
  const wholeAnswer = (text: string): boolean => {
    const [head, body] = text.split('\r\n\r\n', 2);
    const length = /content-length: (\d+)/i.exec(head ?? '')?.[1];
    return body !== undefined && length !== undefined && Buffer.byteLength(body) >= Number(length);
  };

  test('an upload that keeps arriving past the limit still reads its 413 (the host does not reset it)', async () => {
    const { h, s } = await host({ maxBodyBytes: 1000 });
    // a burst far past the limit, sent at once, so that most of it is still unread by the host when it answers;
    // hanging up on unread bytes resets the connection, and a reset throws away the answer the client has not read yet
    const upload = async (framing: 'chunked' | 'length'): Promise<string> => {
      const burst = 'x'.repeat(2 * 1024 * 1024);
      const c = open(h);
      if (framing === 'chunked') c.sock.write(rawHead(h, s, 'Transfer-Encoding: chunked') + `${burst.length.toString(16)}\r\n${burst}\r\n`);
      else c.sock.write(rawHead(h, s, `Content-Length: ${burst.length * 1000}`) + burst);
      // the upload never ends: it keeps coming until the client has its whole answer or the connection is gone
      // (what was read before a reset is what the client has)
      let closed = false;
      void c.closed.then(() => (closed = true));
      const more = (): void => {
        if (c.sock.destroyed || wholeAnswer(c.got())) return;
        if (framing === 'chunked') c.sock.write(`${(64 * 1024).toString(16)}\r\n${burst.slice(0, 64 * 1024)}\r\n`);
        else c.sock.write(burst.slice(0, 64 * 1024));
        setImmediate(more);
      };
      more();
      await waitFor(() => closed || wholeAnswer(c.got()), 5000, 'the answer, or the connection closed');
      c.sock.destroy();
      return c.got();
    };
    for (let i = 0; i < 8; i++) {
      for (const framing of ['chunked', 'length'] as const) {
        const got = await upload(framing);
        expect(got.split('\r\n')[0], `${framing}, try ${i + 1}`).toBe('HTTP/1.1 413 Payload Too Large');
        expect(got).toContain('"too-large"');
      }
    }
  });

  test('after a 413, the host hangs up on an upload that goes on, and keeps a connection whose upload ended', async () => {
    const { h, s } = await host({ maxBodyBytes: 1000, uploadLingerMs: 150 });
    // a trickle that never ends: answered, then cut once the linger has passed
    const endless = open(h);
    endless.sock.write(rawHead(h, s, 'Transfer-Encoding: chunked') + `7d0\r\n${'x'.repeat(2000)}\r\n`);
    const trickle = setInterval(() => endless.sock.write(`1\r\nx\r\n`), 10);
    const t0 = Date.now();
    await endless.closed;
    clearInterval(trickle);
    expect(endless.got()).toMatch(/^HTTP\/1\.1 413 /);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
    // an over-limit body that does end: its connection serves the next request
    const ended = open(h);
    ended.sock.write(rawHead(h, s, 'Content-Length: 3000') + 'x'.repeat(3000) + rawHead(h, s, 'Content-Length: 2') + '{}');
    await waitFor(() => (ended.got().match(/HTTP\/1\.1 /g) ?? []).length >= 2 && ended.got().endsWith('}'), 5000, 'both answers on one connection');
    expect([...ended.got().matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1])).toEqual(['413', '200']);
    ended.sock.destroy();
  });

  test('a chunked body past the limit is 413, and what was sent is not kept', async () => {
    const { h, s } = await host({ maxBodyBytes: 1000 });
    // node:http, chunked (no Content-Length): the host only learns the size by reading
    const answer = await new Promise<{ status: number; body: string; sent: number }>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: h.port,
        path: '/api/call/status',
        method: 'POST',
        headers: { Host: `127.0.0.1:${h.port}`, Origin: h.origin, ...s.headers, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      });
      let sent = 0;
      const timer = setInterval(() => {
        if (sent >= 100_000) return void clearInterval(timer);
        req.write('x'.repeat(100));
        sent += 100;
      }, 1);
      let answered = false;
      req.on('response', (res) => {
        answered = true;
        clearInterval(timer);
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body, sent }));
      });
      req.on('error', (err) => {
        clearInterval(timer);
        // once answered, the host hangs up on the rest of the upload: a write still in flight then fails (EPIPE),
        // which is how an over-limit upload ends, not an error of the answer being read
        if (!answered) reject(err);
      });
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('too-large');
    expect(answer.sent).toBeLessThan(100_000); // answered while the client was still sending
    expect((await post(h, s, 'status', '{}')).status).toBe(200);
    expect((await post(h, s, 'status', 'x'.repeat(999).replace(/^x/, ' '))).status).toBe(400); // under the limit: read, not JSON
  });

  test('errors keep their codes; anything else is 500', async () => {
    const { h, s } = await host();
    expect(await (await post(h, s, 'status', '')).json()).toEqual({ result: { method: 'status' } });
    const busy = await post(h, s, 'busy', '{}');
    expect(busy.status).toBe(409);
    expect(await busy.json()).toEqual({ error: { code: 'bad-state', message: 'not now' } });
    const boom = await post(h, s, 'boom', '{}');
    expect(boom.status).toBe(500);
    expect((await fetch(`${h.origin}/api/call/status`, { headers: s.headers })).status).toBe(405);
    expect((await post(h, s, 'events.unsubscribe', '{"subscription":"s1"}')).status).toBe(403);
  });
});

describe('the event stream', () => {
  const open = async (h: UiHost, s: UiSignIn, path: string, headers: Record<string, string> = {}) => {
    const ac = new AbortController();
    undo.push(() => ac.abort());
    const ticket = await eventsTicket(h.origin, s);
    return { ac, res: fetch(`${h.origin}${path}&ticket=${ticket}`, { headers: { Cookie: s.cookie, ...headers }, signal: ac.signal }) };
  };
  async function readUntil(res: Response, done: (text: string) => boolean): Promise<string> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!done(text)) {
      const { value, done: end } = await reader.read();
      if (end) break;
      text += decoder.decode(value, { stream: true });
    }
    reader.releaseLock();
    return text;
  }
  const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

  test('Last-Event-ID wins over since; live events follow; pings are sent; closing unsubscribes', async () => {
    const { h, s, add, bus } = await host({ pingMs: 30 });
    add(5);
    const { ac, res } = await open(h, s, '/api/events?since=1', { 'Last-Event-ID': '3' });
    const r = await res;
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const first = await readUntil(r, (t) => ids(t).includes(5));
    expect(ids(first)).toEqual([4, 5]);
    add(2);
    const more = await readUntil(r, (t) => ids(t).includes(7) && t.includes(': ping'));
    expect(ids(more)).toEqual([6, 7]);
    expect(bus.size).toBe(1);
    ac.abort();
    await waitFor(() => bus.size === 0, 2000, 'the unsubscribe');
    expect((await raw(h, `/api/events?since=-1&ticket=${await eventsTicket(h.origin, s)}`, { Host: `127.0.0.1:${h.port}`, Cookie: s.cookie })).status).toBe(400);
  });

  test('a reader that stops reading is dropped once its backlog passes the limit', async () => {
    const { h, s, add, bus } = await host({ maxStreamBacklog: 64 * 1024 });
    // node:http with the response paused: nothing is read past the socket buffers
    const req = request({ host: '127.0.0.1', port: h.port, path: `/api/events?since=0&ticket=${await eventsTicket(h.origin, s)}`, headers: { Host: `127.0.0.1:${h.port}`, Cookie: s.cookie } });
    const response = new Promise<import('node:http').IncomingMessage>((resolve) => req.on('response', resolve));
    req.on('error', () => {});
    req.end();
    const res = await response;
    res.pause();
    undo.push(() => res.destroy());
    await waitFor(() => bus.size === 1, 2000, 'the subscription');
    const big = 'y'.repeat(64 * 1024);
    for (let i = 0; i < 400 && bus.size > 0; i++) {
      add(1, { big });
      await new Promise((r) => setImmediate(r));
    }
    expect(bus.size).toBe(0);
  });
});

describe('connections', () => {
  /** A raw connection that sends nothing; resolves when the host closes it, with how long that took. */
  const idle = (h: UiHost) => {
    const s = connect(h.port, '127.0.0.1');
    undo.push(() => s.destroy());
    const closed = new Promise<void>((resolve) => s.once('close', () => resolve()));
    s.on('error', () => {});
    return { s, closed };
  };

  test('unproven connections past the cap close the oldest; idle ones close; a signed-in page is served throughout', async () => {
    const { h, s } = await host({ connectionLimits: { maxUnproven: 4, unprovenIdleMs: 300, maxConnections: 32 } });
    const first = Array.from({ length: 4 }, () => idle(h));
    await Promise.all(first.map((c) => new Promise((r) => c.s.once('connect', r))));
    const later = Array.from({ length: 4 }, () => idle(h));
    // the four oldest make room for the four newer ones
    await Promise.all(first.map((c) => c.closed));
    // and the newer ones, sending nothing, are closed when idle
    await Promise.all(later.map((c) => c.closed));
    const res = await fetch(`${h.origin}/api/call/status`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: h.origin, ...s.headers }, body: '{}' });
    expect(res.status).toBe(200);
  });

  test('a request refused before sign-in is answered with Connection: close, its body unread', async () => {
    const { h } = await host();
    const c = idle(h);
    await new Promise((r) => c.s.once('connect', r));
    let answer = '';
    c.s.on('data', (d: Buffer) => (answer += d.toString()));
    c.s.write(`POST /api/call/estop HTTP/1.1\r\nHost: 127.0.0.1:${h.port}\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{"on":`);
    await c.closed;
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(answer.toLowerCase()).toContain('connection: close');
  });
});
