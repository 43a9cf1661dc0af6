/**
 * `airlock wrap` in front of a server of the 2026-07-28 revision, driven by a client speaking it (raw lines: no
 * initialize, `_meta` on every request). The era is the connection's, decided by what the client sends; a call is
 * gated as in 2025; a multi round-trip call (input_required, then a retry under a new id) is one call: asked once,
 * run once, journaled once with its rounds; E-Stop between rounds refuses the retry. Ground truth is the fixture
 * server's log of what it read and ran.
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cli, decisionOf, executed, fixture, processAlive, ROOT, waitFor, waitForTicket } from '../helpers/airlock.js';
import { brokerForFile } from '../helpers/estop.js';
import { type RawWrapped, startRaw } from '../helpers/raw-client.js';

const ERA = join(ROOT, 'test', 'fixtures', 'servers', 'era2026-server.mjs');
const VERSION = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'era-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

let home: string;
let broker: BrokerClient;
brokerForFile({ allow: ['era-allow'] }, (shared) => ({ home, broker } = shared));

type Entry = Record<string, unknown>;
let n = 0;

function start(name: string, env: Record<string, string> = {}): { w: RawWrapped; log: string } {
  const log = join(home, `${name}-${++n}.log`);
  const w = startRaw(home, ['--name', name, '--client', 'era-client'], process.execPath, [ERA], { FIXTURE_LOG: log, ...env });
  return { w, log };
}

let ids = 100;
/** A 2026 request (with `_meta`), and the wrapper's answer to it. */
async function request(w: RawWrapped, method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = META): Promise<Entry> {
  const id = ++ids;
  w.send(JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }));
  return w.next((m) => m.id === id, 10_000, `the answer to ${method}`);
}

const callsOf = (log: string, tool: string) => executed(log).filter((e) => e.method === 'tools/call' && (e.params as Entry | undefined)?.name === tool);
const historyOf = async (server: string, tool: string) => (await broker.call('history', { server, limit: 100 })).calls.filter((c) => c.tool === tool);

