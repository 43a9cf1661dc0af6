/**
 * E-Stop, hard, in memory: running calls answered at once and cancelled at the server, the grace before the
 * server is terminated, what the client gets while it is down, and the restart that replays the client's
 * initialize, or says plainly why it cannot. The test plays client, server and broker, with a fake clock.
 */
import { describe, expect, test } from 'vitest';
import type { UpstreamControl } from '../../../proxy-core/src/wrap/estop.js';
import { allowAll, estopHarness, fakeProcess } from '../../helpers/estop.js';
import { Harness, settle, textOf } from '../../helpers/relay-harness.js';
import { FIRST_LISTING_GRACE_MS } from '../../../proxy-core/src/wrap/tool-listing.js';

const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'fx', version: '1' } };

/** E-Stop terminated the server, and its process is gone. */
async function terminated(o: { grace?: number; process?: UpstreamControl } = {}) {
  const r = await estopHarness(o);
  r.h.call(1, 'write_note');
  r.estop(true);
  await r.h.advance((o.grace ?? 2) * 1000);
  expect(r.proc.terminated).toBe(1);
  expect(r.h.relay.upstreamEnded('was killed by SIGTERM')).toBe(true);
  return r;
}

/** The replayed initialize the (new) server was sent, if any. */
const replayed = (h: Harness) => h.toUpstream.filter((m) => m.method === 'initialize' && String(m.id).startsWith('airlock-internal:restart:'));

describe('E-Stop stops the calls the server is running', () => {
  test('each is answered at once as stopped, the server is told to cancel it, the journal says so', async () => {
    const { h, estop } = await estopHarness();
    h.call(1, 'write_note', {}, { progressToken: 'p1' });
    h.call('two', 'delete_all');
    expect(h.forwardedCalls()).toHaveLength(2);
    estop(true);
    for (const id of [1, 'two']) {
      expect(h.answer(id).result).toMatchObject({ isError: true });
      expect(h.decision(id)).toMatchObject({ decision: 'deny', decidedBy: 'estop', reason: 'stopped by E-Stop', sent: true });
      expect(textOf(h.answer(id).result)).toMatch(/stopped .* E-Stop was pressed while it was running/);
    }
    const cancels = h.toUpstream.filter((m) => m.method === 'notifications/cancelled');
    expect(cancels.map((m) => (m.params as { requestId: unknown }).requestId)).toEqual([1, 'two']);
    for (const r of h.link.records()) {
      expect(r).toMatchObject({ decision: 'allow', outcome: 'cancelled' });
      expect(r.detail).toMatch(/stopped by E-Stop/);
    }
    // what the server says afterwards about those calls never reaches the client
    h.server({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p1', progress: 3 } });
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'late' }] } });
    expect(h.answers(1)).toHaveLength(1);
    expect(h.toClient.filter((m) => m.method === 'notifications/progress')).toHaveLength(0);
    expect(h.link.latest.get(h.link.records()[0]!.id)!.detail).toMatch(/the server answered afterwards \(ok\)/);
  });

  test('a call still waiting for approval is denied as before; a read the server already answered is untouched', async () => {
    const { h, estop } = await estopHarness();
    h.client({ jsonrpc: '2.0', id: 'r', method: 'resources/read', params: { uri: 'x' } });
    h.server({ jsonrpc: '2.0', id: 'r', result: { contents: [] } });
    estop(true);
    expect(h.answers('r')).toHaveLength(1);
    expect(h.toUpstream.some((m) => m.method === 'notifications/cancelled')).toBe(false);
  });
});

