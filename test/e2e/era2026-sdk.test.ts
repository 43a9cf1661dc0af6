/**
 * The v2 TypeScript SDK (@modelcontextprotocol/client and /server 2.4.0, which speak 2026-07-28) through
 * `airlock wrap`: a v2 client pinned to 2026-07-28 in front of the hand-written 2026 server and of a v2 server, and a
 * legacy (2025) v2 client, each gated as it should be. The client's own multi round-trip handling (it fulfils the
 * elicitation and retries with the echoed state on a new id) is asked once and runs once.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cli, decisionOf, executed, onCleanup, ROOT, textOf, waitFor, waitForTicket, wrapArgs } from '../helpers/airlock.js';
import { brokerForFile } from '../helpers/estop.js';

const ERA = join(ROOT, 'test', 'fixtures', 'servers', 'era2026-server.mjs');
const V2 = join(ROOT, 'test', 'fixtures', 'servers', 'v2-sdk-server.mjs');

let home: string;
let broker: BrokerClient;
brokerForFile({ allow: [] }, (shared) => ({ home, broker } = shared));

let n = 0;
async function v2Client(server: string, script: string, era: 'modern' | 'legacy'): Promise<{ client: Client; log: string }> {
  const log = join(home, `${server}-${++n}.log`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: wrapArgs({ home, server, command: process.execPath, args: [script] }),
    env: { ...(process.env as Record<string, string>), AIRLOCK_HOME: home, FIXTURE_LOG: log },
    stderr: 'pipe',
  });
  const client = new Client(
    { name: 'v2-test', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, ...(era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}) },
  );
  // the person answers the server's question: yes
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { sure: true } }));
  await client.connect(transport);
  onCleanup(() => client.close().catch(() => {}));
  return { client, log };
}

const historyOf = async (server: string, tool: string) => (await broker.call('history', { server, limit: 100 })).calls.filter((c) => c.tool === tool);

describe('the v2 SDK through the wrapper', () => {
  test('a v2 client on 2026-07-28: its delete (input_required, then its own retry) is asked once, runs once, one journal entry', async () => {
    const { client, log } = await v2Client('v2-era', ERA, 'modern');
    expect(executed(log).some((e) => e.method === 'initialize')).toBe(false);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('delete_note');
    const call = client.callTool({ name: 'delete_note', arguments: { name: 'z' } });
    const ticket = await waitForTicket(home, 'delete_note');
    await cli(home, ['approve', ticket.id]);
    const result = await call;
    expect(textOf(result)).toBe('deleted z');
    expect(executed(log).filter((e) => e.executed === true)).toHaveLength(1);
    expect(await broker.call('pending', {})).toHaveLength(0);
    await waitFor(async () => (await historyOf('v2-era', 'delete_note'))[0]?.outcome === 'ok', 8000, 'the journal entry');
    expect(await historyOf('v2-era', 'delete_note')).toHaveLength(1);
  });

  test('a v2 client on 2026-07-28 in front of a v2 server: a rule refuses, the refusal is a readable result; an approved wipe runs once', async () => {
    await broker.call('rules.add', { action: 'deny', server: 'v2-both', tool: 'note' });
    const { client, log } = await v2Client('v2-both', V2, 'modern');
    const refused = await client.callTool({ name: 'note', arguments: { text: 'x' } });
    expect(refused.isError).toBe(true);
    expect(decisionOf(refused)).toMatchObject({ decision: 'deny', decidedBy: 'rule' });
    expect(executed(log).some((e) => e.tool === 'note')).toBe(false);
    const call = client.callTool({ name: 'wipe', arguments: { name: 'w' } });
    const ticket = await waitForTicket(home, 'wipe');
    await cli(home, ['approve', ticket.id]);
    expect(textOf(await call)).toBe('wiped w');
    expect(executed(log).filter((e) => e.executed === true)).toHaveLength(1);
    // the server heard the retry with the round's state, on another id than the first call
    const calls = executed(log).filter((e) => e.method === 'tools/call' && (e.params as { name?: string }).name === 'wipe');
    expect(calls).toHaveLength(2);
    expect(calls[0]!.id).not.toBe(calls[1]!.id);
    expect(await broker.call('pending', {})).toHaveLength(0);
    await waitFor(async () => (await historyOf('v2-both', 'wipe'))[0]?.outcome === 'ok', 8000, 'the journal entry');
    expect(await historyOf('v2-both', 'wipe')).toHaveLength(1);
  });

  test('a legacy v2 client (initialize) in front of a v2 server: the 2025 path, gated as ever', async () => {
    const { client, log } = await v2Client('v2-legacy', V2, 'legacy');
    expect(executed(log).some((e) => e.method === 'initialize')).toBe(true);
    const call = client.callTool({ name: 'note', arguments: { text: 'y' } });
    const ticket = await waitForTicket(home, 'note');
    await cli(home, ['deny', ticket.id]);
    const denied = await call;
    expect(decisionOf(denied)).toMatchObject({ decision: 'deny', decidedBy: 'user' });
    expect((denied as Record<string, unknown>).resultType).toBeUndefined();
    expect(executed(log).some((e) => e.tool === 'note')).toBe(false);
  });
});
