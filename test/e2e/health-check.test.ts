/**
 * What a client's own health check shows for a server behind Airlock. `claude mcp list`, `gemini mcp list` and
 * `qwen mcp list` start the server and report whether its initialize succeeded, without a model. With the broker
 * down, or a server command that cannot start, the session fails at initialize with Airlock's reason, so the
 * list says so instead of "Connected"; a broker that comes up a moment after the wrapper still gives a session.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { cleanup, fixture, onCleanup, startDaemon, tempDir, waitForSessions, wrapArgs } from '../helpers/airlock.js';
import { CLIENT_CLIS, clientVersion, installClientCli } from '../helpers/client-cli.js';

/** The clients whose own list command is checked. */
const CLIENTS = { claude: CLIENT_CLIS['claude-code'], gemini: CLIENT_CLIS['gemini-cli'], qwen: CLIENT_CLIS['qwen-code'] };

afterEach(cleanup);

const bins: Record<keyof typeof CLIENTS, string> = { claude: '', gemini: '', qwen: '' };

beforeAll(async () => {
  // one at a time: an install is mostly unpacking, CPU the tests beside this file need (side by side, the suite's
  // neighbours took twice as long); another file's install of the same client is waited for, not repeated
  for (const name of Object.keys(CLIENTS) as (keyof typeof CLIENTS)[]) bins[name] = (await installClientCli(CLIENTS[name])).bin;
}, 600_000);

interface Place {
  home: string;
  dataHome: string;
  project: string;
  env: NodeJS.ProcessEnv;
}

/** A person's machine as the clients see it: its own HOME, a project folder the clients trust, a data dir. */
function place(): Place {
  const root = tempDir('al-hc-');
  const home = join(root, 'home');
  const project = join(root, 'project');
  const dataHome = join(root, 'airlock');
  for (const d of [home, project, dataHome]) mkdirSync(d, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    DISABLE_AUTOUPDATER: '1',
    // gemini starts no stdio server in a folder the person has not trusted
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  };
  return { home, dataHome, project, env };
}

function run(bin: string, args: string[], p: Place): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: p.project, env: p.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      // eslint-disable-next-line no-control-regex
      resolve({ code: code ?? 1, out: out.replace(/\x1b\[[0-9;]*m/g, '') });
    });
  });
}

/** `<client> mcp add` the server "fx" behind `airlock wrap`, as a person would. */
async function addServer(p: Place, server: { command: string; args: string[] }): Promise<void> {
  const wrap = (client: string) => wrapArgs({ home: p.dataHome, server: 'fx', client, command: server.command, args: server.args });
  const env = ['-e', `AIRLOCK_HOME=${p.dataHome}`];
  const added = [
    await run(bins.claude, ['mcp', 'add', '-s', 'user', 'fx', ...env, '--', process.execPath, ...wrap('claude-code')], p),
    await run(bins.gemini, ['mcp', 'add', '-s', 'user', ...env, 'fx', process.execPath, '--', ...wrap('gemini')], p),
    await run(bins.qwen, ['mcp', 'add', '-s', 'user', ...env, 'fx', process.execPath, '--', ...wrap('qwen')], p),
  ];
  for (const a of added) expect(a.code, a.out).toBe(0);
}

/** Each client's own line for the server "fx" in its `mcp list`. */
async function listed(p: Place): Promise<Record<keyof typeof CLIENTS, string>> {
  const line = (out: string) => out.split('\n').find((l) => l.includes('fx:')) ?? `(no line for fx in: ${out})`;
  return {
    claude: line((await run(bins.claude, ['mcp', 'list'], p)).out),
    gemini: line((await run(bins.gemini, ['mcp', 'list'], p)).out),
    qwen: line((await run(bins.qwen, ['mcp', 'list'], p)).out),
  };
}

