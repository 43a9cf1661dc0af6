/**
 * JSON nested thousands of levels deep parses fine in Node, but every recursive walk of it (re-serialising,
 * hashing, journaling) overflows the stack. From either side it must be refused with an answer, and the
 * wrapper must live on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cleanup, cli, executedCalls, fixture, ROOT, startDaemon, tempDir, waitForTicket } from '../helpers/airlock.js';
import { startRaw } from '../helpers/raw-client.js';

const DEEP = '['.repeat(20_000) + ']'.repeat(20_000);
let home: string;

beforeAll(async () => {
  home = tempDir();
  await startDaemon(home);
  expect((await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', '*'])).code).toBe(0);
});
afterAll(cleanup);

test('a client message nested 20,000 deep is refused with its id; the next call still runs', async () => {
  const fx = fixture(home);
  const w = startRaw(home, ['--name', 'fixture'], fx.command, fx.args, fx.env);
  await w.handshake();
  w.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"x":${DEEP}}}}`);
  w.send(`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":${DEEP}}}`);
  w.send(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo', arguments: { text: 'after' } } }));
  for (const id of [7, 8]) {
    const answer = await w.next((m) => m.id === id);
    expect(answer.error).toMatchObject({ code: -32600, message: expect.stringContaining('nested deeper than 100 levels') });
  }
  expect((await w.next((m) => m.id === 9)).result).toBeDefined();
  expect(executedCalls(fx.log).map((e) => (e.arguments as { text?: string }).text)).toEqual(['after']);
  expect(w.proc.exitCode).toBeNull();
  await w.close();
});

test("a server's answer nested 20,000 deep becomes an error to that call; a deep notification is dropped", async () => {
  const log = join(home, 'deep.log');
  const w = startRaw(home, ['--name', 'deep'], process.execPath, [join(ROOT, 'test', 'fixtures', 'servers', 'deep-server.mjs')], { FIXTURE_LOG: log });
  await w.handshake();
  w.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'deep', arguments: {} } }));
  const answer = await w.next((m) => m.id === 1);
  expect(answer.error).toMatchObject({ message: expect.stringContaining('nested deeper than 100 levels') });
  w.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }));
  expect((await w.next((m) => m.id === 2)).result).toEqual({});
  expect(w.received.some((m) => m.method === 'fixture/deep-note')).toBe(false);
  expect(w.stderr()).toContain('nested deeper than 100 levels');
  expect(w.proc.exitCode).toBeNull();
  await w.close();
});

test('a tool whose schema nests past 100 levels is withheld alone: the other tools list and run, it asks', async () => {
  // a broker of its own, with rules for the plain tools only
  const home = tempDir();
  await startDaemon(home);
  for (const tool of ['plain', 'deep']) expect((await cli(home, ['rules', 'add', 'allow', '--server', 'deep-schema', '--tool', tool])).code).toBe(0);
  const log = join(home, 'deep-schema.log');
  const w = startRaw(home, ['--name', 'deep-schema'], process.execPath, [join(ROOT, 'test', 'fixtures', 'servers', 'deep-server.mjs'), '--deep-schema'], { FIXTURE_LOG: log });
  await w.handshake();
  w.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  const listed = (await w.next((m) => m.id === 1)).result as { tools: { name: string; description?: string; _meta: Record<string, { class: string; reasons: string[] }> }[] };
  expect(listed.tools.map((t) => t.name)).toEqual(['deep', 'nested', 'plain']);
  const nested = listed.tools[1]!;
  expect(nested.description).toMatch(/withheld/);
  expect(nested._meta['airlock/verdict']).toMatchObject({ class: 'unclassifiable', reasons: [expect.stringMatching(/nested deeper than 100 levels/)] });
  // the plain tool runs under its rule; the withheld one asks (unclassifiable)
  w.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'plain', arguments: {} } }));
  expect((await w.next((m) => m.id === 2)).result).toMatchObject({ content: [{ text: 'plain ran' }] });
  w.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nested', arguments: {} } }));
  const ticket = await waitForTicket(home, 'nested');
  expect(ticket.class).toBe('unclassifiable');
  expect((await cli(home, ['deny', ticket.id])).code).toBe(0);
  expect((await w.next((m) => m.id === 3)).result).toMatchObject({ isError: true });
  expect(readFileSync(log, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { tool: string }).tool)).toEqual(['plain']);
  await w.close();
});
