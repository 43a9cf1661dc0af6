/**
 * E-Stop, hard, end to end: real broker, real wrappers, the real SDK client. A running call on server-everything
 * is answered within 100 ms of the E-Stop command returning and the server is sent notifications/cancelled; a
 * server that ignores cancellation (and SIGTERM) is killed, whole tree, after the grace and restarted on release
 * with the client's session replayed, or the client is told it cannot be; the tripwire engages on a burst.
 * Ground truth is what the servers themselves logged. One broker for the file.
 */
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import {
  cli,
  connectWrapped,
  decisionOf,
  EVERYTHING,
  executed,
  executedCalls,
  fixture,
  processAlive,
  ROOT,
  textOf,
  untilBroker,
  waitFor,
  type Wrapped,
} from '../helpers/airlock.js';
import { brokerForFile } from '../helpers/estop.js';

const STUBBORN = join(ROOT, 'test', 'fixtures', 'servers', 'stubborn-server.mjs');
const TAP = join(ROOT, 'test', 'fixtures', 'servers', 'tap-server.mjs');

let home: string;
let broker: BrokerClient;
brokerForFile({ allow: ['everything', 'stubborn', 'varying', 'fixture'] }, (shared) => ({ home, broker } = shared));

type Entry = Record<string, unknown> & { pid: number; at: number };
const logOf = (path: string) => executed(path) as Entry[];

/**
 * These servers ignore stdin closing and SIGTERM (that is the point), so a polite shutdown would wait out the
 * wrapper's whole stop sequence: kill the server's tree outright, then close the client.
 */
async function closeKilling(w: Wrapped, serverPid: number): Promise<void> {
  try {
    process.kill(-serverPid, 'SIGKILL');
  } catch {
    // already gone
  }
  await w.close();
}

describe('running calls', () => {
  test("server-everything's long-running operation: answered within 100 ms of the command, and the server cancelled", async () => {
    const tapLog = join(home, 'tap.log');
    const w = await connectWrapped({ home, server: 'everything', command: process.execPath, args: [TAP, process.execPath, EVERYTHING, 'stdio'], env: { TAP_LOG: tapLog } });
    let progressed = 0;
    let answeredAt = 0;
    const call = w.client
      .callTool({ name: 'trigger-long-running-operation', arguments: { duration: 60, steps: 600 } }, undefined, { onprogress: () => void progressed++, timeout: 120_000 })
      .then((r) => ((answeredAt = performance.now()), r));
    // running for real: the server reports progress on it
    await waitFor(() => progressed > 0, 10_000, 'progress from the running operation');

    await broker.call('estop', { on: true });
    const returnedAt = performance.now();
    const result = await call;
    expect(answeredAt - returnedAt).toBeLessThanOrEqual(100);
    expect(result.isError).toBe(true);
    expect(decisionOf(result)).toMatchObject({ decision: 'deny', decidedBy: 'estop', reason: 'stopped by E-Stop', sent: true });
    expect(textOf(result)).toMatch(/E-Stop was pressed while it was running/);

    // the server was told, with the id it saw the call under
    const sent = logOf(tapLog);
    const forwarded = sent.find((e) => e.method === 'tools/call')!;
    await waitFor(() => logOf(tapLog).some((e) => e.method === 'notifications/cancelled'), 5000, 'the cancellation at the server');
    const cancel = logOf(tapLog).find((e) => e.method === 'notifications/cancelled')!;
    expect(cancel.params).toMatchObject({ requestId: forwarded.id });

    const journaled = async () => (await broker.call('history', { server: 'everything' })).calls.find((c) => c.outcome === 'cancelled');
    await waitFor(async () => (await journaled()) !== undefined, 5000, 'the journal entry');
    const entry = (await journaled())!;
    expect(entry).toMatchObject({ tool: 'trigger-long-running-operation', decision: 'allow', outcome: 'cancelled' });
    expect(entry.detail).toMatch(/stopped by E-Stop/);
    await closeKilling(w, forwarded.pid);
  });
});

