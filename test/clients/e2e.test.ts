/**
 * End to end, as a user would: a client config with a stdio server, `airlock protect`, then the client starts
 * the protected entry exactly as written (command, args, env, minimal PATH). A tool without annotations is held
 * by the broker, and the server does not run it until `airlock approve`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { cleanup, cli, executedCalls, fixture, tempDir, textOf, waitForTicket } from '../helpers/airlock.js';
import { connectEntry, startAirlock } from '../helpers/e2e.js';
import { WRAPPER_NODE_FLAGS } from '../../proxy-core/src/wrap/v8-tuning.js';

afterEach(cleanup);

interface Entry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

test('a protected entry, started the way a client starts it, holds an unannotated call until approved', async () => {
  const dataHome = tempDir('al-');
  const userHome = tempDir('al-home-');
  const server = fixture(userHome, ['--catalog', 'adversarial']);
  const config = join(userHome, '.cursor', 'mcp.json');
  mkdirSync(join(userHome, '.cursor'));
  const original = { mcpServers: { fixture: { command: server.command, args: server.args, env: { FIXTURE_LOG: server.log } } } };
  writeFileSync(config, JSON.stringify(original, null, 2) + '\n');

  const userEnv = { HOME: userHome, XDG_CONFIG_HOME: '', CODEX_HOME: '', CLAUDE_CONFIG_DIR: '' };
  const protect = await cli(dataHome, ['protect', 'cursor', 'fixture'], userEnv);
  expect(protect.code, protect.stderr).toBe(0);
  const entry = (JSON.parse(readFileSync(config, 'utf8')) as { mcpServers: { fixture: Entry } }).mcpServers.fixture;
  expect(entry.args).toContain('wrap');
  // the wrapper's Node flags come first: this test starts the wrapper with them
  expect(entry.args.slice(0, WRAPPER_NODE_FLAGS.length)).toEqual(WRAPPER_NODE_FLAGS);

  await startAirlock({ home: dataHome });
  // What a GUI client passes: its own small environment, the entry's env, and nothing else.
  const client = await connectEntry(entry, { PATH: '/usr/bin:/bin', HOME: userHome, AIRLOCK_HOME: dataHome, ...entry.env }, 'e2e-client');
  try {
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('noanno');

    const call = client.callTool({ name: 'noanno', arguments: { text: 'held' } }, undefined, { timeout: 30_000 });
    const ticket = await waitForTicket(dataHome, 'noanno');
    expect(ticket).toMatchObject({ client: 'cursor', server: 'fixture', tool: 'noanno', arguments: { text: 'held' } });
    // Held: the server has not executed it.
    await new Promise((r) => setTimeout(r, 300));
    expect(executedCalls(server.log, 'noanno')).toEqual([]);

    const approve = await cli(dataHome, ['approve', ticket.id]);
    expect(approve.code, approve.stderr).toBe(0);
    const result = await call;
    expect(result.isError ?? false).toBe(false);
    expect(textOf(result)).toContain('held');
    expect(executedCalls(server.log, 'noanno')).toHaveLength(1);
  } finally {
    await client.close();
  }

  const unprotect = await cli(dataHome, ['unprotect', 'cursor', 'fixture'], userEnv);
  expect(unprotect.code, unprotect.stderr).toBe(0);
  expect(readFileSync(config, 'utf8')).toBe(JSON.stringify(original, null, 2) + '\n');
});
