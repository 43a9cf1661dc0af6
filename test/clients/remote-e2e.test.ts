/**
 * End to end: a remote entry protected by `airlock protect`, started the way a client starts it (its command,
 * its args, its env and little else), reaches the remote server with the header the entry had, behind the
 * gate; the token is in the entry's env, never in the command line; unprotect gives back the file's bytes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { cleanup, cli, executed, onCleanup, ROOT, startDaemon, tempDir, textOf, waitForTicket } from '../helpers/airlock.js';
import { connectEntry } from '../helpers/e2e.js';

afterEach(cleanup);

const HTTP_FIXTURE = join(ROOT, 'test', 'fixtures', 'servers', 'http-fixture.mjs');

async function startHttpFixture(log: string): Promise<number> {
  const proc = spawn(process.execPath, [HTTP_FIXTURE], { env: { ...process.env, FIXTURE_LOG: log }, stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup(() => proc.kill('SIGTERM'));
  return new Promise<number>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m) resolve(Number(m[1]));
    });
    proc.on('exit', () => reject(new Error('http fixture exited')));
  });
}

interface Entry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

test('a protected remote entry carries its header through the env, calls are gated, and unprotect restores the bytes', async () => {
  const data = tempDir('al-');
  const userHome = tempDir('al-home-');
  await startDaemon(data);
  const log = join(data, 'http.log');
  const port = await startHttpFixture(log);
  mkdirSync(join(userHome, '.cursor'));
  const config = join(userHome, '.cursor', 'mcp.json');
  const original = `{\n  "mcpServers": {\n    "db": {\n      "url": "http://127.0.0.1:${port}/mcp",\n      "headers": { "Authorization": "Bearer s3cret-token" }\n    }\n  }\n}\n`;
  writeFileSync(config, original);
  const userEnv = { HOME: userHome, XDG_CONFIG_HOME: '', XDG_DATA_HOME: '', CODEX_HOME: '', CLAUDE_CONFIG_DIR: '' };

  const protect = await cli(data, ['protect', 'cursor', 'db'], userEnv);
  expect(protect.code, protect.stderr).toBe(0);
  const entry = (JSON.parse(readFileSync(config, 'utf8')) as { mcpServers: { db: Entry } }).mcpServers.db;
  expect(entry.args.join(' ')).not.toContain('s3cret-token');
  expect(Object.values(entry.env)).toEqual(['Bearer s3cret-token']);

  // what a client built on an MCP SDK gives a server: a few variables, and the entry's env
  const env = { HOME: userHome, PATH: process.env.PATH ?? '/usr/bin:/bin', ...entry.env };
  const client = await connectEntry(entry, env, 'cursor-like');
  expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['drop_table', 'lookup']);
  const call = client.callTool({ name: 'lookup', arguments: { q: 'users' } }, undefined, { timeout: 30_000 });
  const ticket = await waitForTicket(data, 'lookup');
  expect(ticket).toMatchObject({ client: 'cursor', server: 'db' });
  expect((await cli(data, ['approve', ticket.id])).code).toBe(0);
  expect(textOf(await call)).toBe('found users');
  expect(executed(log).some((e) => e.authorization === 'Bearer s3cret-token')).toBe(true);
  await client.close();

  const unprotect = await cli(data, ['unprotect', 'cursor', 'db'], userEnv);
  expect(unprotect.code, unprotect.stderr).toBe(0);
  expect(readFileSync(config, 'utf8')).toBe(original);
}, 120_000);
