/**
 * End to end: protect with a non-default AIRLOCK_HOME, then start the entry the way the Python MCP SDK does,
 * with only HOME, PATH, SHELL, TERM, USER and LOGNAME (plus the entry's own env). The wrapper finds the broker
 * through the `--home` protect wrote; the same entry without it cannot, and fails closed.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { CLI, cleanup, cli, decisionOf, executedCalls, fixture, tempDir, textOf, waitForTicket } from '../helpers/airlock.js';
import { connectEntry, startAirlock } from '../helpers/e2e.js';

afterEach(cleanup);

interface Entry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The environment a client built on the Python MCP SDK gives a server: these six, and the entry's env. */
function scrubbedEnv(userHome: string, entry: Entry): Record<string, string> {
  return { HOME: userHome, PATH: '/usr/bin:/bin', SHELL: '/bin/sh', TERM: 'dumb', USER: 'tester', LOGNAME: 'tester', ...entry.env };
}

const connect = (entry: Entry, env: Record<string, string>) => connectEntry(entry, env, 'python-like-client');

test('a non-default data dir reaches the wrapper through --home when the client scrubs the environment', async () => {
  const dataHome = tempDir('al-');
  const userHome = tempDir('al-home-');
  const server = fixture(userHome, ['--catalog', 'adversarial']);
  mkdirSync(join(userHome, '.cursor'));
  const config = join(userHome, '.cursor', 'mcp.json');
  const original = JSON.stringify({ mcpServers: { fixture: { command: server.command, args: server.args, env: { FIXTURE_LOG: server.log } } } }, null, 2) + '\n';
  writeFileSync(config, original);

  const userEnv = { HOME: userHome, XDG_CONFIG_HOME: '', XDG_DATA_HOME: '', CODEX_HOME: '', CLAUDE_CONFIG_DIR: '' };
  const protect = await cli(dataHome, ['protect', 'cursor', 'fixture'], userEnv);
  expect(protect.code, protect.stderr).toBe(0);
  const entry = (JSON.parse(readFileSync(config, 'utf8')) as { mcpServers: { fixture: Entry } }).mcpServers.fixture;
  const at = entry.args.indexOf('--home');
  expect(entry.args.slice(at, at + 2)).toEqual(['--home', dataHome]);
  expect(at).toBeLessThan(entry.args.indexOf(server.command));

  await startAirlock({ home: dataHome });
  const env = scrubbedEnv(userHome, entry);
  expect(Object.keys(env)).not.toContain('AIRLOCK_HOME');

  // Without --home (what protect wrote before), the wrapper looks in the default dir, finds no broker, and
  // refuses the session: the client's initialize fails saying Airlock is not running.
  const withoutHome = { ...entry, args: entry.args.filter((_, i) => i !== at && i !== at + 1) };
  await expect(connect(withoutHome, env)).rejects.toThrow(/Airlock is not running/);
  expect(executedCalls(server.log, 'noanno')).toEqual([]);

  // With it, the call reaches the broker: a ticket appears, and the approved call runs.
  const client = await connect(entry, env);
  try {
    const call = client.callTool({ name: 'noanno', arguments: { text: 'found' } }, undefined, { timeout: 30_000 });
    const ticket = await waitForTicket(dataHome, 'noanno');
    expect(ticket).toMatchObject({ client: 'cursor', server: 'fixture', arguments: { text: 'found' } });
    const approve = await cli(dataHome, ['approve', ticket.id]);
    expect(approve.code, approve.stderr).toBe(0);
    const result = await call;
    expect(result.isError ?? false).toBe(false);
    expect(textOf(result)).toContain('found');
  } finally {
    await client.close();
  }

  const unprotect = await cli(dataHome, ['unprotect', 'cursor', 'fixture'], userEnv);
  expect(unprotect.code, unprotect.stderr).toBe(0);
  expect(readFileSync(config, 'utf8')).toBe(original);
});

test('--home wins over AIRLOCK_HOME', async () => {
  const dataHome = tempDir('al-');
  const decoy = tempDir('al-decoy-');
  const server = fixture(dataHome, ['--catalog', 'adversarial']);
  await startAirlock({ home: dataHome });
  const entry: Entry = { command: process.execPath, args: [CLI, 'wrap', '--name', 'fx', '--home', dataHome, '--', server.command, ...server.args], env: { FIXTURE_LOG: server.log } };
  const client = await connect(entry, { ...scrubbedEnv(decoy, entry), AIRLOCK_HOME: decoy });
  try {
    const call = client.callTool({ name: 'noanno', arguments: { text: 'x' } }, undefined, { timeout: 30_000 });
    const ticket = await waitForTicket(dataHome, 'noanno');
    await cli(dataHome, ['deny', ticket.id, '--reason', 'test']);
    expect(decisionOf(await call)).toMatchObject({ decidedBy: 'user' });
  } finally {
    await client.close();
  }
});
