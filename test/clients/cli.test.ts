/** The real `airlock clients/protect/unprotect` binary against a throwaway home. Needs `npm run build`. */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, test } from 'vitest';
import { makeHome, type TestHome } from '../helpers/client-home.js';
import { CLIENT_IDS } from '../../proxy-core/src/clients/index.js';
import { WRAPPER_NODE_FLAGS } from '../../proxy-core/src/wrap/v8-tuning.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'airlock.js');

const homes: TestHome[] = [];
afterEach(() => {
  while (homes.length) homes.pop()!.remove();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function airlock(h: TestHome, args: string[], cwd = h.home): Promise<Run> {
  // Only this home counts: blank out every variable known-clients reads from the real environment.
  const env = { ...process.env, ...h.env, XDG_CONFIG_HOME: '', XDG_DATA_HOME: '', CODEX_HOME: '', CLAUDE_CONFIG_DIR: '', APPDATA: '', LOCALAPPDATA: '', USERPROFILE: '' };
  return new Promise((res) => {
    execFile(process.execPath, [CLI, ...args], { env, cwd, timeout: 20_000 }, (err, stdout, stderr) => {
      res({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const CURSOR =
  '{\n  // mine\n  "mcpServers": {\n    "a": { "command": "npx", "args": ["-y", "a", "--api-key", "sk-live-123"], "env": { "TOKEN": "s3cret-env" } },\n' +
  '    "r": { "url": "https://r.example.com/mcp?token=s3cret-url", "headers": { "Authorization": "Bearer s3cret-header" } }\n  }\n}\n';

function setup(): TestHome {
  const h = makeHome('cursor', CURSOR);
  homes.push(h);
  const codex = join(h.home, '.codex', 'config.toml');
  mkdirSync(dirname(codex), { recursive: true });
  writeFileSync(codex, '[mcp_servers.x]\ncommand = "x\n');
  return h;
}

describe('airlock clients', () => {
  test('--json lists clients, servers and the broken file, and never a secret', async () => {
    const h = setup();
    const r = await airlock(h, ['clients', '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/s3cret|sk-live-123/);
    const list = JSON.parse(r.stdout) as { client: string; found: boolean; locations: { path: string; error?: string; servers: Record<string, unknown>[] }[] }[];
    expect(list.map((c) => c.client)).toHaveLength(CLIENT_IDS.length);
    const cursor = list.find((c) => c.client === 'cursor')!;
    expect(cursor.found).toBe(true);
    expect(cursor.locations[0]!.servers).toEqual([
      { name: 'a', transport: 'stdio', protected: false, protectable: true, command: 'npx', args: ['-y', 'a', '--api-key', '<redacted>'], envKeys: ['TOKEN'] },
      { name: 'r', transport: 'http', protected: false, protectable: false, reason: expect.stringMatching(/URL carries a secret \(token=…\)/), url: 'https://r.example.com/mcp', envKeys: [] },
    ]);
    const codex = list.find((c) => c.client === 'codex')!;
    expect(codex.locations[0]!.error).toMatch(/line 2/);
  });

  test('human output names each file and state', async () => {
    const h = setup();
    const r = await airlock(h, ['clients']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Cursor (cursor)');
    expect(r.stdout).toMatch(/a\s+stdio\s+not protected/);
    expect(r.stdout).toMatch(/config\.toml \[global\]: cannot read: .*line 2/);
    expect(r.stdout).not.toMatch(/s3cret/);
  });
});

describe('airlock protect / unprotect', () => {
  test('protect then unprotect: exit 0, file restored byte for byte', async () => {
    const h = setup();
    const p = await airlock(h, ['protect', 'cursor', 'a']);
    expect(p).toMatchObject({ code: 0, stderr: '' });
    expect(p.stdout).toMatch(/^protected\s+a\s/m);
    const wrapped = JSON.parse(readFileSync(h.config, 'utf8').replace(/\/\/ mine/, '')) as { mcpServers: { a: { command: string; args: string[] } } };
    expect(wrapped.mcpServers.a.command).toBe(process.execPath);
    // the wrapper's Node flags, then the script
    const flags = WRAPPER_NODE_FLAGS.length;
    expect(flags).toBeGreaterThan(0);
    expect(wrapped.mcpServers.a.args.slice(0, flags)).toEqual(WRAPPER_NODE_FLAGS);
    expect(wrapped.mcpServers.a.args.slice(flags + 1, flags + 8)).toEqual(['wrap', '--name', 'a', '--client', 'cursor', 'npx', '-y']);
    expect(wrapped.mcpServers.a.args[flags]).toBe(resolve(CLI));
    const again = await airlock(h, ['protect', 'cursor', 'a']);
    expect(again.stdout).toMatch(/unchanged\s+a .*already protected/);
    const u = await airlock(h, ['unprotect', 'cursor', '--all']);
    expect(u.code).toBe(0);
    expect(h.read()).toBe(CURSOR);
  });

  test('an entry protect wrote before it gave the wrapper Node flags: still protected, left as it is, unprotected back to the original', async () => {
    const h = makeHome('cursor', '{"mcpServers": {"a": {"command": "npx", "args": ["-y", "a"]}}}');
    homes.push(h);
    const before = { mcpServers: { a: { command: process.execPath, args: [resolve(CLI), 'wrap', '--name', 'a', '--client', 'cursor', 'npx', '-y', 'a'] } } };
    writeFileSync(h.config, JSON.stringify(before));
    const list = JSON.parse((await airlock(h, ['clients', '--json'])).stdout) as { client: string; locations: { servers: { name: string; protected: boolean }[] }[] }[];
    expect(list.find((c) => c.client === 'cursor')!.locations[0]!.servers).toEqual([expect.objectContaining({ name: 'a', protected: true })]);
    const again = await airlock(h, ['protect', 'cursor', 'a']);
    expect(again.stdout).toMatch(/unchanged\s+a .*already protected/);
    expect(h.read()).toBe(JSON.stringify(before));
    expect((await airlock(h, ['unprotect', 'cursor', 'a'])).code).toBe(0);
    expect(JSON.parse(h.read())).toEqual({ mcpServers: { a: { command: 'npx', args: ['-y', 'a'] } } });
  });

  test("the data dir's backups folder made a symlink: protect changes nothing, writes nothing where it leads, and says why", async () => {
    const h = setup();
    const elsewhere = mkdtempSync(join(tmpdir(), 'al-elsewhere-'));
    try {
      mkdirSync(h.env.AIRLOCK_HOME, { recursive: true });
      symlinkSync(elsewhere, join(h.env.AIRLOCK_HOME, 'backups'));
      const p = await airlock(h, ['protect', 'cursor', 'a']);
      expect(p.code).not.toBe(0);
      expect(p.stderr).toContain(`the client configs' backups folder ${join(h.env.AIRLOCK_HOME, 'backups')} is a symlink`);
      expect(p.stderr).toMatch(/\(file left untouched\)$/m);
      expect(h.read()).toBe(CURSOR);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  test('--project reaches the project config', async () => {
    const h = setup();
    const proj = join(h.home, 'work');
    mkdirSync(join(proj, '.cursor'), { recursive: true });
    writeFileSync(join(proj, '.cursor', 'mcp.json'), '{"mcpServers": {"p": {"command": "p"}}}');
    expect((await airlock(h, ['protect', 'cursor', 'p', '--project', proj])).code).toBe(0);
    expect(readFileSync(join(proj, '.cursor', 'mcp.json'), 'utf8')).toContain('"--name", "p"');
    // The default project is the current directory.
    expect((await airlock(h, ['unprotect', 'cursor', 'p'], proj)).code).toBe(0);
    expect(readFileSync(join(proj, '.cursor', 'mcp.json'), 'utf8')).toBe('{"mcpServers": {"p": {"command": "p"}}}');
  });

  const FAILURES: [string, string[], number, RegExp][] = [
    ['unknown server', ['protect', 'cursor', 'nope'], 1, /no server "nope"/],
    ['remote server with a secret in its URL', ['protect', 'cursor', 'r'], 1, /URL carries a secret/],
    ['broken file', ['protect', 'codex', '--all'], 1, /config\.toml.*line 2/],
    ['unknown client', ['protect', 'vim', 'a'], 2, /unknown client "vim"/],
    ['no server named', ['protect', 'cursor'], 2, /needs server names or --all/],
    ['names and --all', ['unprotect', 'cursor', 'a', '--all'], 2, /not both/],
    ['unknown option', ['protect', 'cursor', 'a', '--force'], 2, /--force/],
    ['bad scope', ['protect', 'cursor', 'a', '--scope', 'team'], 2, /--scope/],
  ];
  test.each(FAILURES)('%s: non-zero exit, one line on stderr, nothing written', async (_t, args, code, message) => {
    const h = setup();
    const r = await airlock(h, args);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stdout).toBe('');
    expect(h.read()).toBe(CURSOR);
  });
});

describe('a client that is not installed', () => {
  test('protect says where it looked', async () => {
    const h = setup();
    const r = await airlock(h, ['protect', 'windsurf', '--all']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^airlock: no Windsurf config found \(looked for .*mcp_config\.json\)\n$/);
  });
});