describe('a 2026-07-28 connection', () => {
  test('server/discover and tools/list pass through; the wrapper lists with the client\'s _meta; a refusal carries resultType', async () => {
    const { w, log } = start('era-deny');
    const discovered = await request(w, 'server/discover');
    expect(discovered.result).toMatchObject({ resultType: 'complete', supportedVersions: [VERSION] });
    const listed = await request(w, 'tools/list');
    const result = listed.result as { resultType: string; ttlMs: number; tools: { name: string }[] };
    expect(result.resultType).toBe('complete');
    expect(result.ttlMs).toBe(60_000);
    expect(result.tools.map((t) => t.name)).toContain('delete_note');
    // the wrapper's own listing is a 2026 request too: the server would have refused it without _meta
    const own = executed(log).filter((e) => e.method === 'tools/list' && String(e.id).startsWith('airlock-internal:'));
    expect(own.length).toBeGreaterThan(0);
    expect((own[0]!.params as Entry)._meta).toMatchObject(META);
    expect(executed(log).some((e) => e.missingMeta !== undefined)).toBe(false);
    // no rule for this server and a destructive tool: it asks; the person denies
    const pending = request(w, 'tools/call', { name: 'delete_note', arguments: { name: 'x' } });
    const ticket = await waitForTicket(home, 'delete_note');
    await cli(home, ['deny', ticket.id]);
    const denied = (await pending).result as Entry;
    expect(denied.resultType).toBe('complete');
    expect(denied.isError).toBe(true);
    expect(decisionOf(denied)).toMatchObject({ decision: 'deny', decidedBy: 'user' });
    expect(callsOf(log, 'delete_note')).toHaveLength(0);
    await w.close();
  });

  test('a request naming a protocol version nobody here speaks gets -32022, with what is supported', async () => {
    const { w, log } = start('era-version');
    const answer = await request(w, 'tools/list', {}, { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' });
    expect(answer.error).toMatchObject({ code: -32022, data: { supported: [VERSION], requested: '2099-01-01' } });
    expect(executed(log).some((e) => e.method === 'tools/list' && e.id === answer.id)).toBe(false);
    await w.close();
  });

  test('a call that asks for input is approved once, its retry (new id, requestState echoed) runs once, one journal entry', async () => {
    const { w, log } = start('era-mrtr');
    const first = request(w, 'tools/call', { name: 'delete_note', arguments: { name: 'a' } });
    const ticket = await waitForTicket(home, 'delete_note');
    expect((await cli(home, ['approve', ticket.id])).code).toBe(0);
    const asked = (await first).result as { resultType: string; requestState: string; inputRequests: Record<string, Entry> };
    expect(asked.resultType).toBe('input_required');
    expect(asked.inputRequests.confirm).toMatchObject({ method: 'elicitation/create' });
    // relayed as the server wrote it: the state is the server's bytes
    const line = w.lines.find((l) => l.includes('"input_required"'))!;
    expect(line).toContain(JSON.stringify(asked.requestState));

    const retried = await request(w, 'tools/call', {
      name: 'delete_note',
      arguments: { name: 'a' },
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'accept', content: { sure: true } } },
    });
    expect((retried.result as Entry).resultType).toBe('complete');
    expect(JSON.stringify(retried.result)).toContain('deleted a');
    // neither asked twice (no second ticket) nor a second call in the journal
    expect(await broker.call('pending', {})).toHaveLength(0);
    const calls = callsOf(log, 'delete_note');
    expect(calls).toHaveLength(2);
    expect((calls[1]!.params as Entry).requestState).toBe(asked.requestState);
    expect(executed(log).filter((e) => e.executed === true)).toHaveLength(1);
    await waitFor(async () => (await historyOf('era-mrtr', 'delete_note'))[0]?.outcome === 'ok', 8000, 'the journal entry to end');
    const history = await historyOf('era-mrtr', 'delete_note');
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ decision: 'allow', decidedBy: 'user', ticketId: ticket.id });
    expect(history[0]!.detail).toMatch(/round 1: the server asked for input: confirm \(elicitation\/create: "Delete note a\?"\)/);
    expect(history[0]!.detail).toMatch(/round 2: called again with input for "confirm" \(accept\)/);
    expect(history[0]!.result).toMatch(/deleted a/);
    await w.close();
  });

  test('E-Stop while a call waits for the client\'s input: the retry is refused, the server never runs it', async () => {
    const { w, log } = start('era-allow');
    const asked = (await request(w, 'tools/call', { name: 'delete_note', arguments: { name: 'b' } })).result as { resultType: string; requestState: string };
    expect(asked.resultType).toBe('input_required');
    await broker.call('estop', { on: true });
    await waitFor(async () => (await historyOf('era-allow', 'delete_note'))[0]?.outcome === 'cancelled', 8000, 'the waiting call to end');
    const retried = await request(w, 'tools/call', {
      name: 'delete_note',
      arguments: { name: 'b' },
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'accept', content: { sure: true } } },
    });
    expect((retried.result as Entry).resultType).toBe('complete');
    expect(decisionOf(retried.result)).toMatchObject({ decision: 'deny', decidedBy: 'estop' });
    expect(callsOf(log, 'delete_note')).toHaveLength(1);
    expect(executed(log).some((e) => e.executed === true)).toBe(false);
    await w.close();
  });

  test('a retry whose requestState is not the one the server gave is a new call, and asks', async () => {
    const { w, log } = start('era-forged');
    const first = request(w, 'tools/call', { name: 'delete_note', arguments: { name: 'c' } });
    const ticket = await waitForTicket(home, 'delete_note');
    await cli(home, ['approve', ticket.id]);
    const asked = (await first).result as { requestState: string };
    const forged = request(w, 'tools/call', { name: 'delete_note', arguments: { name: 'c' }, requestState: `${asked.requestState}x`, inputResponses: { confirm: { action: 'accept' } } });
    const second = await waitForTicket(home, 'delete_note');
    expect(second.id).not.toBe(ticket.id);
    expect(second.reasons.join(' ')).toMatch(/carries answers to input the server asked for \("confirm" \(accept\)\)/);
    await cli(home, ['deny', second.id]);
    expect(decisionOf((await forged).result)).toMatchObject({ decision: 'deny', decidedBy: 'user' });
    expect(callsOf(log, 'delete_note')).toHaveLength(1);
    await w.close();
  });

  test("the wrapper's listing is taken again when its ttlMs runs out, and a definition changed meanwhile holds the tool", async () => {
    const { w, log } = start('era-allow', { ERA_TTL_MS: '300', ERA_CHANGE_AFTER: '2' });
    await request(w, 'server/discover');
    const ran = await request(w, 'tools/call', { name: 'write_note', arguments: { name: 'n', text: 't' } });
    expect(decisionOf(ran.result)).toBeUndefined();
    expect(callsOf(log, 'write_note')).toHaveLength(1);
    // nobody asked for a listing: the ttl did, three times over (the third shows the changed description)
    await waitFor(() => executed(log).filter((e) => e.method === 'tools/list' && String(e.id).startsWith('airlock-internal:')).length >= 3, 8000, 'listings after the ttl');
    const held = request(w, 'tools/call', { name: 'write_note', arguments: { name: 'n', text: 'u' } });
    const ticket = await waitForTicket(home, 'write_note');
    expect(ticket.reasons.join(' ')).toMatch(/definition of "write_note" changed since it was pinned/);
    await cli(home, ['deny', ticket.id]);
    expect(decisionOf((await held).result)).toMatchObject({ decision: 'deny', decidedBy: 'user' });
    expect(callsOf(log, 'write_note')).toHaveLength(1);
    await w.close();
  });

  test('a client probing with server/discover before an older server falls back to initialize: a 2025 session, nothing sent early', async () => {
    const fx = fixture(home);
    const w = startRaw(home, ['--name', 'era-allow'], fx.command, fx.args, fx.env);
    const probe = await request(w, 'server/discover');
    expect(probe.error).toMatchObject({ code: -32601 });
    // the wrapper did not list the tools of a server nobody initialized
    expect(executed(fx.log).some((e) => e.method === 'tools/list')).toBe(false);
    await w.handshake();
    await waitFor(() => executed(fx.log).some((e) => e.method === 'tools/list'), 8000, "the wrapper's listing after initialize");
    w.send(JSON.stringify({ jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }));
    const answer = await w.next((m) => m.id === 'c1', 8000, 'the call');
    // a 2025 answer: the server's own bytes, without resultType
    expect((answer.result as Entry).resultType).toBeUndefined();
    expect(executed(fx.log).some((e) => e.tool === 'echo')).toBe(true);
    await w.close();
  });

  test('E-Stop terminates a server that runs on after the grace; on release it is started again with no handshake to replay', async () => {
    await broker.call('settings.set', { key: 'estop-grace-seconds', value: '1' });
    const { w, log } = start('era-allow');
    await request(w, 'server/discover');
    const first = executed(log).find((e) => e.started)!;
    // without the tasks extension the job is an ordinary call, answered when it ends (a minute from now)
    const running = request(w, 'tools/call', { name: 'job', arguments: { steps: 600 } });
    await waitFor(() => executed(log).some((e) => e.step === 2), 8000, 'the job to run');
    await broker.call('estop', { on: true });
    const stopped = (await running).result as Entry;
    expect(stopped.resultType).toBe('complete');
    expect(decisionOf(stopped)).toMatchObject({ decidedBy: 'estop', sent: true });
    await waitFor(() => !processAlive(first.pid as number), 10_000, 'the server to be terminated');
    await broker.call('estop', { on: false });
    await waitFor(() => executed(log).filter((e) => e.started).length === 2, 10_000, 'the server to be started again');
    const again = await request(w, 'tools/call', { name: 'write_note', arguments: { name: 'after', text: 't' } });
    expect(decisionOf(again.result)).toBeUndefined();
    const second = executed(log).filter((e) => e.started).at(-1)!;
    expect(executed(log).some((e) => e.pid === second.pid && e.tool === 'write_note')).toBe(true);
    // nothing to replay in this era, and everything the new process was sent carried the client's _meta
    expect(executed(log).some((e) => e.method === 'initialize')).toBe(false);
    expect(executed(log).some((e) => e.missingMeta !== undefined)).toBe(false);
    await broker.call('settings.set', { key: 'estop-grace-seconds', value: '2' });
    await w.close();
  });
});
