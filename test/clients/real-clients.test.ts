/**
 * Round trips on configs the clients wrote themselves: each client's own CLI (installed from the registry at a
 * pinned version, test/helpers/client-cli.ts) adds a stdio server and, where it can, a remote one; `airlock
 * protect <client> --all` wraps them; the client's own `mcp list` / `mcp get` (or its config dump) still reads
 * the entries and shows the wrapper; `airlock unprotect` gives back the client's file byte for byte.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { CLI, EVERYTHING, startDaemon } from '../helpers/airlock.js';
import { dataDir } from '../../proxy-core/src/ipc/paths.js';
import { CLIENT_CLIS, clientEnv, installClientCli, installSoon, runClient, type ClientCli, type Run } from '../helpers/client-cli.js';
import { WRAPPER_NODE_FLAGS } from '../../proxy-core/src/wrap/v8-tuning.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Install times, printed once so a slow registry shows in the log. */
const timings = new Map<string, string>();
afterAll(() => {
  if (timings.size) process.stderr.write(`client CLIs: ${[...timings.values()].join(', ')}\n`);
});

/** Every client's CLI, installed from the file's start, three at a time, while the tests before its own run. */
const installs = installSoon(Object.values(CLIENT_CLIS));

interface World {
  home: string;
  project: string;
  data: string;
  env: NodeJS.ProcessEnv;
  bin: string;
  client(args: string[], timeout?: number): Promise<Run>;
  airlock(args: string[]): Promise<Run>;
}

async function world(cli: ClientCli, extraEnv: Record<string, string> = {}): Promise<World> {
  const { bin, installMs } = await (installs.get(cli) ?? installClientCli(cli));
  const name = `${cli.pkg}@${cli.version}`;
  if (!timings.has(name)) timings.set(name, `${name} ${installMs ? `installed in ${(installMs / 1000).toFixed(1)} s` : 'cached'}`);
  const home = mkdtempSync(join(tmpdir(), 'al-real-'));
  dirs.push(home);
  const project = join(home, 'project');
  // the data dir a wrapper finds by itself for this HOME, so the entries carry no --home
  const data = dataDir({ HOME: home }, process.platform);
  mkdirSync(project);
  const env = clientEnv(home, { AIRLOCK_HOME: data, ...extraEnv });
  return {
    home,
    project,
    data,
    env,
    bin,
    client: (args, timeout) => runClient(bin, args, { cwd: project, env, timeout }),
    airlock: (args) =>
      new Promise((resolve) => {
        execFile(process.execPath, [CLI, ...args], { cwd: project, env, timeout: 60_000 }, (err, stdout, stderr) => {
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
        });
      }),
  };
}

