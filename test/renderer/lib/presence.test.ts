/**
 * The window's presence helper: a call refused for want of a proof is proved with a passkey over a challenge
 * naming exactly that call and sent once more; a cancelled dialog sends nothing; a window at 127.0.0.1 is told
 * where passkeys work; without a passkey the broker's own refusal goes to the caller.
 */
import { describe, expect, test } from 'vitest';
import type { AirlockApi } from '@airlock/proxy-core/protocol/ui-contract';
import { localhostUrl, passkeyName, PresenceError, registerPasskey, withPresence, type AssertionGetter } from '../../../renderer/src/lib/presence.js';

class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const AT_LOCALHOST = { hostname: 'localhost', port: '7331', protocol: 'http:' };

/** A broker that wants a proof for `estop {on:false}` and answers challenges with a webauthn one (or not). */
function fakeApi(kinds: string[] = ['webauthn']) {
  const calls: { method: string; params: any }[] = [];
  const api = {
    host: { kind: 'browser' },
    subscribe: () => () => {},
    call: async (method: string, params: any) => {
      calls.push({ method, params });
      if (method === 'presence.challenge') {
        return { id: 'c0123456789', challenge: 'Y2hhbGxlbmdl', statement: 'Turn E-Stop off: wrapped servers take calls again', expiresAt: 1, kinds, webauthn: { rpId: 'localhost', allowCredentials: [{ id: 'cred', transports: ['internal'] }] } };
      }
      if (method === 'estop' && params.on === false && !params.presence) throw new Refusal('presence-required', 'Turn E-Stop off: this needs your presence. To allow it: ...');
      if (method === 'passkey.options') return { options: { challenge: 'cmVn' } };
      return { estop: false, ...params };
    },
  } as unknown as AirlockApi;
  return { api, calls };
}

const hooks = () => {
  const seen: string[] = [];
  return { seen, asking: (s: string) => seen.push(`asking: ${s}`), done: () => seen.push('done') };
};

describe('withPresence', () => {
  test('proves a refused call with a passkey over its own challenge and sends it again, once', async () => {
    const { api, calls } = fakeApi();
    const h = hooks();
    let asked: unknown;
    const get: AssertionGetter = async (o) => ((asked = o), { id: 'cred', response: { signature: 'sig' } });
    const out = await withPresence(api, h, get, AT_LOCALHOST).call('estop', { on: false });
    expect(out).toMatchObject({ estop: false });
    expect(calls.map((c) => c.method)).toEqual(['estop', 'presence.challenge', 'estop']);
    expect(calls[1]!.params).toEqual({ method: 'estop', params: { on: false } });
    expect(asked).toEqual({ challenge: 'Y2hhbGxlbmdl', rpId: 'localhost', allowCredentials: [{ id: 'cred', type: 'public-key', transports: ['internal'] }] });
    expect(calls[2]!.params).toEqual({ on: false, presence: { kind: 'webauthn', challenge: 'c0123456789', response: { id: 'cred', response: { signature: 'sig' } } } });
    // the statement was shown while the dialog was up, and taken away after
    expect(h.seen).toEqual(['asking: Turn E-Stop off: wrapped servers take calls again', 'done']);
  });

  test('a cancelled dialog sends nothing more and says so', async () => {
    const { api, calls } = fakeApi();
    const h = hooks();
    const get: AssertionGetter = async () => {
      throw Object.assign(new Error('The operation either timed out or was not allowed.'), { name: 'NotAllowedError' });
    };
    const err = await withPresence(api, h, get, AT_LOCALHOST)
      .call('estop', { on: false })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PresenceError);
    expect((err as PresenceError).message).toMatch(/not used.*nothing was changed/);
    expect(calls.map((c) => c.method)).toEqual(['estop', 'presence.challenge']);
    expect(h.seen).toEqual(['asking: Turn E-Stop off: wrapped servers take calls again', 'done']);
  });

  test('without a passkey to use, the broker’s own refusal reaches the caller; other errors pass untouched', async () => {
    const { api, calls } = fakeApi([]);
    const get: AssertionGetter = async () => {
      throw new Error('never asked');
    };
    const p = withPresence(api, hooks(), get, AT_LOCALHOST);
    await expect(p.call('estop', { on: false })).rejects.toMatchObject({ code: 'presence-required' });
    expect(calls.map((c) => c.method)).toEqual(['estop', 'presence.challenge']);
    expect(await p.call('estop', { on: true })).toMatchObject({ estop: false, on: true });
  });

  test('at 127.0.0.1 the dialog is not opened: the caller is told where passkeys work', async () => {
    const { api } = fakeApi();
    const h = hooks();
    const get: AssertionGetter = async () => {
      throw new Error('never asked');
    };
    await expect(withPresence(api, h, get, { hostname: '127.0.0.1', port: '7331', protocol: 'http:' }).call('estop', { on: false })).rejects.toMatchObject({
      code: 'presence-wrong-host',
      message: expect.stringContaining('http://localhost:7331/'),
    });
    expect(h.seen).toEqual([]);
  });
});

describe('the rest of it', () => {
  test('localhostUrl: where a window at an IP address goes for passkeys', () => {
    expect(localhostUrl({ hostname: '127.0.0.1', port: '7331', protocol: 'http:' })).toBe('http://localhost:7331/');
    expect(localhostUrl(AT_LOCALHOST)).toBeNull();
    // a file or custom protocol (the desktop app): not ours to redirect
    expect(localhostUrl({ hostname: '', port: '', protocol: 'file:' })).toBeNull();
  });

  test('passkeyName: the browser and the system, from the user agent', () => {
    expect(passkeyName('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36')).toBe('Chrome on Linux');
    expect(passkeyName('Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15')).toBe('Safari on macOS');
    expect(passkeyName('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0')).toBe('Firefox on Windows');
  });

  test('registerPasskey: options, the dialog, the broker’s check; cancelled makes none', async () => {
    const { api, calls } = fakeApi();
    const out = await registerPasskey(api, async (o) => ({ made: o.challenge }), 'Chrome on Linux');
    expect(out).toMatchObject({ name: 'Chrome on Linux', response: { made: 'cmVn' } });
    expect(calls.map((c) => c.method)).toEqual(['passkey.options', 'passkey.register']);
    const err = await registerPasskey(api, async () => {
      throw Object.assign(new Error('x'), { name: 'NotAllowedError' });
    }, 'x').catch((e: unknown) => e);
    expect((err as Error).message).toBe('No passkey was made (cancelled, or the time ran out)');
    expect(calls.map((c) => c.method)).toEqual(['passkey.options', 'passkey.register', 'passkey.options']);
  });
});
