/**
 * `airlock wrap` started without `--`, as the MCP Inspector CLI (and any launcher that drops it) does:
 * `airlock wrap --name ev node server.js`. The first argument that is not an option of wrap starts the server
 * command, and everything after it is the server's. Failures are one `airlock:` line on stderr and a non-zero
 * exit, the only thing a GUI client's log shows.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, expect, test } from 'vitest';
import { CLI, cleanup, cli, cliJson, FIXTURE_SERVER, onCleanup, startDaemon, tempDir, textOf, waitFor, waitForTicket } from '../helpers/airlock.js';

afterEach(cleanup);

test('without --: the server gets its command line, options included, and calls go through the gate', async () => {
  const home = tempDir();
  await startDaemon(home);
  const pidFile = join(home, 'server.pid');
  // `--name x` after the command belongs to the server: the wrapper stays "ev"
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'wrap', '--name', 'ev', '--client', 'inspector', process.execPath, FIXTURE_SERVER, '--name', 'x', '--catalog', 'adversarial', '--pid-file', pidFile],
    env: { ...(process.env as Record<string, string>), AIRLOCK_HOME: home },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'inspector-like', version: '1.0.0' });
  await client.connect(transport);
  onCleanup(() => client.close().catch(() => {}));

  const tools = await client.listTools();
  expect(tools.tools.map((t) => t.name)).toContain('noanno'); // --catalog adversarial reached the server

  await waitFor(() => {
    try {
      return readFileSync(pidFile, 'utf8') !== '';
    } catch {
      return false;
    }
  });
  const pid = readFileSync(pidFile, 'utf8').trim();
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    expect(argv.slice(1)).toEqual([FIXTURE_SERVER, '--name', 'x', '--catalog', 'adversarial', '--pid-file', pidFile]);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // no /proc (macOS): the catalog check stands
  }

  const call = client.callTool({ name: 'noanno', arguments: { text: 'hi' } }, undefined, { timeout: 30_000 });
  const ticket = await waitForTicket(home, 'noanno');
  expect(ticket).toMatchObject({ server: 'ev', client: 'inspector' });
  const status = await cliJson<{ sessions: { server: string; command: string[] }[] }>(home, ['status']);
  expect(status.sessions.find((s) => s.server === 'ev')?.command).toEqual([process.execPath, FIXTURE_SERVER, '--name', 'x', '--catalog', 'adversarial', '--pid-file', pidFile]);
  await cli(home, ['approve', ticket.id]);
  expect(textOf(await call)).toContain('hi');
  expect(stderr).not.toMatch(/Unexpected argument/);
});

test('with -- it works as before, and -- after the command is the server\'s', async () => {
  const home = tempDir();
  await startDaemon(home);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'wrap', '--name', 'dd', '--', process.execPath, FIXTURE_SERVER, '--catalog', 'adversarial', '--', 'ignored'],
    env: { ...(process.env as Record<string, string>), AIRLOCK_HOME: home },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'c', version: '1.0.0' });
  await client.connect(transport);
  onCleanup(() => client.close().catch(() => {}));
  expect((await client.listTools()).tools.map((t) => t.name)).toContain('noanno');
});

const FAILURES: [string, string[], RegExp][] = [
  ['no --name', ['wrap', 'node', 'server.js'], /--name is required/],
  ['no server at all', ['wrap', '--name', 'ev'], /no server to wrap/],
  ['an unknown option before the command', ['wrap', '--name', 'ev', '--bogus', 'node', 'server.js'], /unknown option "--bogus"/],
  ['an option missing its value', ['wrap', '--name'], /--name needs a value/],
  ['--url and a command', ['wrap', '--name', 'ev', '--url', 'http://127.0.0.1:1/', 'node', 'server.js'], /either --url or a server command/],
  ['a relative --home', ['wrap', '--name', 'ev', '--home', 'rel', 'node', 'server.js'], /--home must be an absolute path/],
];

test.each(FAILURES)('%s: one "airlock:" line on stderr, exit 2, nothing on stdout', async (_what, args, message) => {
  const r = await cli(tempDir(), args);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^airlock: wrap: /);
  expect(lines[0]).toMatch(message);
});

test('a server command that cannot start: one "airlock:" line and a non-zero exit', async () => {
  const r = await cli(tempDir(), ['wrap', '--name', 'ev', '/no/such/server', '--flag']);
  expect(r.code).not.toBe(0);
  expect(r.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^airlock: .*\/no\/such\/server.*could not be started/)]);
});

test('without --, a server option -h reaches the server', async () => {
  const dir = tempDir();
  const script = join(dir, 'exit7.mjs');
  writeFileSync(script, 'process.exit(7);\n');
  const r = await cli(dir, ['wrap', '--name', 'ev', process.execPath, script, '-h', 'db.internal']);
  expect(r.stdout).toBe('');
  expect(r.code).toBe(7);
});