function ok(r: Run, what: string): Run {
  expect(r.code, `${what}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
  return r;
}

/** What a listing command printed, wherever it printed it (Gemini lists on stderr), without colours. */
function shown(r: Run): string {
  // eslint-disable-next-line no-control-regex
  return (r.stdout + r.stderr).replace(/\u001b\[[0-9;]*m/g, '');
}

/** Protect every server of `client`, check each named one is protected, then hand back what unprotect restores. */
async function protectAll(w: World, client: string, names: string[]): Promise<void> {
  const p = ok(await w.airlock(['protect', client, '--all']), `airlock protect ${client} --all`);
  for (const n of names) expect(p.stdout).toMatch(new RegExp(`^protected\\s+${n}\\s`, 'm'));
}

async function unprotectAll(w: World, client: string): Promise<void> {
  ok(await w.airlock(['unprotect', client, '--all']), `airlock unprotect ${client} --all`);
}

const SLOW = 600_000;
const REMOTE = 'http://127.0.0.1:9/mcp';

describe('Claude Code', () => {
  test('mcp add (stdio, local and user scope, and http with a header); protect; mcp get shows the wrapper; unprotect restores the bytes', async () => {
    const w = await world(CLIENT_CLIS['claude-code']);
    ok(await w.client(['mcp', 'add', 'files', '-e', 'FOO=bar', '--', 'node', '/srv/server.js', '--stdio']), 'claude mcp add files');
    ok(await w.client(['mcp', 'add', '-s', 'user', 'ustd', '--', 'node', '/srv/user.js']), 'claude mcp add ustd');
    ok(await w.client(['mcp', 'add', '-s', 'user', '-t', 'http', 'remote', REMOTE, '-H', 'Authorization: Bearer s3cret']), 'claude mcp add remote');
    const file = join(w.home, '.claude.json');
    const before = readFileSync(file);
    await protectAll(w, 'claude-code', ['files', 'ustd', 'remote']);
    const protectedText = readFileSync(file, 'utf8');
    expect(protectedText).not.toMatch(/"--url",\s*"[^"]*",\s*"--header",\s*"Authorization: Bearer/);

    const files = ok(await w.client(['mcp', 'get', 'files']), 'claude mcp get files').stdout;
    expect(files).toMatch(/Scope: Local config/);
    expect(files).toContain(`Command: ${process.execPath}`);
    expect(files).toMatch(/Args: .*airlock\.js wrap --name files --client claude-code node \/srv\/server\.js --stdio/);
    const remote = ok(await w.client(['mcp', 'get', 'remote']), 'claude mcp get remote').stdout;
    expect(remote).toMatch(/Type: stdio/);
    expect(remote).toMatch(/--url http:\/\/127\.0\.0\.1:9\/mcp --header Authorization: \$\{AIRLOCK_HEADER_AUTHORIZATION\}/);
    expect(remote).not.toMatch(/Args:.*s3cret/);

    // Claude Code writes ~/.claude.json as it runs: what it changed besides the servers stays, so compare then
    const during = readFileSync(file, 'utf8');
    await unprotectAll(w, 'claude-code');
    if (during === protectedText) expect(readFileSync(file).equals(before)).toBe(true);
    else expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers).toEqual(JSON.parse(before.toString('utf8')).mcpServers);
    const back = ok(await w.client(['mcp', 'get', 'remote']), 'claude mcp get remote (restored)').stdout;
    expect(back).toMatch(/Type: http/);
  }, SLOW);
});

describe('Claude Code project servers (.mcp.json)', () => {
  test('protect warns that .mcp.json is shared; --user-scope protects it in the local scope instead and switches the .mcp.json one off for this user', async () => {
    const w = await world(CLIENT_CLIS['claude-code']);
    ok(await w.client(['mcp', 'add', '-s', 'project', 'team', '--', 'node', '/srv/team.js']), 'claude mcp add -s project team');
    const shared = join(w.project, '.mcp.json');
    const teamFile = readFileSync(shared);
    const p = ok(await w.airlock(['protect', 'claude-code', '--all']), 'airlock protect claude-code --all');
    expect(p.stderr).toMatch(/warning: team is in \.mcp\.json, a file meant to be committed.*--user-scope/);
    const moved = ok(await w.airlock(['protect', 'claude-code', '--user-scope', 'team']), 'airlock protect claude-code --user-scope team');
    expect(moved.stdout).toMatch(/^protected\s+team\s+\(local: /m);
    // the team's file is as the team wrote it again
    expect(readFileSync(shared).equals(teamFile)).toBe(true);
    const project = (JSON.parse(readFileSync(join(w.home, '.claude.json'), 'utf8')) as { projects: Record<string, { disabledMcpjsonServers: string[] }> }).projects[w.project]!;
    expect(project.disabledMcpjsonServers).toEqual(['team']);
    // Claude Code itself now starts the local, protected one
    const got = ok(await w.client(['mcp', 'get', 'team']), 'claude mcp get team').stdout;
    expect(got).toMatch(/Scope: Local config/);
    expect(got).toMatch(/Args: .*wrap --name team --client claude-code node \/srv\/team\.js/);
    const list = shown(ok(await w.client(['mcp', 'list'], 120_000), 'claude mcp list'));
    expect(list).toMatch(/team: .*wrap --name team --client claude-code node \/srv\/team\.js/);
    expect(list).not.toMatch(/team: node \/srv\/team\.js/);
  }, SLOW);
});

describe('Gemini CLI', () => {
  test('mcp add (user scope: stdio and http); protect; mcp list shows the wrapper; unprotect restores the bytes', async () => {
    const w = await world(CLIENT_CLIS['gemini-cli']);
    ok(await w.client(['mcp', 'add', '-s', 'user', '-e', 'FOO=bar', 'files', 'node', '/srv/server.js', '--stdio']), 'gemini mcp add files');
    ok(await w.client(['mcp', 'add', '-s', 'user', '-t', 'http', '-H', 'Authorization: Bearer s3cret', 'remote', REMOTE]), 'gemini mcp add remote');
    const file = join(w.home, '.gemini', 'settings.json');
    const before = readFileSync(file);
    await protectAll(w, 'gemini-cli', ['files', 'remote']);
    const list = shown(ok(await w.client(['mcp', 'list'], 120_000), 'gemini mcp list'));
    expect(list).toMatch(new RegExp(`files: ${escape(process.execPath)} .*wrap --name files --client gemini-cli node /srv/server\\.js --stdio \\(stdio\\)`));
    expect(list).toMatch(/remote: .*wrap --name remote --client gemini-cli --url http:\/\/127\.0\.0\.1:9\/mcp .*\(stdio\)/);
    await unprotectAll(w, 'gemini-cli');
    expect(readFileSync(file).equals(before)).toBe(true);
  }, SLOW);

  test('GEMINI_CLI_HOME moves the user settings, and protect follows it', async () => {
    const w = await world(CLIENT_CLIS['gemini-cli']);
    const moved = join(w.home, 'gemini-home');
    mkdirSync(moved);
    w.env.GEMINI_CLI_HOME = moved;
    ok(await w.client(['mcp', 'add', '-s', 'user', 'files', 'node', '/srv/server.js']), 'gemini mcp add files');
    const file = join(moved, '.gemini', 'settings.json');
    const before = readFileSync(file);
    await protectAll(w, 'gemini-cli', ['files']);
    expect(readFileSync(file, 'utf8')).toContain('"wrap"');
    await unprotectAll(w, 'gemini-cli');
    expect(readFileSync(file).equals(before)).toBe(true);
  }, SLOW);
});

describe('Qwen Code', () => {
  test('mcp add (user scope: stdio, http with a header, sse; project scope); protect; mcp list shows the wrapper; unprotect restores the bytes', async () => {
    const w = await world(CLIENT_CLIS['qwen-code']);
    ok(await w.client(['mcp', 'add', '-e', 'FOO=bar', 'files', 'node', '/srv/server.js', '--stdio']), 'qwen mcp add files');
    ok(await w.client(['mcp', 'add', '-t', 'http', '-H', 'Authorization: Bearer s3cret', 'remote', REMOTE]), 'qwen mcp add remote');
    ok(await w.client(['mcp', 'add', '-t', 'sse', 'events', 'http://127.0.0.1:9/sse']), 'qwen mcp add events');
    ok(await w.client(['mcp', 'add', '-s', 'project', 'proj', 'node', '/srv/proj.js']), 'qwen mcp add proj');
    const user = join(w.home, '.qwen', 'settings.json');
    const project = join(w.project, '.qwen', 'settings.json');
    // Qwen adds its "$version" to a project file the first time it reads one: let it, before taking the bytes
    ok(await w.client(['mcp', 'list'], 120_000), 'qwen mcp list (first)');
    const before = [readFileSync(user), readFileSync(project)];
    await protectAll(w, 'qwen-code', ['files', 'remote', 'events', 'proj']);
    expect(readFileSync(user, 'utf8')).toContain('"AIRLOCK_HEADER_AUTHORIZATION": "Bearer s3cret"');
    const list = shown(ok(await w.client(['mcp', 'list'], 120_000), 'qwen mcp list'));
    expect(list).toMatch(/files: .*wrap --name files --client qwen-code node \/srv\/server\.js --stdio \(stdio\)/);
    expect(list).toMatch(/events: .*--url http:\/\/127\.0\.0\.1:9\/sse --transport sse \(stdio\)/);
    expect(list).toMatch(/proj: .*wrap --name proj --client qwen-code node \/srv\/proj\.js \(stdio\)/);
    await unprotectAll(w, 'qwen-code');
    expect([readFileSync(user), readFileSync(project)].every((b, i) => b.equals(before[i]!))).toBe(true);
  }, SLOW);

  test('QWEN_HOME stands for ~/.qwen, and protect follows it', async () => {
    const w = await world(CLIENT_CLIS['qwen-code']);
    w.env.QWEN_HOME = join(w.home, 'qwen-home');
    ok(await w.client(['mcp', 'add', 'files', 'node', '/srv/server.js']), 'qwen mcp add files');
    const file = join(w.home, 'qwen-home', 'settings.json');
    const before = readFileSync(file);
    await protectAll(w, 'qwen-code', ['files']);
    await unprotectAll(w, 'qwen-code');
    expect(readFileSync(file).equals(before)).toBe(true);
  }, SLOW);
});

describe('Codex', () => {
  test('mcp add (stdio and url); protect wraps the stdio one and says why not the url one; mcp get shows the wrapper; unprotect restores the bytes', async () => {
    const w = await world(CLIENT_CLIS.codex);
    ok(await w.client(['mcp', 'add', 'files', '--env', 'FOO=bar', '--', 'node', '/srv/server.js', '--stdio']), 'codex mcp add files');
    ok(await w.client(['mcp', 'add', 'remote', '--url', REMOTE]), 'codex mcp add remote');
    const file = join(w.home, '.codex', 'config.toml');
    const before = readFileSync(file);
    const p = ok(await w.airlock(['protect', 'codex', '--all']), 'airlock protect codex --all');
    expect(p.stdout).toMatch(/^protected\s+files\s/m);
    expect(p.stdout).toMatch(/^skipped\s+remote\s.*remote server in a TOML file/m);
    const got = JSON.parse(ok(await w.client(['mcp', 'get', 'files', '--json']), 'codex mcp get files').stdout) as { transport: { command: string; args: string[] } };
    expect(got.transport.command).toBe(process.execPath);
    // the wrapper's Node flags and Airlock's script, then wrap's words and the server's
    expect(got.transport.args.slice(0, WRAPPER_NODE_FLAGS.length)).toEqual(WRAPPER_NODE_FLAGS);
    expect(got.transport.args.slice(WRAPPER_NODE_FLAGS.length + 1)).toEqual(['wrap', '--name', 'files', '--client', 'codex', 'node', '/srv/server.js', '--stdio']);
    await unprotectAll(w, 'codex');
    expect(readFileSync(file).equals(before)).toBe(true);
  }, SLOW);
});

describe('Cline CLI', () => {
  test('mcp add (stdio and streamable HTTP, in its transport shape); protect; unprotect restores the bytes', async () => {
    const w = await world(CLIENT_CLIS.cline);
    ok(await w.client(['mcp', 'add', 'files', '--yes', '--', 'node', '/srv/server.js', '--stdio']), 'cline mcp add files');
    ok(await w.client(['mcp', 'add', 'remote', '--yes', '--transport', 'http', '--header', 'Authorization: Bearer s3cret', REMOTE]), 'cline mcp add remote');
    const file = join(w.home, '.cline', 'data', 'settings', 'cline_mcp_settings.json');
    const before = readFileSync(file);
    expect(JSON.parse(before.toString('utf8'))).toMatchObject({ mcpServers: { files: { transport: { type: 'stdio' } } } });
    await protectAll(w, 'cline', ['files', 'remote']);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: Record<string, { transport: { type: string; command: string; args: string[]; env?: Record<string, string> } }> };
    expect(doc.mcpServers.files!.transport).toMatchObject({ type: 'stdio', command: process.execPath });
    expect(doc.mcpServers.remote!.transport).toMatchObject({ type: 'stdio', env: { AIRLOCK_HEADER_AUTHORIZATION: 'Bearer s3cret' } });
    // Cline's CLI has no list: removing a protected server by name shows it still reads the entry
    await unprotectAll(w, 'cline');
    expect(readFileSync(file).equals(before)).toBe(true);
  }, SLOW);
});

describe('opencode', () => {
  test('mcp add (local and remote); protect; its mcp list and debug config read the wrapper; unprotect restores the bytes', async () => {
    const w = await world(CLIENT_CLIS.opencode);
    ok(await w.client(['mcp', 'add', 'files', '--env', 'FOO=bar', '--', 'node', '/srv/server.js', '--stdio']), 'opencode mcp add files');
    ok(await w.client(['mcp', 'add', 'remote', '--url', REMOTE, '--header', 'Authorization=Bearer s3cret']), 'opencode mcp add remote');
    const file = join(w.home, '.config', 'opencode', 'opencode.jsonc');
    const before = readFileSync(file);
    await protectAll(w, 'opencode', ['files', 'remote']);
    const config = JSON.parse(ok(await w.client(['debug', 'config'], 120_000), 'opencode debug config').stdout) as { mcp: Record<string, { type: string; command: string[]; environment?: Record<string, string> }> };
    expect(config.mcp.files).toMatchObject({ type: 'local', environment: { FOO: 'bar' } });
    expect(config.mcp.files!.command[0]).toBe(process.execPath);
    expect(config.mcp.files!.command.slice(1, 1 + WRAPPER_NODE_FLAGS.length)).toEqual(WRAPPER_NODE_FLAGS);
    expect(config.mcp.files!.command.slice(2 + WRAPPER_NODE_FLAGS.length)).toEqual(['wrap', '--name', 'files', '--client', 'opencode', 'node', '/srv/server.js', '--stdio']);
    expect(config.mcp.remote).toMatchObject({ type: 'local' });
    expect(config.mcp.remote!.command).toContain('--url');
    const list = shown(ok(await w.client(['mcp', 'list'], 120_000), 'opencode mcp list'));
    expect(list).toMatch(/wrap --name files --client opencode node \/srv\/server\.js --stdio/);
    await unprotectAll(w, 'opencode');
    expect(readFileSync(file).equals(before)).toBe(true);
  }, SLOW);
});

describe('the MCP Inspector', () => {
  test('its --config starts a protected entry and lists the tools through the wrapper', async () => {
    const w = await world(CLIENT_CLIS.inspector, { MCP_INSPECTOR_SECRET_STORE: 'memory' });
    const config = join(w.home, '.cursor', 'mcp.json');
    mkdirSync(join(w.home, '.cursor'));
    writeFileSync(config, JSON.stringify({ mcpServers: { ev: { command: process.execPath, args: [EVERYTHING] } } }, null, 2));
    await protectAll(w, 'cursor', ['ev']);
    const args = (JSON.parse(readFileSync(config, 'utf8')) as { mcpServers: { ev: { args: string[] } } }).mcpServers.ev.args;
    // what the Inspector reads: no `--` of protect's for it to take as the end of its own options
    expect(args).not.toContain('--');
    // a running broker: without one the wrapper refuses the session at initialize (every call would be refused)
    const daemon = await startDaemon(w.data, [], { HOME: w.home });
    try {
      const r = ok(await w.client(['--cli', '--config', config, '--server', 'ev', '--method', 'tools/list'], 120_000), 'mcp-inspector tools/list');
      const tools = (JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as { tools: { name: string }[] }).tools.map((t) => t.name);
      expect(tools).toContain('echo');
    } finally {
      await daemon.stop();
    }
  }, SLOW);
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
