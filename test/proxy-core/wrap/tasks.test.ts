/**
 * E-Stop and calls that run as MCP tasks, in memory; and what the client sends right after release. The test
 * plays client, server and broker, with a fake clock: a task call stays running (journaled pending) until its
 * task ends and is journaled with its real outcome; E-Stop sends tasks/cancel and terminates a server that
 * keeps the task after the grace; a call made after release waits while the stop before it is not over, and
 * reaches the server that is left, never one terminated under it.
 */
import { describe, expect, test } from 'vitest';
import { allowAll, estopHarness } from '../../helpers/estop.js';
import { Harness, settle, textOf } from '../../helpers/relay-harness.js';

const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'fx', version: '1' } };
const own = (id: unknown) => typeof id === 'string' && id.startsWith('airlock-internal:');

/** A started harness whose E-Stop always names its grace: 2 seconds unless given. */
const running = (grace = 2) => estopHarness({ grace });

const task = (taskId: string, status = 'working') => ({ taskId, status, ttl: 60_000, createdAt: '2026-01-01T00:00:00Z', lastUpdatedAt: '2026-01-01T00:00:00Z', pollInterval: 500 });

/** A tools/call made as a task, answered by the server with its handle. */
function taskCall(h: Harness, id: number, taskId: string): void {
  h.client({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'write_note', arguments: {}, task: { ttl: 60_000 } } });
  h.server({ jsonrpc: '2.0', id, result: { task: task(taskId) } });
}

/** The wrapper's own requests to the server with this method. */
const ownSent = (h: Harness, method: string) => h.toUpstream.filter((m) => m.method === method && own(m.id));
const record = (h: Harness) => h.link.records().at(-1)!;

describe('a task call is running until its task ends', () => {
  test('journaled pending with the handle relayed; the wrapper polls tasks/get, reads the payload, journals the real outcome', async () => {
    const { h } = await running();
    taskCall(h, 1, 't1');
    expect(h.answer(1).result).toMatchObject({ task: { taskId: 't1', status: 'working' } });
    expect(record(h)).toMatchObject({ outcome: 'pending' });
    expect(record(h).result).toBeUndefined();
    // heard of lately: not polled
    await h.advance(300);
    h.server({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: task('t1') });
    await h.advance(300);
    expect(ownSent(h, 'tasks/get')).toHaveLength(0);
    await h.advance(500);
    const [get] = ownSent(h, 'tasks/get');
    expect(get!.params).toEqual({ taskId: 't1' });
    h.server({ jsonrpc: '2.0', id: get!.id as string, result: task('t1', 'completed') });
    // its answer is the wrapper's, never the client's
    expect(h.toClient.some((m) => m.id === get!.id)).toBe(false);
    expect(record(h).outcome).toBe('pending');
    const [read] = ownSent(h, 'tasks/result');
    h.server({ jsonrpc: '2.0', id: read!.id as string, result: { content: [{ type: 'text', text: 'no space left' }], isError: true } });
    expect(record(h)).toMatchObject({ outcome: 'tool-error', result: expect.stringMatching(/no space left/) });
    expect(record(h).detail).toMatch(/runs as task "t1".*the task ended completed/);
    // ended: no more polling
    const polls = ownSent(h, 'tasks/get').length;
    await h.advance(10_000);
    expect(ownSent(h, 'tasks/get')).toHaveLength(polls);
  });

  test("the client's own tasks/result is heard on its way back: relayed to the client, and the outcome journaled", async () => {
    const { h } = await running();
    taskCall(h, 1, 't1');
    h.client({ jsonrpc: '2.0', id: 'r', method: 'tasks/result', params: { taskId: 't1' } });
    h.server({ jsonrpc: '2.0', id: 'r', result: { content: [{ type: 'text', text: 'done' }] } });
    expect(textOf(h.answer('r').result)).toBe('done');
    expect(record(h)).toMatchObject({ outcome: 'ok', result: expect.stringMatching(/done/) });
  });

  test('a task the server cancelled is journaled cancelled', async () => {
    const { h } = await running();
    taskCall(h, 1, 't1');
    h.server({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: { ...task('t1', 'cancelled'), statusMessage: 'gave up' } });
    expect(record(h)).toMatchObject({ outcome: 'cancelled', detail: expect.stringMatching(/the task ended cancelled: gave up/) });
  });
});

