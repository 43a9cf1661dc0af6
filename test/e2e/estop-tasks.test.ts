/**
 * E-Stop and MCP tasks (2025-11-25), end to end: a tools/call made as a task is answered at once with a task
 * handle while the server works on; it is a running call until the task ends. E-Stop sends it tasks/cancel and
 * terminates a server that does not let go within the grace; the journal waits for the task's real outcome.
 * And a call made right after release is never ended by the stop before it. Ground truth is what the fixture
 * server logged (each step it ran, each message it read, with its pid). One broker for the file.
 */
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { connectWrapped, decisionOf, executed, processAlive, ROOT, textOf, waitFor, type Wrapped } from '../helpers/airlock.js';
import { brokerForFile } from '../helpers/estop.js';

const TASKS = join(ROOT, 'test', 'fixtures', 'servers', 'task-server.mjs');

let home: string;
let broker: BrokerClient;
brokerForFile({ allow: ['*'] }, (shared) => ({ home, broker } = shared));

type Entry = Record<string, unknown> & { pid: number; at: number };
const logOf = (path: string) => executed(path) as Entry[];
const steps = (path: string, taskId?: string) => logOf(path).filter((e) => typeof e.step === 'number' && (taskId === undefined || e.taskId === taskId));

let n = 0;
async function server(flags: string[] = []): Promise<{ w: Wrapped; log: string; name: string }> {
  const name = `tasks${++n}`;
  const log = join(home, `${name}.log`);
  const w = await connectWrapped({ home, server: name, command: process.execPath, args: [TASKS, ...flags], env: { FIXTURE_LOG: log } }, { tasks: {} });
  return { w, log, name };
}

