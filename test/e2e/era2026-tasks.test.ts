/**
 * Tasks of the 2026-07-28 tasks extension (io.modelcontextprotocol/tasks) through `airlock wrap`: a tools/call the
 * server answers with a task handle (server-directed: the client never asked for one) is a call of that tool,
 * gated as one and running until the task ends; the wrapper follows it with tasks/get (no tasks/result in this
 * era), journals the client's tasks/update input, and E-Stop cancels it. Ground truth is the fixture's log.
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cli, decisionOf, executed, ROOT, waitFor, waitForTicket } from '../helpers/airlock.js';
import { brokerForFile } from '../helpers/estop.js';
import { type RawWrapped, startRaw } from '../helpers/raw-client.js';

const ERA = join(ROOT, 'test', 'fixtures', 'servers', 'era2026-server.mjs');
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'era-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

let home: string;
let broker: BrokerClient;
brokerForFile({ allow: ['era-tasks'] }, (shared) => ({ home, broker } = shared));

type Entry = Record<string, unknown>;
let n = 0;
let ids = 100;

function start(name = 'era-tasks'): { w: RawWrapped; log: string } {
  const log = join(home, `${name}-${++n}.log`);
  return { w: startRaw(home, ['--name', name], process.execPath, [ERA], { FIXTURE_LOG: log }), log };
}

async function request(w: RawWrapped, method: string, params: Record<string, unknown> = {}): Promise<Entry> {
  const id = ++ids;
  w.send(JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } }));
  return w.next((m) => m.id === id, 10_000, `the answer to ${method}`);
}

const jobOf = async (server: string) => (await broker.call('history', { server, limit: 100 })).calls.find((c) => c.tool === 'job');
const ownTaskRequests = (log: string, method: string) => executed(log).filter((e) => e.method === method && String(e.id).startsWith('airlock-internal:'));

describe('a 2026 task', () => {
  test('runs as its call until it completes; the wrapper polls tasks/get with _meta and journals the result', async () => {
    const { w, log } = start();
    const created = (await request(w, 'tools/call', { name: 'job', arguments: { steps: 8 } })).result as Entry;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    await waitFor(async () => (await jobOf('era-tasks'))?.outcome === 'pending', 5000, 'the pending entry');
    await waitFor(async () => (await jobOf('era-tasks'))?.outcome === 'ok', 10_000, 'the task to end in the journal');
    const entry = (await jobOf('era-tasks'))!;
    expect(entry.result).toMatch(/done after 8 steps/);
    expect(entry.detail).toMatch(/runs as task/);
    const polls = ownTaskRequests(log, 'tasks/get');
    expect(polls.length).toBeGreaterThan(0);
    expect((polls[0]!.params as Entry)._meta).toMatchObject({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' });
    // there is no tasks/result in this era
    expect(executed(log).some((e) => e.method === 'tasks/result')).toBe(false);
    await w.close();
  });

  test("the client's tasks/update input is journaled with the call", async () => {
    const { w, log } = start();
    const created = (await request(w, 'tools/call', { name: 'job', arguments: { steps: 6, ask: true } })).result as { taskId: string };
    await waitFor(async () => ((await request(w, 'tasks/get', { taskId: created.taskId })).result as Entry).status === 'input_required', 8000, 'the task to ask');
    const ack = await request(w, 'tasks/update', { taskId: created.taskId, inputResponses: { more: { action: 'accept', content: { n: 2 } } } });
    expect((ack.result as Entry).resultType).toBe('complete');
    expect(executed(log).some((e) => e.updated !== undefined)).toBe(true);
    await waitFor(async () => (await jobOf('era-tasks'))?.outcome === 'ok', 10_000, 'the task to end');
    const entry = (await jobOf('era-tasks'))!;
    expect(entry.detail).toMatch(/the client gave the task input \(tasks\/update: "more"\)/);
    expect(entry.detail).toMatch(/the task asked for input \("more"\)/);
    // what the server finished with is the input the client gave it
    expect(entry.result).toContain('\\"n\\":2');
    await w.close();
  });

  test('E-Stop cancels a running task: tasks/cancel is sent, the journal says cancelled, the next call is refused', async () => {
    const { w, log } = start();
    const created = (await request(w, 'tools/call', { name: 'job', arguments: { steps: 600 } })).result as { taskId: string };
    await waitFor(() => executed(log).some((e) => e.taskId === created.taskId && e.step === 2), 8000, 'the task to run');
    await broker.call('estop', { on: true });
    await waitFor(() => ownTaskRequests(log, 'tasks/cancel').length > 0, 8000, 'tasks/cancel');
    await waitFor(async () => (await jobOf('era-tasks'))?.outcome === 'cancelled', 10_000, 'the cancelled entry');
    // the wrapper's own requests were 2026 requests: none was refused for want of _meta
    expect(executed(log).some((e) => e.missingMeta !== undefined)).toBe(false);
    const refused = await request(w, 'tools/call', { name: 'job', arguments: { steps: 1 } });
    expect(decisionOf(refused.result)).toMatchObject({ decision: 'deny', decidedBy: 'estop' });
    expect((refused.result as Entry).resultType).toBe('complete');
    await w.close();
  });

  test('a task handle the server gives unasked is a call of that tool, gated like one', async () => {
    const { w, log } = start('era-tasks-gated');
    const pending = request(w, 'tools/call', { name: 'job', arguments: { steps: 3 } });
    const ticket = await waitForTicket(home, 'job');
    // nothing ran while it was held
    expect(executed(log).some((e) => e.method === 'tools/call')).toBe(false);
    await cli(home, ['approve', ticket.id]);
    expect((await pending).result).toMatchObject({ resultType: 'task' });
    await waitFor(async () => (await jobOf('era-tasks-gated'))?.outcome === 'ok', 10_000, 'the task to end');
    expect((await jobOf('era-tasks-gated'))).toMatchObject({ decidedBy: 'user', ticketId: ticket.id });
    await w.close();
  });
});