describe("the clients' own health check", () => {
  test('the pinned versions are the ones installed', () => {
    const p = place();
    expect(clientVersion(bins.claude, p.env)).toContain(CLIENTS.claude.version);
    expect(clientVersion(bins.gemini, p.env)).toContain(CLIENTS.gemini.version);
    expect(clientVersion(bins.qwen, p.env)).toContain(CLIENTS.qwen.version);
  });

  test('with the broker down, no client says "Connected"; claude shows why', async () => {
    const p = place();
    const fx = fixture(p.dataHome);
    await addServer(p, fx);
    const lines = await listed(p);
    expect(lines.claude).toMatch(/Failed to connect/);
    expect(lines.claude).toContain('Airlock is not running, so every call to "fx" would be refused');
    expect(lines.claude).toContain('airlock daemon');
    expect(lines.gemini).toMatch(/- Disconnected$/);
    expect(lines.qwen).toMatch(/- Disconnected$/);
    const got = await run(bins.claude, ['mcp', 'get', 'fx'], p);
    expect(got.out).toMatch(/Issue: -32001: Airlock is not running/);
  }, 180_000);

  test('with the broker up, every client says "Connected"', async () => {
    const p = place();
    await startDaemon(p.dataHome);
    const fx = fixture(p.dataHome);
    await addServer(p, fx);
    const lines = await listed(p);
    expect(lines.claude).toMatch(/✔ Connected$/);
    expect(lines.gemini).toMatch(/✓ fx: .* - Connected$/);
    expect(lines.qwen).toMatch(/✓ fx: .* - Connected$/);
  }, 180_000);

  test('a server command that cannot start: the clients do not say "Connected"; claude names the command and why', async () => {
    const p = place();
    await startDaemon(p.dataHome);
    const missing = join(p.home, 'no-such-server');
    await addServer(p, { command: missing, args: ['--stdio'] });
    const lines = await listed(p);
    expect(lines.claude).toMatch(/Failed to connect/);
    // claude blanks the config's own command and args out of the message ("[redacted]"); the reason stays
    expect(lines.claude).toMatch(/Airlock could not run the MCP server "fx": its command `.+` could not be started: command not found/);
    expect(lines.gemini).toMatch(/- Disconnected$/);
    expect(lines.qwen).toMatch(/- Disconnected$/);
  }, 180_000);
});

/** The SDK client through `airlock wrap`, connected or refused at initialize. */
async function connect(home: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: wrapArgs({ home, server: 'fx', command, args }),
    env: { ...(process.env as Record<string, string>), AIRLOCK_HOME: home, ...(env as Record<string, string>) },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'health-check', version: '1.0.0' });
  onCleanup(() => client.close().catch(() => {}));
  await client.connect(transport);
  return client;
}

describe('initialize through the wrapper (SDK client)', () => {
  test('with the broker down, initialize fails with code -32001 and the reason, after a short wait for it', async () => {
    const home = tempDir();
    const fx = fixture(home);
    const t0 = Date.now();
    const err = await connect(home, fx.command, fx.args, fx.env).then(
      () => null,
      (e: Error & { code?: number }) => e,
    );
    expect(err?.message).toMatch(/Airlock is not running, so every call to "fx" would be refused \(Airlock fails closed\)/);
    expect(err?.message).toMatch(/airlock daemon/);
    expect(err?.code).toBe(-32001);
    // it waited for a broker that might be starting, not for ever
    expect(Date.now() - t0).toBeGreaterThan(2500);
    expect(Date.now() - t0).toBeLessThan(10_000);
  }, 20_000);

  test('a broker that comes up a moment after the wrapper started: the session begins', async () => {
    const home = tempDir();
    const fx = fixture(home);
    const connecting = connect(home, fx.command, fx.args, fx.env);
    await startDaemon(home);
    const client = await connecting;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('write_note');
    await waitForSessions(home, 1);
  }, 20_000);

  test('a server command that cannot start: initialize fails naming the command and why', async () => {
    const home = tempDir();
    await startDaemon(home);
    const err = await connect(home, join(home, 'missing-server'), ['x']).then(
      () => null,
      (e: Error & { code?: number }) => e,
    );
    expect(err?.message).toContain(`Airlock could not run the MCP server "fx": its command \`${join(home, 'missing-server')} x\` could not be started: command not found`);
    expect(err?.code).toBe(-32001);
  }, 20_000);

  test('a server that exits at once: initialize fails with its exit code', async () => {
    const home = tempDir();
    await startDaemon(home);
    const err = await connect(home, process.execPath, ['-e', 'process.exit(3)']).then(
      () => null,
      (e: Error & { code?: number }) => e,
    );
    expect(err?.message).toContain('exited with code 3');
    expect(err?.message).toContain(`its command \`${process.execPath} -e process.exit(3)\``);
  }, 20_000);
});