/** A tools/call made as a task: the handle the server answered with. */
async function startTask(w: Wrapped, args: Record<string, unknown>) {
  const created = await w.client.request({ method: 'tools/call', params: { name: 'job', arguments: args, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
  return created.task;
}

async function journalOf(name: string) {
  return (await broker.call('history', { server: name })).calls.find((c) => c.tool === 'job');
}

describe('the journal of a task call', () => {
  test('stays running while the task works, then records its real outcome (the wrapper watches; the client does not poll)', async () => {
    const { w, log, name } = await server();
    const task = await startTask(w, { steps: 15 });
    expect(task.status).toBe('working');
    // the server is running it: the call is not over, whatever the handle's answer looked like
    await waitFor(() => steps(log, task.taskId).length >= 3, 10_000, 'steps of the task');
    expect((await journalOf(name))?.outcome).toBe('pending');
    await waitFor(() => logOf(log).some((e) => e.taskId === task.taskId && e.status === 'completed'), 10_000, 'the task to complete');
    await waitFor(async () => (await journalOf(name))?.outcome !== 'pending', 10_000, 'the final journal entry');
    const entry = (await journalOf(name))!;
    expect(entry.outcome).toBe('ok');
    expect(entry.result).toMatch(/done after 15 steps/);
    // the client never asked about the task: the wrapper did, under its own ids
    expect(logOf(log).some((e) => e.method === 'tasks/get' && String(e.id).startsWith('airlock-internal:'))).toBe(true);
    await w.close();
  });

  test('a task that fails is journaled as a tool error, not as the "ok" of its handle', async () => {
    const { w, log, name } = await server();
    const task = await startTask(w, { steps: 3, fail: true });
    await waitFor(() => logOf(log).some((e) => e.taskId === task.taskId && e.status === 'failed'), 10_000, 'the task to fail');
    await waitFor(async () => (await journalOf(name))?.outcome !== 'pending', 10_000, 'the final journal entry');
    expect((await journalOf(name))!.outcome).toBe('tool-error');
    await w.close();
  });
});

describe('E-Stop and a running task', () => {
  test('the server is sent tasks/cancel for it, no step runs after the cancellation, the journal says cancelled', async () => {
    const { w, log, name } = await server();
    const task = await startTask(w, {});
    await waitFor(() => steps(log, task.taskId).length >= 3, 10_000, 'steps of the task');
    await broker.call('estop', { on: true });
    await waitFor(() => logOf(log).some((e) => e.method === 'tasks/cancel'), 5000, 'tasks/cancel at the server');
    const cancel = logOf(log).find((e) => e.method === 'tasks/cancel')!;
    expect(cancel.params).toMatchObject({ taskId: task.taskId });
    const cancelled = logOf(log).find((e) => e.taskId === task.taskId && e.status === 'cancelled')!;
    expect(steps(log, task.taskId).filter((s) => s.at > cancelled.at)).toHaveLength(0);
    await waitFor(async () => (await journalOf(name))?.outcome !== 'pending', 10_000, 'the final journal entry');
    const entry = (await journalOf(name))!;
    expect(entry.outcome).toBe('cancelled');
    expect(entry.detail).toMatch(/stopped by E-Stop/);
    // the server was not terminated: it let go of the task within the grace
    expect(processAlive(cancel.pid)).toBe(true);
    await w.close();
  });

  test('a server that keeps working on a cancelled task is terminated after the grace: its steps end', async () => {
    await broker.call('settings.set', { key: 'estop-grace-seconds', value: '1' });
    const { w, log, name } = await server(['--ignore-cancel']);
    const task = await startTask(w, {});
    await waitFor(() => steps(log, task.taskId).length >= 3, 10_000, 'steps of the task');
    const pid = steps(log)[0]!.pid;
    await broker.call('estop', { on: true });
    const pressedAt = Date.now();
    await waitFor(() => logOf(log).some((e) => e.method === 'tasks/cancel'), 5000, 'tasks/cancel at the server');
    await waitFor(() => !processAlive(pid), 10_000, 'the server to be terminated');
    // it ran on through the grace (it ignored the cancellation), and not a step after it was terminated
    const last = steps(log).at(-1)!;
    expect(last.at - pressedAt).toBeGreaterThanOrEqual(800);
    expect(w.stderr()).toMatch(/terminating the MCP server/);
    await waitFor(async () => (await journalOf(name))?.outcome !== 'pending', 10_000, 'the final journal entry');
    expect((await journalOf(name))!.detail).toMatch(/stopped by E-Stop.*before the task ended/);
    await w.close();
  });
});

describe('release', () => {
  test('a call made right after release is not ended by the termination the stop before it still had due', async () => {
    await broker.call('settings.set', { key: 'estop-grace-seconds', value: '1' });
    const { w, log } = await server();
    // a plain (not a task) job, which this server does not stop when it is cancelled
    const stuck = w.client.callTool({ name: 'job', arguments: {} });
    await waitFor(() => steps(log).length >= 2, 10_000, 'the job at the server');
    const first = logOf(log).find((e) => e.started)!;
    await broker.call('estop', { on: true });
    expect(decisionOf(await stuck)).toMatchObject({ decidedBy: 'estop', sent: true });
    await broker.call('estop', { on: false });
    // made after release, and longer than the grace the stopped call still had
    const result = await w.client.callTool({ name: 'slow', arguments: { ms: 2500 } });
    expect(result.isError).toBeFalsy();
    const done = logOf(log).find((e) => e.done === 'slow')!;
    expect(textOf(result)).toBe(`slow from ${done.pid} after 2500 ms`);
    // the process that ignored the stopped call was terminated, and the call ran on the one started after it
    expect(done.pid).not.toBe(first.pid);
    expect(processAlive(first.pid)).toBe(false);
    await w.close();
  });

  test('released while the server is being terminated (it ignores SIGTERM): the next call waits for the restart, it is not refused', async () => {
    await broker.call('settings.set', { key: 'estop-grace-seconds', value: '0' });
    const { w, log } = await server(['--ignore-term']);
    const stuck = w.client.callTool({ name: 'job', arguments: {} });
    await waitFor(() => steps(log).length >= 1, 10_000, 'the job at the server');
    const first = logOf(log).find((e) => e.started)!;
    await broker.call('estop', { on: true });
    await stuck;
    // SIGTERM came and was ignored: the process is on its way out (SIGKILL follows), not gone
    await waitFor(() => logOf(log).some((e) => e.signal === 'SIGTERM'), 10_000, 'SIGTERM at the server');
    await broker.call('estop', { on: false });
    const result = await w.client.callTool({ name: 'slow', arguments: { ms: 10 } });
    expect(result.isError).toBeFalsy();
    const done = logOf(log).find((e) => e.done === 'slow')!;
    expect(done.pid).not.toBe(first.pid);
    expect(textOf(result)).toBe(`slow from ${done.pid} after 10 ms`);
    // it ignores SIGTERM (the point): no polite stop for it
    process.kill(done.pid, 'SIGKILL');
    await w.close();
  });
});
