/**
 * The broker without sockets or processes: in-memory channels, a fake clock, a real store in a temp file.
 * Covers the protocol table, who may call what, the event stream, and the races between a person, a timeout,
 * E-Stop and policy pushes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Broker } from '../../../proxy-core/src/broker/broker.js';
import { Store } from '../../../proxy-core/src/broker/db/store.js';
import type { Channel } from '../../../proxy-core/src/ipc/channel.js';
import { type AskAnswer, type BrokerEvent, userApi, wrapperApi } from '../../../proxy-core/src/protocol/api.js';
import { UserMethod, WrapperMethod } from '../../../proxy-core/src/protocol/names.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { QUIET_MS } from '../../../proxy-core/src/broker/journal-writer.js';
import { channelPair } from '../../helpers/memory-channel.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(opts: { ticketTimeoutSeconds?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'al-broker-'));
  dirs.push(dir);
  const store = new Store(join(dir, 'airlock.db'));
  stores.push(store);
  const clock = new FakeClock();
  const broker = new Broker({ presence: { required: false }, store, dataDir: dir, ticketTimeoutSeconds: opts.ticketTimeoutSeconds ?? 120, ackTimeoutMs: 1500, clock });
  return { broker, clock, store, dir };
}

/** A front end on an in-memory channel. */
function frontEnd(broker: Broker, role: 'cli' | 'ui' = 'cli'): Channel {
  const [server, peer] = channelPair();
  broker.attach(server, role);
  return peer;
}