describe('the grace, then the process tree', () => {
  test('a server that answers its stopped calls within the grace keeps running', async () => {
    const { h, proc, estop } = await estopHarness({ grace: 2 });
    h.call(1, 'write_note');
    estop(true);
    await h.advance(1500);
    h.server({ jsonrpc: '2.0', id: 1, error: { code: -32800, message: 'cancelled' } });
    await h.advance(5000);
    expect(proc.terminated).toBe(0);
    expect(h.relay.upstreamState).toBe('up');
  });

  test('one that has not answered when the grace (a setting, pushed with the policy) is over is terminated', async () => {
    const { h, proc, estop } = await estopHarness({ grace: 3 });
    h.call(1, 'write_note');
    estop(true);
    await h.advance(2999);
    expect(proc.terminated).toBe(0);
    await h.advance(1);
    expect(proc.terminated).toBe(1);
    expect(h.relay.upstreamState).toBe('stopping');
    expect(h.logs.join('\n')).toMatch(/terminating the MCP server "fx" .*had not stopped 1 call/);
    // the stopped call's record says the server was stopped before answering
    expect(h.link.records()[0]!.detail).toMatch(/stopped by E-Stop.*stopped by Airlock's E-Stop before answering/);
    expect(h.answers(1)).toHaveLength(1);
  });

  test('a call stopped later gets its own full grace', async () => {
    const { h, proc, estop } = await estopHarness({ grace: 2 });
    h.call(1, 'write_note');
    estop(true);
    await h.advance(1000);
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    estop(false);
    h.call(2, 'write_note');
    estop(true);
    await h.advance(1500);
    expect(proc.terminated).toBe(0);
    await h.advance(500);
    expect(proc.terminated).toBe(1);
  });

  test('a server that ends by itself is not E-Stop\'s: the wrapper ends with it', async () => {
    const { h } = await estopHarness();
    expect(h.relay.upstreamEnded('exited with code 3')).toBe(false);
  });
});

describe('while the server is down', () => {
  test('a request it was sent is answered with an error when it is terminated; new ones get one at once; calls are refused and journaled', async () => {
    const { h, proc, estop } = await estopHarness();
    h.call(1, 'write_note');
    h.client({ jsonrpc: '2.0', id: 'res', method: 'resources/read', params: { uri: 'x' } });
    estop(true);
    await h.advance(2000);
    expect(proc.terminated).toBe(1);
    expect(h.answer('res')).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/stopped by Airlock's E-Stop before answering/) } });
    expect(h.relay.upstreamEnded('was killed by SIGTERM')).toBe(true);
    expect(h.relay.upstreamState).toBe('down');

    h.client({ jsonrpc: '2.0', id: 'p', method: 'prompts/list' });
    expect(h.answer('p')).toMatchObject({ error: { message: expect.stringMatching(/stopped by Airlock's E-Stop; it is started again when E-Stop is released/) } });
    h.call(2, 'echo');
    expect(h.decision(2)).toMatchObject({ decidedBy: 'estop' });
    expect(h.link.records().at(-1)).toMatchObject({ tool: 'echo', decidedBy: 'estop', outcome: 'not-run' });
    // nothing was written to the dead process after it was terminated
    const sent = h.toUpstream.length;
    h.client({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect(h.toUpstream).toHaveLength(sent);
  });

  test('what a dying process still writes is not relayed', async () => {
    const { h } = await terminated();
    const before = h.toClient.length;
    h.server({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'still here' } });
    expect(h.toClient).toHaveLength(before);
  });
});

describe('on release, the server is started again', () => {
  test("the client's initialize is replayed and its answer consumed; the tools are listed again; calls go on", async () => {
    const { h, proc, estop } = await terminated();
    const clientInit = h.toUpstream.find((m) => m.method === 'initialize' && m.id === 'init')!;
    const clientLines = h.toClient.length;
    estop(false);
    await settle();
    expect(proc.respawned).toBe(1);
    expect(h.relay.upstreamState).toBe('restarting');
    const [replay] = replayed(h);
    expect(replay!.params).toEqual(clientInit.params);
    // what the client sends meanwhile waits for the restarted server
    h.call(5, 'write_note');
    h.client({ jsonrpc: '2.0', id: 'res', method: 'resources/list' });
    expect(h.answers(5)).toHaveLength(0);
    const listedBefore = h.toUpstream.filter((m) => m.method === 'tools/list').length;
    h.server({ jsonrpc: '2.0', id: replay!.id as string, result: INIT_RESULT });
    await settle();
    expect(h.relay.upstreamState).toBe('up');
    expect(h.toClient.slice(clientLines).some((m) => m.id === replay!.id)).toBe(false);
    const after = h.toUpstream.slice(h.toUpstream.indexOf(replay!) + 1).map((m) => m.method);
    expect(after[0]).toBe('notifications/initialized');
    expect(h.toUpstream.filter((m) => m.method === 'tools/list').length).toBeGreaterThan(listedBefore);
    // the held call is decided on the fresh listing, so it reaches the new server after that listing
    const call = h.toUpstream.findIndex((m) => m.method === 'tools/call' && m.id === 5);
    const lastListing = h.toUpstream.map((m) => m.method).lastIndexOf('tools/list');
    expect(call).toBeGreaterThan(lastListing);
    expect(h.toUpstream.some((m) => m.id === 'res' && m.method === 'resources/list')).toBe(true);
    h.server({ jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: 'ran' }] } });
    expect(textOf(h.answer(5).result)).toBe('ran');
    expect(h.logs.join('\n')).toMatch(/restarted after E-Stop/);
  });

  test('released before the process is gone: it is started again as soon as it is', async () => {
    const { h, proc, estop } = await estopHarness();
    h.call(1, 'write_note');
    estop(true);
    await h.advance(2000);
    estop(false);
    await settle();
    expect(proc.respawned).toBe(0);
    h.relay.upstreamEnded('was killed by SIGTERM');
    await settle();
    expect(proc.respawned).toBe(1);
  });

  test.each([
    ['another protocol version', { ...INIT_RESULT, protocolVersion: '2024-11-05' }, /speaks protocol "2024-11-05", not "2025-06-18"/],
    ['other capabilities', { ...INIT_RESULT, capabilities: { tools: {}, prompts: {} } }, /declares other capabilities/],
  ])('a restarted server with %s is not given to the client: it is told plainly', async (_what, result, why) => {
    const { h, proc, estop } = await terminated();
    estop(false);
    await settle();
    h.call(7, 'write_note');
    h.server({ jsonrpc: '2.0', id: replayed(h)[0]!.id as string, result });
    await settle();
    expect(h.relay.upstreamState).toBe('gone');
    expect(proc.terminated).toBe(2);
    const note = h.toClient.find((m) => m.method === 'notifications/message')!;
    expect(note.params).toMatchObject({ level: 'error', logger: 'airlock/estop' });
    expect(String((note.params as { data: string }).data)).toMatch(why);
    expect(String((note.params as { data: string }).data)).toMatch(/restart it from your MCP client/);
    expect(h.decision(7)).toMatchObject({ decidedBy: 'error' });
    expect(textOf(h.answer(7).result)).toMatch(/could not be restarted/);
    h.client({ jsonrpc: '2.0', id: 'q', method: 'resources/list' });
    expect(h.answer('q')).toMatchObject({ error: { message: expect.stringMatching(/could not be restarted .*restart it from your MCP client/) } });
    expect(h.toUpstream.filter((m) => m.method === 'tools/call' && m.id === 7)).toHaveLength(0);
  });

  test('a server that cannot be started again (a remote one) is not restarted; the client is told', async () => {
    const { h, estop } = await terminated({ process: fakeProcess('it is a remote server (--url), which Airlock does not start') });
    estop(false);
    await settle();
    expect(h.relay.upstreamState).toBe('gone');
    expect(replayed(h)).toHaveLength(0);
    expect(JSON.stringify(h.toClient.at(-1))).toMatch(/remote server/);
  });

  test('a restarted server that does not answer initialize in time is given up on', async () => {
    const { h, proc, estop } = await terminated();
    estop(false);
    await settle();
    await h.advance(5000);
    expect(h.relay.upstreamState).toBe('gone');
    expect(proc.terminated).toBe(2);
    expect(h.logs.join('\n')).toMatch(/did not answer initialize within 5 s/);
  });

  test('a restarted server that exits during the replay is given up on', async () => {
    const { h, estop } = await terminated();
    estop(false);
    await settle();
    expect(h.relay.upstreamEnded('exited with code 1')).toBe(true);
    expect(h.relay.upstreamState).toBe('gone');
    expect(h.logs.join('\n')).toMatch(/exited with code 1 while it was being restarted/);
  });

  test("without the client's initialize, nothing is replayed", async () => {
    const proc = fakeProcess();
    const h = new Harness({ policy: allowAll, upstream: proc });
    // the only initialize failed: there is no session to replay (the server still listed its tools)
    h.client({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    h.server({ jsonrpc: '2.0', id: 'init', error: { code: -32603, message: 'not now' } });
    h.client({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await h.advance(FIRST_LISTING_GRACE_MS);
    h.call(1, 'write_note');
    expect(h.forwardedCalls()).toHaveLength(1);
    h.link.push({ estop: true });
    await h.advance(2000);
    h.relay.upstreamEnded('was killed by SIGTERM');
    h.link.push({ estop: false });
    await settle();
    expect(proc.respawned).toBe(0);
    expect(h.relay.upstreamState).toBe('gone');
    expect(h.logs.join('\n')).toMatch(/initialize was not seen/);
  });
});
