// Passkeys with real WebAuthn structures (a software authenticator of node:crypto): the first registration is
// free, every later one needs a proof; an assertion is refused without user verification, over another
// challenge, for another call, with a counter that went back, from an unknown key or another origin; one that
// verifies lets its call through, said so in the event ("with a passkey (NAME) from the browser").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Broker } from '../../../../proxy-core/src/broker/broker.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import { uniqueName } from '../../../../proxy-core/src/broker/presence/passkeys.js';
import type { FrontEnd } from '../../../../proxy-core/src/broker/presence/presence.js';
import { IpcError } from '../../../../proxy-core/src/ipc/channel.js';
import { describeVia, type Via } from '../../../../proxy-core/src/protocol/presence.js';
import { FakeClock } from '../../../helpers/fake-clock.js';
import { FLAG_UP, SoftAuthenticator } from '../../../helpers/soft-authenticator.js';

const PORT = 7444;
const ORIGIN = `http://localhost:${PORT}`;
const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'al-passkeys-'));
  dirs.push(dir);
  const store = new Store(join(dir, 'airlock.db'));
  stores.push(store);
  const clock = new FakeClock();
  const broker = new Broker({ presence: { required: true, polkitAvailable: false }, store, dataDir: dir, ackTimeoutMs: 1500, clock });
  broker.passkeys.serveUiAt(PORT);
  // no lease: each loosening call needs its own touch (what these tests are about)
  store.setSetting('presence-lease', '0');
  const ui: FrontEnd = { kind: 'ui', key: 'ui:one', peer: null };
  const call = async (method: string, params: unknown, fe: FrontEnd = ui): Promise<any> => broker.callUser(method, params, fe);
  const events = (type: string) => store.eventsSince(0, 10_000).filter((e) => e.type === type);
  /** Register `auth` as `name` (free the first time; else with `proofBy`'s assertion). */
  const register = async (auth: SoftAuthenticator, name: string, proofBy?: SoftAuthenticator) => {
    const { options } = await call('passkey.options', {});
    const params = { name, response: auth.register(String(options.challenge)) };
    if (!proofBy) return call('passkey.register', params);
    const c = await call('presence.challenge', { method: 'passkey.register', params });
    return call('passkey.register', { ...params, presence: { kind: 'webauthn', challenge: c.id, response: proofBy.assert(c.challenge) } });
  };
  /** E-Stop on (tightening, free), then a challenge for turning it off. */
  const estopOffChallenge = async (fe: FrontEnd = ui) => {
    await call('estop', { on: true }, fe);
    return call('presence.challenge', { method: 'estop', params: { on: false } }, fe);
  };
  return { broker, store, clock, ui, call, events, register, estopOffChallenge };
}

async function refusal(p: Promise<unknown>): Promise<IpcError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IpcError);
  return err as IpcError;
}