describe('a server that says nothing useful about its task', () => {
  test('tasks/get refused: the call stays running (polled less often), and E-Stop still terminates the server after the grace', async () => {
    const { h, proc, estop } = await running();
    taskCall(h, 1, 't1');
    await h.advance(500);
    const [get] = ownSent(h, 'tasks/get');
    h.server({ jsonrpc: '2.0', id: get!.id as string, error: { code: -32601, message: 'no' } });
    h.server({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: { taskId: 't1', status: 42 } });
    h.server({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: { taskId: { x: 1 }, status: 'completed' } });
    await h.advance(1000);
    expect(ownSent(h, 'tasks/get')).toHaveLength(1);
    expect(record(h).outcome).toBe('pending');
    estop(true);
    const [cancel] = ownSent(h, 'tasks/cancel');
    h.server({ jsonrpc: '2.0', id: cancel!.id as string, error: { code: -32601, message: 'no' } });
    await h.advance(2000);
    expect(proc.terminated).toBe(1);
  });

  test('a handle whose task id is not a string is not a task: an ordinary answer', async () => {
    const { h } = await running();
    h.client({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_note', arguments: {}, task: {} } });
    h.server({ jsonrpc: '2.0', id: 1, result: { task: { taskId: 7, status: 'working' } } });
    expect(h.answers(1)).toHaveLength(1);
    expect(record(h).outcome).toBe('ok');
    await h.advance(5000);
    expect(ownSent(h, 'tasks/get')).toHaveLength(0);
  });
});

describe('a task is a running call for the read-only check too', () => {
  test('a resource changing while a read-only task runs withdraws its claim', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    h.client({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {}, task: {} } });
    h.server({ jsonrpc: '2.0', id: 1, result: { task: task('t1') } });
    h.server({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///x' } });
    expect(h.logs.join('\n')).toMatch(/read-only claim of "echo" withdrawn: the server sent notifications\/resources\/updated \(file:\/\/\/x\) while "echo" was running/);
  });
});

describe('E-Stop stops a running task', () => {
  test('tasks/cancel is sent for it; a server that cancels it in the grace keeps running', async () => {
    const { h, proc, estop } = await running();
    taskCall(h, 1, 't1');
    estop(true);
    const [cancel] = ownSent(h, 'tasks/cancel');
    expect(cancel!.params).toEqual({ taskId: 't1' });
    await h.advance(1000);
    h.server({ jsonrpc: '2.0', id: cancel!.id as string, result: task('t1', 'cancelled') });
    await h.advance(5000);
    expect(proc.terminated).toBe(0);
    expect(record(h)).toMatchObject({ outcome: 'cancelled', detail: expect.stringMatching(/ended while running \(estop: stopped by E-Stop\)/) });
  });

  test('a server whose task is still working when the grace is over is terminated; the task is journaled as ended by it', async () => {
    const { h, proc, estop } = await running(3);
    taskCall(h, 1, 't1');
    estop(true);
    const [cancel] = ownSent(h, 'tasks/cancel');
    // it says it heard, and works on
    h.server({ jsonrpc: '2.0', id: cancel!.id as string, result: task('t1', 'working') });
    await h.advance(2999);
    expect(proc.terminated).toBe(0);
    await h.advance(1);
    expect(proc.terminated).toBe(1);
    expect(h.logs.join('\n')).toMatch(/had not stopped 1 call/);
    expect(record(h)).toMatchObject({ outcome: 'cancelled', detail: expect.stringMatching(/stopped by E-Stop.*before the task ended/) });
    // the client, which holds the handle, is told the task ended (its server can no longer say so)
    const note = h.toClient.find((m) => m.method === 'notifications/tasks/status')!;
    expect(note.params).toMatchObject({ taskId: 't1', status: 'cancelled', ttl: 60_000, createdAt: '2026-01-01T00:00:00Z' });
    expect(String((note.params as { statusMessage: string }).statusMessage)).toMatch(/stopped by Airlock's E-Stop before the task ended/);
  });

  test('a call E-Stop ended before the server answered it with a task: the task is cancelled too, and the grace waits for it', async () => {
    const { h, proc, estop } = await running();
    h.client({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_note', arguments: {}, task: {} } });
    estop(true);
    expect(h.decision(1)).toMatchObject({ decidedBy: 'estop', sent: true });
    h.server({ jsonrpc: '2.0', id: 1, result: { task: task('late') } });
    expect(ownSent(h, 'tasks/cancel').map((m) => m.params)).toEqual([{ taskId: 'late' }]);
    await h.advance(2000);
    expect(proc.terminated).toBe(1);
  });
});

describe('E-Stop and a task that ends as it is stopped', () => {
  test('tasks/cancel refused (the task had just completed): the wrapper asks how it stands, and the server is not terminated', async () => {
    const { h, proc, estop } = await running();
    taskCall(h, 1, 't1');
    estop(true);
    const [cancel] = ownSent(h, 'tasks/cancel');
    h.server({ jsonrpc: '2.0', id: cancel!.id as string, error: { code: -32602, message: 'the task is already completed' } });
    const [get] = ownSent(h, 'tasks/get');
    h.server({ jsonrpc: '2.0', id: get!.id as string, result: task('t1', 'completed') });
    const [read] = ownSent(h, 'tasks/result');
    h.server({ jsonrpc: '2.0', id: read!.id as string, result: { content: [{ type: 'text', text: 'done' }] } });
    await h.advance(5000);
    expect(proc.terminated).toBe(0);
    expect(record(h)).toMatchObject({ outcome: 'ok', detail: expect.stringMatching(/ended while running.*the task ended completed/) });
  });
});

describe('a call made after release', () => {
  test('waits while the server still runs a stopped call in its grace; it goes on to the same server once that is let go', async () => {
    const { h, proc, estop } = await running();
    h.call(1, 'write_note');
    estop(true);
    estop(false);
    h.call(2, 'write_note');
    expect(h.forwardedCalls().map((m) => m.id)).toEqual([1]);
    expect(h.answers(2)).toHaveLength(0);
    await h.advance(1000);
    h.server({ jsonrpc: '2.0', id: 1, error: { code: -32800, message: 'cancelled' } });
    expect(h.forwardedCalls().map((m) => m.id)).toEqual([1, 2]);
    await h.advance(5000);
    expect(proc.terminated).toBe(0);
    h.server({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'ran' }] } });
    expect(textOf(h.answer(2).result)).toBe('ran');
  });

  test('a server that does not let go is terminated with no new call in it; the call goes to the restarted server', async () => {
    const { h, proc, estop } = await running();
    h.call(1, 'write_note');
    estop(true);
    estop(false);
    h.call(2, 'write_note');
    await h.advance(2000);
    expect(proc.terminated).toBe(1);
    expect(h.answers(2)).toHaveLength(0);
    h.relay.upstreamEnded('was killed by SIGTERM');
    await settle();
    expect(proc.respawned).toBe(1);
    const replay = h.toUpstream.find((m) => m.method === 'initialize' && own(m.id))!;
    const sentBefore = h.toUpstream.indexOf(replay);
    expect(h.forwardedCalls().map((m) => m.id)).toEqual([1]);
    h.server({ jsonrpc: '2.0', id: replay.id as string, result: INIT_RESULT });
    await settle();
    const forwarded = h.toUpstream.findIndex((m) => m.method === 'tools/call' && m.id === 2);
    expect(forwarded).toBeGreaterThan(sentBefore);
    h.server({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'ran' }] } });
    expect(textOf(h.answer(2).result)).toBe('ran');
  });

  test('a long grace does not keep them waiting past what a client waits: the server is terminated sooner', async () => {
    const { h, proc, estop } = await running(600);
    h.call(1, 'write_note');
    estop(true);
    await h.advance(1000);
    estop(false);
    h.call(2, 'write_note');
    await h.advance(9999);
    expect(proc.terminated).toBe(0);
    await h.advance(1);
    expect(proc.terminated).toBe(1);
    expect(h.answers(2)).toHaveLength(0);
  });

  test('released while the terminated process is not gone yet: the call waits for the restart, it is not refused', async () => {
    const { h, proc, estop } = await running();
    h.call(1, 'write_note');
    estop(true);
    await h.advance(2000);
    expect(h.relay.upstreamState).toBe('stopping');
    estop(false);
    h.call(2, 'echo');
    expect(h.answers(2)).toHaveLength(0);
    h.relay.upstreamEnded('was killed by SIGKILL');
    await settle();
    expect(proc.respawned).toBe(1);
    const replay = h.toUpstream.find((m) => m.method === 'initialize' && own(m.id))!;
    h.server({ jsonrpc: '2.0', id: replay.id as string, result: INIT_RESULT });
    await settle();
    expect(h.forwardedCalls().map((m) => m.id)).toEqual([1, 2]);
  });

  test('E-Stop pressed again while a call waits: the call is refused, never sent', async () => {
    const { h, estop } = await running();
    h.call(1, 'write_note');
    estop(true);
    estop(false);
    h.call(2, 'write_note');
    estop(true);
    expect(h.decision(2)).toMatchObject({ decidedBy: 'estop' });
    expect(h.forwardedCalls().map((m) => m.id)).toEqual([1]);
  });
});
