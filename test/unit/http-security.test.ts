/** The UI host's gate as pure functions: the constant-time token compare, Host/Origin, cookies, paths. */
import { describe, expect, test, vi } from 'vitest';

// wrap timingSafeEqual to see what it is given (it throws on buffers of different lengths)
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return { ...real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});

const crypto = await import('node:crypto');
const { cookieValues, hostAllowed, isJsonContentType, newSecret, originAllowed, secretMatches, sessionCookie, Sessions } = await import('../../proxy-core/src/http/security.js');
const { contentType, staticPath } = await import('../../proxy-core/src/http/static.js');
const { statusForCode } = await import('../../proxy-core/src/http/ui-host.js');

describe('the token compare', () => {
  test('matches only the secret, always through timingSafeEqual on equal-length buffers', () => {
    const secret = newSecret();
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    const spy = vi.mocked(crypto.timingSafeEqual);
    spy.mockClear();
    const candidates = [secret, secret.slice(0, -1), `${secret}x`, '', 'a', secret.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')), 'x'.repeat(10_000)];
    const answers = candidates.map((c) => secretMatches(c, secret));
    expect(answers).toEqual([true, false, false, false, false, false, false]);
    expect(spy).toHaveBeenCalledTimes(candidates.length);
    for (const [a, b] of spy.mock.calls) {
      expect(Buffer.isBuffer(a) && Buffer.isBuffer(b)).toBe(true);
      expect((a as Buffer).length).toBe((b as Buffer).length);
    }
    expect(secretMatches(null, secret)).toBe(false);
    expect(secretMatches(undefined, secret)).toBe(false);
    expect(secretMatches('', '')).toBe(false);
  });

  test('sessions are fresh random values, known only by hash, the oldest dropped past the cap', () => {
    const s = new Sessions(2);
    const a = s.create();
    const b = s.create();
    expect(a).not.toBe(b);
    expect(s.has(a) && s.has(b)).toBe(true);
    expect(s.has(undefined) || s.has('') || s.has(`${a}x`)).toBe(false);
    s.create();
    expect(s.has(a)).toBe(false);
    expect(s.has(b)).toBe(true);
    expect(sessionCookie(7331, b)).toBe(`airlock_ui_7331=${b}; HttpOnly; SameSite=Strict; Path=/`);
  });
});

describe('Host, Origin, Content-Type and cookies', () => {
  test('only the loopback address or localhost with this port', () => {
    expect(hostAllowed('127.0.0.1:7331', 7331)).toBe(true);
    expect(hostAllowed('localhost:7331', 7331)).toBe(true);
    expect(hostAllowed('LOCALHOST:7331', 7331)).toBe(true);
    for (const h of [undefined, '', '127.0.0.1', 'localhost', '127.0.0.1:7332', 'evil.example:7331', 'localhost.evil.example:7331', '[::1]:7331', '0.0.0.0:7331']) {
      expect(hostAllowed(h, 7331), String(h)).toBe(false);
    }
    expect(originAllowed('http://127.0.0.1:7331', 7331)).toBe(true);
    expect(originAllowed('http://localhost:7331', 7331)).toBe(true);
    for (const o of ['null', 'http://127.0.0.1', 'https://127.0.0.1:7331', 'http://127.0.0.1:7332', 'http://evil.example', 'http://127.0.0.1:7331.evil.example']) {
      expect(originAllowed(o, 7331), o).toBe(false);
    }
  });

  test('application/json with or without a charset, nothing a form can send', () => {
    expect(isJsonContentType('application/json')).toBe(true);
    expect(isJsonContentType('Application/JSON; charset=utf-8')).toBe(true);
    for (const t of [undefined, '', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/jsonp', 'text/json']) {
      expect(isJsonContentType(t), String(t)).toBe(false);
    }
  });

  test('every value of the session cookie is found', () => {
    expect(cookieValues('a=1; airlock_ui=x; b=2; airlock_ui=y', 'airlock_ui')).toEqual(['x', 'y']);
    expect(cookieValues('xairlock_ui=z', 'airlock_ui')).toEqual([]);
    expect(cookieValues(undefined, 'airlock_ui')).toEqual([]);
  });
});

describe('static paths', () => {
  test('`..`, `.`, NUL, backslashes and bad encodings are refused, in any encoding', () => {
    for (const p of ['/..', '/../x', '/a/../../x', '/%2e%2e/x', '/%2E%2E%2Fx', '/..%2fx', '/.%2e/x', '/./x', '/a%5c..%5cx', '/%00', '/%zz', 'x', '//..']) {
      expect(typeof staticPath(p), p).toBe('string');
    }
    expect(staticPath('/')).toEqual({ segments: [] });
    expect(staticPath('/assets/app.js')).toEqual({ segments: ['assets', 'app.js'] });
    expect(staticPath('/a%20b.css')).toEqual({ segments: ['a b.css'] });
    expect(staticPath('/..a/b..')).toEqual({ segments: ['..a', 'b..'] });
  });

  test('content types', () => {
    expect(contentType('index.html')).toBe('text/html; charset=utf-8');
    expect(contentType('a.js')).toBe('text/javascript; charset=utf-8');
    expect(contentType('a.css')).toBe('text/css; charset=utf-8');
    expect(contentType('a.svg')).toBe('image/svg+xml');
    expect(contentType('a.PNG')).toBe('image/png');
    expect(contentType('a.json')).toBe('application/json; charset=utf-8');
    expect(contentType('a.exe')).toBe('application/octet-stream');
  });

  test('broker error codes map to statuses', () => {
    expect(['bad-request', 'forbidden', 'unknown-method', 'not-found', 'not-pending', 'bad-state', 'ack-timeout', 'whatever'].map(statusForCode)).toEqual([400, 403, 404, 404, 404, 409, 500, 500]);
  });
});