describe('registering passkeys', () => {
  test('the first needs no proof; it is recorded as the first, and the UI then gets webauthn challenges', async () => {
    const s = setup();
    expect((await s.call('presence.status', {})).passkeys).toBe(0);
    const auth = new SoftAuthenticator(ORIGIN);
    const { options } = await s.call('passkey.options', {});
    expect(options.rp).toEqual({ name: 'Airlock approvals', id: 'localhost' });
    expect(options.authenticatorSelection).toMatchObject({ userVerification: 'required', residentKey: 'preferred' });
    const row = await s.call('passkey.register', { name: 'laptop', response: auth.register(String(options.challenge)) });
    expect(row).toMatchObject({ id: auth.id, name: 'laptop', lastUsedAt: null });
    expect(s.events('passkey-registered').map((e) => e.detail)).toMatchObject([{ id: auth.id, name: 'laptop', first: true }]);
    const status = await s.call('presence.status', {});
    expect(status).toMatchObject({ passkeys: 1, kinds: ['webauthn'] });
    // a CLI's front end is not offered a passkey (it has no browser)
    expect((await s.call('presence.status', {}, { kind: 'cli', key: 'cli:1', peer: null })).kinds).not.toContain('webauthn');
    const c = await s.estopOffChallenge();
    expect(c.webauthn).toEqual({ rpId: 'localhost', allowCredentials: [{ id: auth.id, transports: ['internal'] }] });
    // the next registration excludes the registered key
    expect((await s.call('passkey.options', {})).options.excludeCredentials).toEqual([{ id: auth.id, type: 'public-key', transports: ['internal'] }]);
  });

  test('the second needs a proof: without one it is refused, with one of the first passkey it is kept', async () => {
    const s = setup();
    const first = new SoftAuthenticator(ORIGIN);
    const second = new SoftAuthenticator(ORIGIN);
    await s.register(first, 'laptop');
    expect((await refusal(s.register(second, 'phone'))).code).toBe('presence-required');
    // the same name given twice: the journal must tell them apart
    expect(uniqueName('laptop', new Set(['laptop', 'laptop (2)']))).toBe('laptop (3)');
    expect(await s.call('passkey.list', {})).toHaveLength(1);
    s.clock.advance(1000);
    await s.register(second, 'phone', first);
    expect((await s.call('passkey.list', {})).map((p: { name: string }) => p.name)).toEqual(['laptop', 'phone']);
    const [, later] = s.events('passkey-registered').map((e) => e.detail as { first: boolean; via: Via });
    expect(later).toMatchObject({ first: false, via: { proof: 'webauthn', label: 'laptop' } });
  });

  test('two first registrations at once: one is the first, the other needs a proof like any later one', async () => {
    const s = setup();
    const a: FrontEnd = { kind: 'ui', key: 'ui:a', peer: null };
    const b: FrontEnd = { kind: 'ui', key: 'ui:b', peer: null };
    const [oa, ob] = [await s.call('passkey.options', {}, a), await s.call('passkey.options', {}, b)];
    const results = await Promise.allSettled([
      s.call('passkey.register', { name: 'a', response: new SoftAuthenticator(ORIGIN).register(String(oa.options.challenge)) }, a),
      s.call('passkey.register', { name: 'b', response: new SoftAuthenticator(ORIGIN).register(String(ob.options.challenge)) }, b),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'presence-required' });
    expect(await s.call('passkey.list', {})).toHaveLength(1);
    expect(s.events('passkey-registered').map((e) => (e.detail as { first: boolean }).first)).toEqual([true]);
  });

  test('a registration is answered once, in the window that started it, with user verification, for this origin', async () => {
    const s = setup();
    const auth = new SoftAuthenticator(ORIGIN);
    const { options } = await s.call('passkey.options', {});
    const response = auth.register(String(options.challenge));
    const other: FrontEnd = { kind: 'ui', key: 'ui:two', peer: null };
    expect((await refusal(s.call('passkey.register', { name: 'x', response }, other))).message).toMatch(/no passkey registration was started in this window/);
    // without user verification
    const again = (await s.call('passkey.options', {})).options;
    expect((await refusal(s.call('passkey.register', { name: 'x', response: auth.register(String(again.challenge), { flags: FLAG_UP }) }))).message).toMatch(/not registered: .*user/i);
    // the challenge was spent by that failure
    expect((await refusal(s.call('passkey.register', { name: 'x', response: auth.register(String(again.challenge)) }))).message).toMatch(/no passkey registration was started/);
    // made on the 127.0.0.1 address (a browser refuses that; a forged one is refused here)
    const third = (await s.call('passkey.options', {})).options;
    expect((await refusal(s.call('passkey.register', { name: 'x', response: auth.register(String(third.challenge), { origin: `http://127.0.0.1:${PORT}` }) }))).message).toMatch(/origin/i);
    expect(await s.call('passkey.list', {})).toEqual([]);
  });

  test('a broker that serves no browser UI cannot register passkeys', async () => {
    const s = setup();
    s.broker.passkeys.serveUiAt(null);
    expect((await refusal(s.call('passkey.options', {}))).code).toBe('unavailable');
  });
});