describe('a server that ignores cancellation', () => {
  test('is killed with its whole tree after the grace, and restarted on release: the next call works', async () => {
    await broker.call('settings.set', { key: 'estop-grace-seconds', value: '1' });
    const log = join(home, 'stubborn.log');
    const w = await connectWrapped({ home, server: 'stubborn', command: process.execPath, args: [STUBBORN], env: { FIXTURE_LOG: log } });
    const first = logOf(log).find((e) => e.started)!;
    const call = w.client.callTool({ name: 'work', arguments: {} });
    await waitFor(() => logOf(log).some((e) => e.method === 'tools/call'), 5000, 'the call at the server');

    // taken before the command: the wrapper starts the grace only once the command has reached it
    const pressedAt = Date.now();
    await broker.call('estop', { on: true });
    const result = await call;
    expect(decisionOf(result)).toMatchObject({ decidedBy: 'estop', sent: true });
    await waitFor(() => logOf(log).some((e) => e.method === 'notifications/cancelled'), 5000, 'the cancellation at the server');

    // SIGTERM after the grace (ignored), then SIGKILL: the server and the process it started are gone
    await waitFor(() => !processAlive(first.pid) && !processAlive(first.child as number), 10_000, 'the server tree to be killed');
    const term = logOf(log).find((e) => e.signal === 'SIGTERM');
    expect(term!.at - pressedAt).toBeGreaterThanOrEqual(990);
    expect(w.stderr()).toMatch(/terminating the MCP server "stubborn"/);

    // while it is down: a call is refused, any other request gets an error at once
    const refused = await w.client.callTool({ name: 'echo', arguments: { text: 'down' } });
    expect(decisionOf(refused)).toMatchObject({ decidedBy: 'estop' });
    await expect(w.client.listTools()).rejects.toThrow(/stopped by Airlock's E-Stop/);

    await broker.call('estop', { on: false });
    const again = await w.client.callTool({ name: 'echo', arguments: { text: 'back' } });
    expect(again.isError).toBeFalsy();
    const second = logOf(log).filter((e) => e.started).at(-1)!;
    expect(second.pid).not.toBe(first.pid);
    expect(textOf(again)).toBe(`echo from ${second.pid}: back`);
    // the new process was initialized with the client's own initialize, and told the client is initialized
    const inits = logOf(log).filter((e) => e.method === 'initialize');
    expect(inits).toHaveLength(2);
    expect(inits[1]!.params).toEqual(inits[0]!.params);
    expect(logOf(log).some((e) => e.pid === second.pid && e.method === 'notifications/initialized')).toBe(true);
    expect(w.stderr()).toMatch(/restarted after E-Stop/);
    await closeKilling(w, second.pid);
  });

  test('one that comes back with other capabilities is not given back: the client is told to restart it', async () => {
    await broker.call('settings.set', { key: 'estop-grace-seconds', value: '0' });
    const log = join(home, 'varying.log');
    const starts = join(home, 'varying.starts');
    const w = await connectWrapped({ home, server: 'varying', command: process.execPath, args: [STUBBORN, '--starts', starts, '--vary'], env: { FIXTURE_LOG: log } });
    const notes: unknown[] = [];
    w.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notes.push(n.params));
    const first = logOf(log).find((e) => e.started)!;
    const call = w.client.callTool({ name: 'work', arguments: {} });
    await waitFor(() => logOf(log).some((e) => e.method === 'tools/call'), 5000, 'the call at the server');
    await broker.call('estop', { on: true });
    await call;
    await waitFor(() => !processAlive(first.pid), 10_000, 'the server to be killed');
    await broker.call('estop', { on: false });

    await waitFor(() => notes.length > 0, 10_000, 'the log notification');
    expect(notes[0]).toMatchObject({ level: 'error', data: expect.stringMatching(/could not be restarted \(the restarted server declares other capabilities.*restart it from your MCP client/) });
    const refused = await w.client.callTool({ name: 'echo', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/could not be restarted/);
    await expect(w.client.listTools()).rejects.toThrow(/could not be restarted/);
    // the second process was stopped too: nothing of the server is left running
    const second = logOf(log).filter((e) => e.started).at(-1)!;
    expect(second.pid).not.toBe(first.pid);
    await waitFor(() => !processAlive(second.pid) && !processAlive(second.child as number), 10_000, 'the restarted server to be stopped');
    await w.close();
  });
});

describe('the tripwire', () => {
  test('a burst of changing calls engages E-Stop, and the event says it was the tripwire and why', async () => {
    await broker.call('settings.set', { key: 'tripwire-calls', value: '5' });
    // the windows start afresh at an E-Stop: what the tests before ran (and the places of their wrappers, which
    // count as used when a wrapper leaves before it could give them back) is not counted against this burst
    await broker.call('estop', { on: true });
    await broker.call('estop', { on: false });
    try {
      const fx = fixture(home);
      const w = await connectWrapped({ home, server: 'fixture', command: fx.command, args: fx.args, env: fx.env });
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await w.client.callTool({ name: 'write_note', arguments: { text: `n${i}` } }));
      expect(results.slice(0, 5).map((r) => (r.isError ? JSON.stringify(decisionOf(r)) : 'ok'))).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
      // the sixth would pass the limit: it is held before the server, and refused as E-Stop engages
      expect(decisionOf(results[5])).toMatchObject({ decidedBy: 'estop' });
      expect(decisionOf(results[5])?.sent).not.toBe(true);
      expect(executedCalls(fx.log, 'write_note')).toHaveLength(5);
      const on = await untilBroker(
        home,
        (e) => e.type === 'estop-on',
        async (c) => (await c.call('events', { limit: 20 })).events.find((e) => e.type === 'estop-on' && (e.detail as { by?: unknown }).by === 'tripwire'),
        5000,
        'the tripwire',
      );
      expect(on.detail).toEqual({ by: 'tripwire', reason: '6 changing calls in 10 s' });
      expect((await cli(home, ['estop', 'status', '--json'])).stdout).toMatch(/"estop":\s*true/);
      expect((await cli(home, ['status'])).stdout).toMatch(/E-Stop: ON — every tool call is refused \(turned on by the tripwire: 6 changing calls in 10 s, \d+s ago\)/);
      const refused = await w.client.callTool({ name: 'write_note', arguments: { text: 'after' } });
      expect(decisionOf(refused)).toMatchObject({ decidedBy: 'estop' });
      await w.close();
    } finally {
      await broker.call('settings.set', { key: 'tripwire-calls', value: '30' });
    }
  });
});