/** A wrapper on an in-memory channel, with control over whether it acknowledges policy pushes. */
async function wrapper(broker: Broker, server = 'fs') {
  const [end, peer] = channelPair();
  broker.attach(end, 'wrapper');
  const pushes: { version: number; estop: boolean }[] = [];
  let acking = true;
  const unacked: number[] = [];
  const tickets: unknown[] = [];
  peer.setHandlers({
    notify: (method, params) => {
      if (method === 'policy') {
        const p = params as { version: number; estop: boolean };
        pushes.push(p);
        if (acking) peer.notify('policy.ack', { version: p.version });
        else unacked.push(p.version);
      } else if (method === 'ticket') tickets.push(params);
    },
    request: (method) => (method === 'wrapper.status' ? { hello: 'from the wrapper' } : undefined),
  });
  const opened = await peer.request<{ sessionId: string }>(WrapperMethod.sessionOpen, { client: 'c', server, command: ['x'], pid: 1, trustFlag: false });
  return {
    peer,
    sessionId: opened.sessionId,
    pushes,
    tickets,
    hold: () => (acking = false),
    release: () => {
      acking = true;
      for (const v of unacked.splice(0)) peer.notify('policy.ack', { version: v });
    },
    ask: (tool = 'write', args: Record<string, unknown> = {}) =>
      peer.request<AskAnswer>(WrapperMethod.ask, { callId: `call-${Math.random()}`, tool, arguments: args, class: 'mutating', reasons: ['r'] }),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

async function untilTicket(broker: Broker) {
  for (let i = 0; i < 50 && broker.pending().length === 0; i++) await tick();
  return broker.pending()[0]!;
}

describe('one protocol', () => {
  test('every method name has a schema, and every schema a name', () => {
    expect(Object.keys(userApi).sort()).toEqual(Object.values(UserMethod).sort());
    expect(Object.keys(wrapperApi).sort()).toEqual(Object.values(WrapperMethod).sort());
  });

  test('a front end cannot call what only a wrapper may, and the reverse', async () => {
    const { broker } = setup();
    const ui = frontEnd(broker, 'ui');
    await expect(ui.request('call.ask', { callId: 'x', tool: 't', arguments: {}, class: 'mutating', reasons: [] })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(ui.request('session.open', {})).rejects.toMatchObject({ code: 'forbidden' });
    const w = await wrapper(broker);
    for (const m of ['approve', 'deny', 'estop', 'rules.add', 'rules.remove', 'trust.set', 'settings.set', 'history', 'events.subscribe']) {
      await expect(w.peer.request(m, {}), m).rejects.toMatchObject({ code: 'forbidden' });
    }
    await expect(ui.request('no.such', {})).rejects.toMatchObject({ code: 'unknown-method' });
  });

  test('parameters are checked against the schema, with a message that names the field', async () => {
    const { broker } = setup();
    const cli = frontEnd(broker);
    await expect(cli.request('estop', { on: 'yes' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/on/) });
    await expect(cli.request('rules.add', { action: 'allow', server: 's' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/tool/) });
    await expect(cli.request('approve', { id: 'x', remember: 'forever' })).rejects.toMatchObject({ code: 'bad-request' });
    await expect(cli.request('settings.set', { key: 'estop', value: 'off' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/unknown setting/) });
  });
});

describe('races', () => {
  test('E-Stop pressed while an approval waits for its policy push: the approval loses, the call is denied', async () => {
    const { broker } = setup();
    const w = await wrapper(broker);
    const answer = w.ask();
    const ticket = await untilTicket(broker);
    w.hold();
    const approving = broker.approve(ticket.id, 'always');
    await tick();
    const stopping = broker.setEstop(true);
    expect(await answer).toMatchObject({ decision: 'deny', decidedBy: 'estop' });
    w.release();
    await expect(approving).rejects.toMatchObject({ code: 'not-pending' });
    await stopping;
    expect(w.pushes.at(-1)).toMatchObject({ estop: true });
  });

  test('a ticket that times out while an approval waits for its push is a timeout, not an approval', async () => {
    // the ticket's 1 s runs out before the wrapper's 1.5 s to acknowledge the push
    const { broker, clock } = setup({ ticketTimeoutSeconds: 1 });
    const w = await wrapper(broker);
    const answer = w.ask();
    const ticket = await untilTicket(broker);
    w.hold();
    const approving = broker.approve(ticket.id, 'session');
    await tick();
    clock.advance(1000);
    expect(await answer).toMatchObject({ decision: 'deny', decidedBy: 'timeout' });
    w.release();
    await expect(approving).rejects.toMatchObject({ code: 'not-pending' });
  });

  test('a wrapper that does not acknowledge a push is cut off, so the push still completes', async () => {
    const { broker, clock } = setup();
    const w = await wrapper(broker);
    let closed = false;
    w.peer.setHandlers({ close: () => (closed = true) });
    const stopping = broker.setEstop(true);
    clock.advance(1500);
    await stopping;
    await tick();
    expect(closed).toBe(true);
    expect(broker.status().sessions).toHaveLength(0);
  });

  test('E-Stop on: a new ask is denied at once and no ticket is made', async () => {
    const { broker } = setup();
    const w = await wrapper(broker);
    await broker.setEstop(true);
    expect(await w.ask()).toMatchObject({ decision: 'deny', decidedBy: 'estop' });
    expect(broker.pending()).toEqual([]);
  });
});

describe('why E-Stop is on', () => {
  test('status says who turned it on and when, and still says so after a restart; release forgets it', async () => {
    const { broker, clock, store, dir } = setup();
    expect(broker.status()).toMatchObject({ estop: false, estopCause: null });
    await broker.setEstop(true, { by: 'tripwire', reason: '31 changing calls in 10 s' });
    const cause = { by: 'tripwire', reason: '31 changing calls in 10 s', at: clock.now() };
    expect(broker.status().estopCause).toEqual(cause);
    const again = new Broker({ presence: { required: false }, store, dataDir: dir, ticketTimeoutSeconds: 120, ackTimeoutMs: 1500, clock });
    expect(again.status()).toMatchObject({ estop: true, estopCause: cause });
    await again.setEstop(false);
    expect(again.status()).toMatchObject({ estop: false, estopCause: null });
    await again.setEstop(true);
    expect(again.status().estopCause).toEqual({ by: 'user', at: clock.now() });
  });

  test('a stored cause that cannot be read leaves E-Stop on, its cause unknown', () => {
    const { store, clock, dir } = setup();
    store.setSetting('estop', 'on');
    store.setSetting('estop-cause', '{"by":"someone else"}');
    const broker = new Broker({ presence: { required: false }, store, dataDir: dir, ticketTimeoutSeconds: 120, ackTimeoutMs: 1500, clock });
    expect(broker.status()).toMatchObject({ estop: true, estopCause: null });
  });
});

describe('the event stream', () => {
  async function collect(broker: Broker, since: number) {
    const cli = frontEnd(broker, 'ui');
    const got: BrokerEvent[] = [];
    cli.setHandlers({ notify: (m, p) => m === 'event' && got.push(p as BrokerEvent) });
    await cli.request(UserMethod.subscribe, { since });
    return { cli, got };
  }

  test('since N: every stored event after N, then live ones, in order, with no gap and no duplicate', async () => {
    const { broker } = setup();
    for (let i = 0; i < 3; i++) broker.setSetting('auto-protect', i % 2 ? 'on' : 'off');
    const all = broker.events({ limit: 100 }).events.reverse();
    const since = all[0]!.seq;
    const { got } = await collect(broker, since);
    // live events published while the subscriber is still catching up
    broker.setSetting('auto-protect', 'on');
    for (let i = 0; i < 30 && got.length < all.length; i++) await tick();
    await broker.setEstop(true);
    for (let i = 0; i < 30 && got.at(-1)?.type !== 'estop-on'; i++) await tick();
    const seqs = got.map((e) => e.seq);
    expect(seqs[0]).toBe(since + 1);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    const head = broker.events({ limit: 1 }).events[0]!.seq;
    expect(seqs.at(-1)).toBe(head);
    expect(seqs.length).toBe(head - since);
  });

  test('a long history is caught up in pages while live events keep coming, and nothing is lost or repeated', async () => {
    const { broker } = setup();
    for (let i = 0; i < 1200; i++) broker.setSetting('auto-protect', i % 2 ? 'on' : 'off');
    const { got } = await collect(broker, 0);
    for (let i = 0; i < 300; i++) {
      if (i % 3 === 0) broker.setSetting('auto-protect', 'on');
      await tick();
    }
    const head = broker.events({ limit: 1 }).events[0]!.seq;
    const seqs = got.map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: head }, (_, i) => i + 1));
  });

  test('tickets, calls and sessions are events too', async () => {
    const { broker, clock } = setup();
    const { got } = await collect(broker, 0);
    const w = await wrapper(broker);
    const answer = w.ask('write', { path: '/x' });
    const ticket = await untilTicket(broker);
    broker.deny(ticket.id, 'no');
    await answer;
    await w.peer.request(WrapperMethod.journal, {
      entries: [{ id: 'c1', tool: 'write', arguments: '{}', argsTruncated: false, class: 'mutating', reasons: [], decision: 'deny', decidedBy: 'user', detail: 'no', outcome: 'not-run', startedAt: 1 }],
    });
    // the batch is filed into the journal (and its calls' events published) once no other came for QUIET_MS
    for (let i = 0; i < 5; i++) await tick();
    expect(got.some((e) => e.type === 'call')).toBe(false);
    clock.advance(QUIET_MS);
    for (let i = 0; i < 20 && !got.some((e) => e.type === 'call'); i++) await tick();
    expect(got.map((e) => e.type)).toEqual(expect.arrayContaining(['session-up', 'ticket-created', 'ticket-ended', 'call']));
    expect(got.find((e) => e.type === 'call')).toMatchObject({ server: 'fs', tool: 'write', detail: { id: 'c1', decision: 'deny', outcome: 'not-run' } });
  });
});

describe('the broker asks a wrapper', () => {
  test('a front end reaches one connected wrapper through the broker', async () => {
    const { broker } = setup();
    const w = await wrapper(broker);
    const cli = frontEnd(broker);
    expect(await cli.request('wrapper.request', { sessionId: w.sessionId, method: 'wrapper.status' })).toEqual({ sessionId: w.sessionId, answer: { hello: 'from the wrapper' } });
    await expect(cli.request('wrapper.request', { sessionId: 'nope', method: 'wrapper.status' })).rejects.toMatchObject({ code: 'not-found' });
  });
});
