/**
 * The tripwire is a cap, end to end: real broker, real wrappers, the real SDK client sending its calls all at
 * once (a pipelined burst). Ground truth is what the fixture servers logged as executed: no more changing calls
 * reach the servers than the limit, in the short window and in the long one, across sessions; read-only claims
 * nobody vouched for count; the call that would pass the limit trips E-Stop and is refused before the server.
 * And the journal says what the servers did: a call that ran is `ok`, whatever E-Stop did to its answer.
 */
import { afterEach, describe, expect, test } from 'vitest';
import type { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cleanup, decisionOf, executedCalls, waitFor, type Wrapped } from '../helpers/airlock.js';
import { startBroker, wrapFixture } from '../helpers/e2e.js';

afterEach(async () => {
  await cleanup();
});

/** A broker that allows every tool, with these settings. */
const brokerWith = (settings: Record<string, string> = {}) => startBroker({ allow: ['*'], settings });

/** Send `n` calls at once (the SDK writes them one after another, without waiting for any answer). */
function burst(w: Wrapped, tool: string, n: number, prefix: string) {
  return Promise.all(Array.from({ length: n }, (_, i) => w.client.callTool({ name: tool, arguments: { text: `${prefix}${i}` } }, undefined, { timeout: 60_000 })));
}

/**
 * Wait until every call of the server is journaled with its outcome: a call E-Stop answered while it was on its
 * way to the server may still run there a moment later, so the server's log is read only after this.
 */
async function settled(broker: BrokerClient, server: string, calls: number): Promise<void> {
  const final = async () => (await broker.call('history', { server, limit: 1000 })).calls.filter((c) => c.outcome !== 'pending').length;
  await waitFor(async () => (await final()) >= calls, 15_000, `the journal of ${server}`);
}

async function tripwireCause(broker: BrokerClient): Promise<unknown> {
  await waitFor(async () => (await broker.call('status', {})).estop, 10_000, 'E-Stop');
  return (await broker.call('status', {})).estopCause;
}

describe('a pipelined burst', () => {
  test('600 changing calls at once under an allow rule: no more than 30 reach the server; the rest are refused before it', async () => {
    const { home, broker } = await brokerWith();
    const { w, fx: { log } } = await wrapFixture(home, { server: 'fixture' });
    const results = await burst(w, 'write_note', 600, 'b');
    await settled(broker, 'fixture', 600);
    const ran = executedCalls(log, 'write_note').length;
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThanOrEqual(30);
    expect(await tripwireCause(broker)).toMatchObject({ by: 'tripwire', reason: '31 changing calls in 10 s' });
    // every call the server did not run was refused by E-Stop without being sent
    const unsent = results.filter((r) => r.isError && decisionOf(r)?.sent !== true);
    expect(unsent.length).toBe(600 - ran);
    for (const r of unsent) expect(decisionOf(r)).toMatchObject({ decision: 'deny', decidedBy: 'estop' });

    // the journal says what the server did: each call it ran is ok (even one E-Stop answered while running)
    const ok = (await broker.call('history', { server: 'fixture', outcome: 'ok', limit: 1000 })).calls;
    expect(ok.length).toBe(ran);
    expect((await broker.call('history', { server: 'fixture', outcome: 'cancelled', limit: 1000 })).calls).toHaveLength(0);
    broker.close();
  });

  test('a server whose tools claim to be read-only (nobody vouched for it): its calls count', async () => {
    const { home, broker } = await brokerWith();
    const { w, fx: { log } } = await wrapFixture(home, { server: 'liar' });
    await burst(w, 'echo', 100, 'r');
    await settled(broker, 'liar', 100);
    const ran = executedCalls(log, 'echo').length;
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThanOrEqual(30);
    expect(await tripwireCause(broker)).toMatchObject({ by: 'tripwire' });
    broker.close();
  });
});

describe('across sessions, and the long window', () => {
  test('three servers sharing the windows: together no more than the long limit runs', async () => {
    // the short window out of the way: what is measured is the long one, shared by three wrappers
    const { home, broker } = await brokerWith({ 'tripwire-calls': '100000', 'tripwire-long-calls': '40', 'tripwire-long-seconds': '600' });
    const servers = await Promise.all(['one', 'two', 'three'].map((server) => wrapFixture(home, { server })));
    await Promise.all(servers.map(({ w }, i) => burst(w, 'write_note', 25, `s${i}-`)));
    for (const name of ['one', 'two', 'three']) await settled(broker, name, 25);
    const ran = servers.reduce((n, { fx }) => n + executedCalls(fx.log, 'write_note').length, 0);
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThanOrEqual(40);
    expect(await tripwireCause(broker)).toMatchObject({ by: 'tripwire', reason: '41 changing calls in 600 s' });
    broker.close();
  });

  test('calls made one by one, under the limit, all run; the first past it is held and E-Stop engages', async () => {
    const { home, broker } = await brokerWith({ 'tripwire-calls': '5' });
    const { w, fx: { log } } = await wrapFixture(home, { server: 'fixture' });
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await w.client.callTool({ name: 'write_note', arguments: { text: `n${i}` } }));
    expect(results.slice(0, 5).every((r) => !r.isError)).toBe(true);
    expect(decisionOf(results[5])).toMatchObject({ decidedBy: 'estop' });
    expect(decisionOf(results[5])?.sent).not.toBe(true);
    expect(executedCalls(log, 'write_note').map((e) => (e.arguments as { text: string }).text)).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
    expect(await tripwireCause(broker)).toMatchObject({ by: 'tripwire', reason: '6 changing calls in 10 s' });
    broker.close();
  });
});
