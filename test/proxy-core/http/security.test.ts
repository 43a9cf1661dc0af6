/** The UI host's gate as pure functions: the constant-time token compare, Host/Origin, cookies, paths. */
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import type { SessionLimits, SessionRecord, SessionStore } from '../../../proxy-core/src/http/sessions.js';
import { FakeClock } from '../../helpers/fake-clock.js';

// wrap timingSafeEqual to see what it is given (it throws on buffers of different lengths)
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return { ...real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});

const crypto = await import('node:crypto');
const { cookieValues, hostAllowed, isJsonContentType, newSecret, originAllowed, secretMatches, sessionCookie } = await import('../../../proxy-core/src/http/security.js');
const { UiSessions } = await import('../../../proxy-core/src/http/sessions.js');
const { sessionFile } = await import('../../../proxy-core/src/http/session-file.js');
const { contentType, staticPath } = await import('../../../proxy-core/src/http/static.js');
const { statusForCode } = await import('../../../proxy-core/src/http/ui-host.js');

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

  test('the session cookie is HttpOnly, SameSite=Strict, for this port', () => {
    expect(sessionCookie(7331, 'abc')).toBe('airlock_ui_7331=abc; HttpOnly; SameSite=Strict; Path=/');
  });
});

describe('UI sessions', () => {
  const make = (limits: Partial<SessionLimits> = {}, store?: SessionStore) => {
    const clock = new FakeClock();
    return { clock, sessions: new UiSessions(limits, clock, store) };
  };
  const redeem = (u: InstanceType<typeof UiSessions>, token: string) => {
    const r = u.redeem(token);
    if (!r.ok) throw new Error(r.why);
    return r;
  };

  test('a sign-in link works once, and not after 2 minutes', () => {
    const { clock, sessions } = make();
    const link = sessions.issueLink();
    const first = redeem(sessions, link);
    expect(first.cookie).not.toBe(first.key);
    expect(sessions.redeem(link)).toEqual({ ok: false, why: 'unknown' });
    const stale = sessions.issueLink();
    clock.advance(2 * 60_000);
    expect(sessions.redeem(stale)).toEqual({ ok: false, why: 'unknown' });
    expect(sessions.redeem('')).toEqual({ ok: false, why: 'unknown' });
    expect(sessions.redeem(null)).toEqual({ ok: false, why: 'unknown' });
  });

  test('the cookie alone is not a session for the API: it takes the key too', () => {
    const { sessions } = make();
    const { cookie, key } = redeem(sessions, sessions.issueLink());
    expect(sessions.byCookie([cookie])).not.toBeNull();
    expect(sessions.authenticate([cookie], undefined)).toBeNull();
    expect(sessions.authenticate([cookie], '')).toBeNull();
    expect(sessions.authenticate([cookie], cookie)).toBeNull();
    expect(sessions.authenticate([cookie], `${key}x`)).toBeNull();
    expect(sessions.authenticate(['other', cookie], key)).not.toBeNull();
    // a key of another session does not go with this cookie
    const other = redeem(sessions, sessions.issueLink());
    expect(sessions.authenticate([cookie], other.key)).toBeNull();
  });

  test('a second tab of one browser keeps the cookie and gets a key of its own; both work, neither without it', () => {
    const { sessions } = make();
    const a = redeem(sessions, sessions.issueLink());
    const r = sessions.redeem(sessions.issueLink(), ['stale', a.cookie]);
    if (!r.ok) throw new Error(r.why);
    expect(r.cookie).toBe(a.cookie);
    expect(r.key).not.toBe(a.key);
    expect(sessions.authenticate([a.cookie], a.key)).not.toBeNull();
    expect(sessions.authenticate([a.cookie], r.key)).not.toBeNull();
    const other = redeem(sessions, sessions.issueLink());
    expect(other.cookie).not.toBe(a.cookie);
    expect(sessions.authenticate([other.cookie], a.key)).toBeNull();
    expect(sessions.size).toBe(3);
  });

  test('an idle session ends after 12 h; use keeps it; a hard age ends it anyway', () => {
    const { clock, sessions } = make({ maxAgeMs: 30 * 3600_000 });
    const a = redeem(sessions, sessions.issueLink());
    const b = redeem(sessions, sessions.issueLink());
    for (let i = 0; i < 4; i++) {
      clock.advance(6 * 3600_000);
      expect(sessions.authenticate([a.cookie], a.key), `hour ${6 * (i + 1)}`).not.toBeNull();
    }
    expect(sessions.byCookie([b.cookie])).toBeNull(); // idle since the start
    clock.advance(6 * 3600_000);
    expect(sessions.authenticate([a.cookie], a.key)).toBeNull(); // 30 h old
  });

  test('at the cap a sign-in is refused and no live session is evicted; the link stays good', () => {
    const { sessions } = make({ maxSessions: 2 });
    const a = redeem(sessions, sessions.issueLink());
    const b = redeem(sessions, sessions.issueLink());
    for (let i = 0; i < 64; i++) expect(sessions.redeem(sessions.issueLink())).toEqual({ ok: false, why: 'full' });
    expect(sessions.authenticate([a.cookie], a.key)).not.toBeNull();
    expect(sessions.authenticate([b.cookie], b.key)).not.toBeNull();
    sessions.signOut(sessions.byCookie([b.cookie])!);
    expect(sessions.byCookie([b.cookie])).toBeNull();
    // a slot is free again: a fresh link signs in
    expect(sessions.redeem(sessions.issueLink()).ok).toBe(true);
  });

  test('an event ticket is one-time, short-lived, and only with the cookie of its session', () => {
    const { clock, sessions } = make();
    const a = redeem(sessions, sessions.issueLink());
    const b = redeem(sessions, sessions.issueLink());
    const sa = sessions.authenticate([a.cookie], a.key)!;
    const t = sessions.issueTicket(sa);
    expect(sessions.redeemTicket(t, [b.cookie])).toBeNull();
    expect(sessions.redeemTicket(t, [])).toBeNull();
    expect(sessions.redeemTicket(t, [a.cookie])).toBe(sa);
    expect(sessions.redeemTicket(t, [a.cookie])).toBeNull();
    const late = sessions.issueTicket(sa);
    clock.advance(60_000);
    expect(sessions.redeemTicket(late, [a.cookie])).toBeNull();
  });

  test('records outlive the process as hashes only; a damaged store signs nobody in', () => {
    let saved: SessionRecord[] = [];
    const store: SessionStore = { load: () => saved.map((r) => ({ ...r })), save: (r) => (saved = r) };
    const { sessions } = make({}, store);
    const a = redeem(sessions, sessions.issueLink());
    expect(JSON.stringify(saved)).not.toContain(a.cookie);
    expect(JSON.stringify(saved)).not.toContain(a.key);
    const { sessions: again } = make({}, store);
    expect(again.authenticate([a.cookie], a.key)).not.toBeNull();

    const dir = mkdtempSync(join(tmpdir(), 'al-sess-'));
    const file = join(dir, 'ui-sessions.json');
    const onDisk = sessionFile(file);
    const { sessions: s1 } = make({}, onDisk);
    const d = redeem(s1, s1.issueLink());
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(make({}, sessionFile(file)).sessions.authenticate([d.cookie], d.key)).not.toBeNull();
    for (const junk of ['{', '[]', '{"sessions":[{"cookieHash":"x"}]}', 'x'.repeat(100_000)]) {
      writeFileSync(file, junk);
      expect(make({}, sessionFile(file)).sessions.size, junk.slice(0, 20)).toBe(0);
    }
    // a symlink planted at the temp name is not written through
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'keep me\n');
    symlinkSync(victim, `${file}.${process.pid}.tmp`);
    redeem(s1, s1.issueLink());
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n');
    expect(make({}, sessionFile(file)).sessions.size).toBe(2);
    rmSync(dir, { recursive: true, force: true });
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