describe('a passkey as a presence proof', () => {
  async function withPasskey() {
    const s = setup();
    const auth = new SoftAuthenticator(ORIGIN);
    await s.register(auth, 'laptop');
    return { ...s, auth };
  }
  const offWith = (s: Awaited<ReturnType<typeof withPasskey>>, id: string, response: Record<string, unknown>) => s.call('estop', { on: false, presence: { kind: 'webauthn', challenge: id, response } });

  test('an assertion with user verification lets the call through; the counter and the last use are kept', async () => {
    const s = await withPasskey();
    const c = await s.estopOffChallenge();
    expect(c.kinds).toContain('webauthn');
    s.clock.advance(1000);
    expect(await offWith(s, c.id, s.auth.assert(c.challenge, { counter: 7 }))).toEqual({ estop: false });
    const [loosened] = s.events('loosened').map((e) => e.detail as { via: Via });
    expect(loosened!.via).toMatchObject({ channel: 'ui', proof: 'webauthn', label: 'laptop' });
    expect(describeVia(loosened!.via)).toBe('by you, with a passkey (laptop) from the browser');
    expect(s.broker.passkeys.table.get(s.auth.id)).toMatchObject({ counter: 7, lastUsedAt: s.clock.now() });
  });

  test('without user verification: refused, and nothing changes', async () => {
    const s = await withPasskey();
    const c = await s.estopOffChallenge();
    const err = await refusal(offWith(s, c.id, s.auth.assert(c.challenge, { flags: FLAG_UP })));
    expect(err.code).toBe('presence-refused');
    expect(err.message).toMatch(/user verification/i);
    expect((await s.call('status', {})).estop).toBe(true);
  });

  test('over another challenge than the one issued: refused', async () => {
    const s = await withPasskey();
    const c = await s.estopOffChallenge();
    const err = await refusal(offWith(s, c.id, s.auth.assert(Buffer.alloc(32, 7).toString('base64url'))));
    expect(err.code).toBe('presence-refused');
    expect(err.message).toMatch(/challenge/i);
    expect((await s.call('status', {})).estop).toBe(true);
  });

  test('a challenge issued for another call: refused (a touch for one action is never spent on another)', async () => {
    const s = await withPasskey();
    const c = await s.call('presence.challenge', { method: 'settings.set', params: { key: 'ticket-timeout', value: '600' } });
    await s.call('estop', { on: true });
    const err = await refusal(offWith(s, c.id, s.auth.assert(c.challenge)));
    expect(err.code).toBe('presence-refused');
    expect(err.message).toMatch(/another action/);
    expect((await s.call('status', {})).estop).toBe(true);
  });

  test('a signature counter that goes back (a cloned authenticator): refused', async () => {
    const s = await withPasskey();
    const c1 = await s.estopOffChallenge();
    await offWith(s, c1.id, s.auth.assert(c1.challenge, { counter: 10 }));
    const c2 = await s.estopOffChallenge();
    const err = await refusal(offWith(s, c2.id, s.auth.assert(c2.challenge, { counter: 9 })));
    expect(err.code).toBe('presence-refused');
    expect(err.message).toMatch(/counter/i);
    expect((await s.call('status', {})).estop).toBe(true);
    expect(s.broker.passkeys.table.get(s.auth.id)!.counter).toBe(10);
  });

  test('a key that is not registered, or an assertion made for another origin: refused', async () => {
    const s = await withPasskey();
    const stranger = new SoftAuthenticator(ORIGIN);
    const c = await s.estopOffChallenge();
    expect((await refusal(offWith(s, c.id, stranger.assert(c.challenge)))).message).toMatch(/not one registered/);
    const c2 = await s.call('presence.challenge', { method: 'estop', params: { on: false } });
    expect((await refusal(offWith(s, c2.id, s.auth.assert(c2.challenge, { origin: 'http://localhost:1' })))).message).toMatch(/origin/i);
    expect((await s.call('status', {})).estop).toBe(true);
  });

  test('removing a passkey needs a proof; with none left the next registration is the first again', async () => {
    const s = await withPasskey();
    expect((await refusal(s.call('passkey.remove', { id: s.auth.id }))).code).toBe('presence-required');
    const c = await s.call('presence.challenge', { method: 'passkey.remove', params: { id: s.auth.id } });
    expect(c.statement).toBe('Remove the passkey laptop');
    await s.call('passkey.remove', { id: s.auth.id, presence: { kind: 'webauthn', challenge: c.id, response: s.auth.assert(c.challenge) } });
    expect(s.events('passkey-removed').map((e) => e.detail)).toMatchObject([{ id: s.auth.id, name: 'laptop', via: { proof: 'webauthn' } }]);
    await s.register(new SoftAuthenticator(ORIGIN), 'new laptop');
    expect(s.events('passkey-registered').map((e) => (e.detail as { first: boolean }).first)).toEqual([true, true]);
  });
});
