/**
 * The presence check inside a real broker (in-memory channels, a fake clock, a real store): a loosening call
 * needs a proof bound to exactly that call, or its front end's lease, and is refused otherwise; tightening and
 * reading need none; decisions say their channel and proof. polkit is a recording stand-in here (the real one is
 * tested against polkitd); the app's proofs are real MACs under a key.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Broker } from '../../../../proxy-core/src/broker/broker.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import { PRESENCE_USED_KEY } from '../../../../proxy-core/src/broker/presence/api.js';
import { appProofMac, type FrontEnd } from '../../../../proxy-core/src/broker/presence/presence.js';
import type { Peer } from '../../../../proxy-core/src/ipc/peer.js';
import type { AskAnswer, Ticket } from '../../../../proxy-core/src/protocol/api.js';
import type { PresenceChallenge } from '../../../../proxy-core/src/protocol/presence.js';
import { WrapperMethod } from '../../../../proxy-core/src/protocol/names.js';
import { FakeClock } from '../../../helpers/fake-clock.js';
import { channelPair } from '../../../helpers/memory-channel.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const shell: Peer = { pid: 4242, uid: 1000, gid: 1000, exe: '/usr/bin/bash', tty: false, startTime: '99' };
const terminal: Peer = { ...shell, pid: 4343, tty: true };

function setup(o: { required?: boolean; polkit?: 'yes' | 'no' | 'throws'; store?: Store; dir?: string } = {}) {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'al-presence-'));
  if (!o.dir) dirs.push(dir);
  const store = o.store ?? new Store(join(dir, 'airlock.db'));
  if (!o.store) stores.push(store);
  const clock = new FakeClock();
  const appKey = randomBytes(32);
  const asked: { pid: number; statement: string }[] = [];
  const broker = new Broker({
    store,
    dataDir: dir,
    ticketTimeoutSeconds: 120,
    ackTimeoutMs: 1500,
    clock,
    presence: {
      required: o.required ?? true,
      appKey,
      polkitAvailable: true,
      polkit: async (peer, statement) => {
        asked.push({ pid: peer.pid, statement });
        if (o.polkit === 'throws') throw new Error('pkcheck crashed');
        return o.polkit === 'no' ? { ok: false, reason: 'polkit refused: not authorized' } : { ok: true, reason: 'authorized' };
      },
    },
  });
  return { broker, clock, store, dir, appKey, asked };
}

let n = 0;
const fe = (peer: Peer | null = shell, kind: FrontEnd['kind'] = 'cli'): FrontEnd => ({ kind, key: `test:${++n}`, peer });

async function heldTicket(broker: Broker, tool = 'write'): Promise<{ ticket: Ticket; answer: Promise<AskAnswer> }> {
  const [end, peer] = channelPair();
  broker.attach(end, 'wrapper');
  peer.setHandlers({ notify: (method, params) => void (method === 'policy' && peer.notify('policy.ack', { version: (params as { version: number }).version })) });
  await peer.request(WrapperMethod.sessionOpen, { client: 'c', server: 'fs', command: ['x'], pid: 1, trustFlag: false });
  const answer = peer.request<AskAnswer>(WrapperMethod.ask, { callId: `call-${Math.random()}`, tool, arguments: { path: '/tmp/x' }, class: 'mutating', reasons: ['r'] });
  for (let i = 0; i < 50 && !broker.pending().some((t) => t.tool === tool); i++) await new Promise((r) => setImmediate(r));
  return { ticket: broker.pending().find((t) => t.tool === tool)!, answer };
}

const call = async (broker: Broker, frontEnd: FrontEnd, method: string, params: unknown) => broker.callUser(method, params, frontEnd);
const challenge = (broker: Broker, frontEnd: FrontEnd, method: string, params: unknown) => call(broker, frontEnd, 'presence.challenge', { method, params }) as Promise<PresenceChallenge>;
const events = (store: Store, type: string) => store.db.prepare('SELECT detail FROM events WHERE kind = ?').all(type).map((r) => JSON.parse((r as { detail: string }).detail));

describe('a loosening call without a proof', () => {
  test('is refused and says where it came from; the ticket stays held; the attempt is reported, once per burst', async () => {
    const { broker, store } = setup();
    const { ticket } = await heldTicket(broker);
    const agent = fe();
    for (let i = 0; i < 5; i++) {
      await expect(call(broker, agent, 'approve', { id: ticket.id })).rejects.toMatchObject({ code: 'presence-required', message: expect.stringMatching(/process without a terminal \(pid 4242, bash\)/) });
    }
    expect(broker.pending().map((t) => t.id)).toEqual([ticket.id]);
    const refused = events(store, 'presence-refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ method: 'approve', channel: 'cli', peer: { pid: 4242, tty: false }, statement: expect.stringContaining(`Allow the held call ${ticket.id}: fs → write`) });
  });

  test('every loosening method is refused; every tightening one goes through', async () => {
    const { broker } = setup();
    const agent = fe();
    await call(broker, agent, 'estop', { on: true });
    await expect(call(broker, agent, 'estop', { on: false })).rejects.toMatchObject({ code: 'presence-required' });
    expect(broker.status().estop).toBe(true);
    const deny = (await call(broker, agent, 'rules.add', { action: 'deny', server: 'fs', tool: 'rm' })) as { id: string };
    await expect(call(broker, agent, 'rules.add', { action: 'allow', server: 'fs', tool: '*' })).rejects.toMatchObject({ code: 'presence-required' });
    await expect(call(broker, agent, 'rules.remove', { id: deny.id })).rejects.toMatchObject({ code: 'presence-required' });
    await call(broker, agent, 'trust.set', { server: 'fs', on: false });
    await expect(call(broker, agent, 'trust.set', { server: 'fs', on: true })).rejects.toMatchObject({ code: 'presence-required' });
    await call(broker, agent, 'settings.set', { key: 'tripwire', value: 'on' });
    await expect(call(broker, agent, 'settings.set', { key: 'tripwire', value: 'off' })).rejects.toMatchObject({ code: 'presence-required' });
    await call(broker, agent, 'settings.set', { key: 'tripwire-calls', value: '10' });
    await expect(call(broker, agent, 'settings.set', { key: 'tripwire-calls', value: '11' })).rejects.toMatchObject({ code: 'presence-required' });
    await expect(call(broker, agent, 'settings.set', { key: 'presence-lease', value: '3600' })).rejects.toMatchObject({ code: 'presence-required' });
    await call(broker, agent, 'settings.set', { key: 'presence-lease', value: '60' });
    await expect(call(broker, agent, 'pins.accept', { server: 'fs' })).rejects.toMatchObject({ code: 'presence-required' });
    expect(broker.rules().map((r) => r.action)).toEqual(['deny']);
  });

  test('removing an allow rule tightens: any front end may', async () => {
    const { broker } = setup({ required: false });
    const allow = await broker.addRule({ action: 'allow', server: 'fs', tool: 'read' });
    const strict = setup({ store: broker.store, dir: broker.options.dataDir });
    await call(strict.broker, fe(), 'rules.remove', { id: allow.id });
    expect(strict.broker.rules()).toEqual([]);
  });

  test('a deny from a shell goes through and says where it came from, not "by you"', async () => {
    const { broker } = setup();
    const { ticket, answer } = await heldTicket(broker);
    await call(broker, fe(), 'deny', { id: ticket.id });
    expect(await answer).toMatchObject({ decision: 'deny', reason: 'denied from a process without a terminal (pid 4242, bash)' });
  });
});

describe('a proof', () => {
  test('polkit asked about the calling process approves the call, says so, and opens a lease for that front end only', async () => {
    const { broker, store, asked } = setup();
    const { ticket, answer } = await heldTicket(broker);
    const person = fe(terminal);
    const c = await challenge(broker, person, 'approve', { id: ticket.id });
    expect(c.kinds).toContain('polkit');
    expect(c.statement).toMatch(new RegExp(`^Allow the held call ${ticket.id}: fs → write \\(arguments sha256 [0-9a-f]{16}…\\), once$`));
    await call(broker, person, 'approve', { id: ticket.id, presence: { kind: 'polkit', challenge: c.id } });
    expect(asked).toEqual([{ pid: 4343, statement: c.statement }]);
    expect(await answer).toMatchObject({ decision: 'allow', reason: 'approved by you, with your password (polkit) from a terminal (pid 4343, bash)' });
    expect(events(store, 'loosened')).toEqual([{ method: 'approve', statement: c.statement, via: { channel: 'cli', proof: 'polkit', peer: { pid: 4343, uid: 1000, exe: '/usr/bin/bash', tty: true } } }]);
    expect(store.getSetting(PRESENCE_USED_KEY)).toBe('1');

    // within the lease, the same front end approves the next call without a touch; another front end cannot
    const second = await heldTicket(broker, 'delete');
    await expect(call(broker, fe(terminal), 'approve', { id: second.ticket.id })).rejects.toMatchObject({ code: 'presence-required' });
    await call(broker, person, 'approve', { id: second.ticket.id });
    expect(await second.answer).toMatchObject({ decision: 'allow', reason: expect.stringMatching(/^approved by you, within a presence lease \(your password \(polkit\), 0 min ago\)/) });
  });

  test('the lease ends after presence-lease seconds, and at once on presence.end', async () => {
    const { broker, clock, store } = setup();
    const person = fe(terminal);
    const c = await challenge(broker, person, 'estop', { on: false });
    await call(broker, person, 'estop', { on: false, presence: { kind: 'polkit', challenge: c.id } });
    await call(broker, person, 'estop', { on: true });
    await call(broker, person, 'estop', { on: false });
    clock.advance(301_000);
    await call(broker, person, 'estop', { on: true });
    await expect(call(broker, person, 'estop', { on: false })).rejects.toMatchObject({ code: 'presence-required' });
    const again = await challenge(broker, person, 'estop', { on: false });
    await call(broker, person, 'estop', { on: false, presence: { kind: 'polkit', challenge: again.id } });
    await call(broker, fe(), 'estop', { on: true });
    // any front end may end every lease: it only tightens
    await call(broker, fe(), 'presence.end', {});
    await expect(call(broker, person, 'estop', { on: false })).rejects.toMatchObject({ code: 'presence-required' });
    expect(events(store, 'presence-leases-ended')).toEqual([{ leases: 1, channel: 'cli' }]);
  });

  test('a challenge is good once, for its front end, for its call, for two minutes', async () => {
    const { broker, clock } = setup();
    const a = await heldTicket(broker, 'write');
    const b = await heldTicket(broker, 'delete');
    const person = fe(terminal);
    const forA = await challenge(broker, person, 'approve', { id: a.ticket.id });
    await expect(call(broker, person, 'approve', { id: b.ticket.id, presence: { kind: 'polkit', challenge: forA.id } })).rejects.toMatchObject({ code: 'presence-refused', message: expect.stringMatching(/another action/) });
    // spent by the wrong try: nothing is left to try again with
    await expect(call(broker, person, 'approve', { id: a.ticket.id, presence: { kind: 'polkit', challenge: forA.id } })).rejects.toMatchObject({ code: 'presence-refused', message: expect.stringMatching(/unknown or was used/) });
    const other = await challenge(broker, person, 'approve', { id: a.ticket.id });
    await expect(call(broker, fe(terminal), 'approve', { id: a.ticket.id, presence: { kind: 'polkit', challenge: other.id } })).rejects.toMatchObject({ message: expect.stringMatching(/another front end/) });
    // "once" and "always" are different calls: a touch for one is not good for the other
    const once = await challenge(broker, person, 'approve', { id: a.ticket.id });
    await expect(call(broker, person, 'approve', { id: a.ticket.id, remember: 'always', presence: { kind: 'polkit', challenge: once.id } })).rejects.toMatchObject({ message: expect.stringMatching(/another action/) });
    expect(broker.pending()).toHaveLength(2);
    const late = await challenge(broker, person, 'settings.set', { key: 'tripwire', value: 'off' });
    clock.advance(121_000);
    await expect(call(broker, person, 'settings.set', { key: 'tripwire', value: 'off', presence: { kind: 'polkit', challenge: late.id } })).rejects.toMatchObject({ message: expect.stringMatching(/expired/) });
    // neither held call was ever allowed: both ended by the ticket timeout
    expect(await a.answer).toMatchObject({ decision: 'deny', decidedBy: 'timeout' });
    expect(await b.answer).toMatchObject({ decision: 'deny', decidedBy: 'timeout' });
  });

  test('polkit saying no, polkit breaking, and no process to ask about all refuse', async () => {
    for (const [polkit, peer, why] of [
      ['no', terminal, /not authorized/],
      ['throws', terminal, /could not be checked: pkcheck crashed/],
      ['yes', null, /cannot see which process/],
      ['yes', shell, /without a terminal cannot confirm/],
    ] as const) {
      const { broker } = setup({ polkit });
      const person = fe(peer);
      const c = await challenge(broker, person, 'estop', { on: false });
      await call(broker, fe(), 'estop', { on: true });
      await expect(call(broker, person, 'estop', { on: false, presence: { kind: 'polkit', challenge: c.id } })).rejects.toMatchObject({ code: 'presence-refused', message: expect.stringMatching(why) });
      expect(broker.status().estop).toBe(true);
    }
  });

  test("the app's proofs are MACs under its key: the right one approves, a made-up or another kind's does not", async () => {
    const { broker, appKey } = setup();
    const { ticket, answer } = await heldTicket(broker);
    const app = fe(null, 'app');
    const c1 = await challenge(broker, app, 'approve', { id: ticket.id });
    const bytes = Buffer.from(c1.challenge, 'base64url');
    await expect(call(broker, app, 'approve', { id: ticket.id, presence: { kind: 'app-click', challenge: c1.id, mac: 'ab'.repeat(32) } })).rejects.toMatchObject({ code: 'presence-refused' });
    const c2 = await challenge(broker, app, 'approve', { id: ticket.id });
    // a Touch ID MAC is not a click's
    await expect(call(broker, app, 'approve', { id: ticket.id, presence: { kind: 'app-click', challenge: c2.id, mac: appProofMac(appKey, 'touch-id', Buffer.from(c2.challenge, 'base64url')) } })).rejects.toMatchObject({ code: 'presence-refused' });
    expect(bytes).toHaveLength(32);
    const c3 = await challenge(broker, app, 'approve', { id: ticket.id });
    await call(broker, app, 'approve', { id: ticket.id, presence: { kind: 'touch-id', challenge: c3.id, mac: appProofMac(appKey, 'touch-id', Buffer.from(c3.challenge, 'base64url')) } });
    expect(await answer).toMatchObject({ decision: 'allow', reason: 'approved by you, with Touch ID' });
  });

  test('a proof of a malformed shape is refused before anything runs', async () => {
    const { broker } = setup();
    await call(broker, fe(), 'estop', { on: true });
    await expect(call(broker, fe(), 'estop', { on: false, presence: { kind: 'root-please' } })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/presence/) });
    await expect(call(broker, fe(), 'presence.challenge', { method: 'estop', params: { on: true } })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/needs no proof/) });
    await expect(call(broker, fe(), 'presence.challenge', { method: 'call.ask', params: {} })).rejects.toMatchObject({ code: 'unknown-method' });
    expect(broker.status().estop).toBe(true);
  });
});

describe('--no-presence', () => {
  test('lets loosening through, says so in every decision, in status and as an event', async () => {
    const { broker, store } = setup({ required: false });
    const { ticket, answer } = await heldTicket(broker);
    await call(broker, fe(), 'approve', { id: ticket.id });
    expect(await answer).toMatchObject({ reason: 'approved from a process without a terminal (pid 4242, bash), without a presence proof (the broker runs with --no-presence)' });
    expect(broker.status().presence).toEqual({ required: false, warning: expect.stringMatching(/^Presence proofs are off/) });
    expect(events(store, 'presence-off')).toEqual([{ after: false }]);
  });

  test('a restart into it after proofs were in use says so until a proof confirms it, and again at the next restart', async () => {
    const first = setup();
    const c = await challenge(first.broker, fe(terminal), 'estop', { on: true }).catch(() => null);
    expect(c).toBeNull();
    first.store.setSetting(PRESENCE_USED_KEY, '1');
    const again = setup({ required: false, store: first.store, dir: first.dir });
    expect(again.broker.status().presence?.warning).toMatch(/Proofs were in use before this start/);
    const person = fe(terminal);
    // confirming takes a real proof even though proofs are off
    await expect(call(again.broker, person, 'presence.confirm', {})).rejects.toMatchObject({ code: 'presence-required' });
    const cc = await challenge(again.broker, person, 'presence.confirm', {});
    await call(again.broker, person, 'presence.confirm', { presence: { kind: 'polkit', challenge: cc.id } });
    expect(again.broker.status().presence?.warning).not.toMatch(/in use before/);
    const third = setup({ required: false, store: first.store, dir: first.dir });
    expect(third.broker.status().presence?.warning).toMatch(/Proofs were in use before this start/);
  });
});
