/** Protect/unprotect against real files: refusals, concurrent writers, modes, backups, symlinks, scopes. */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, lstatSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import {
  ClientConfigError,
  discoverClient,
  launcherFromEnv,
  LauncherError,
  protectServers,
  resolveServerEntry,
  unprotectServers,
  type ClientId,
} from '../../../proxy-core/src/clients/index.js';
import { ConcurrentEditError, writeFileAtomic } from '../../../proxy-core/src/clients/atomic-write.js';
import { backupPath } from '../../../proxy-core/src/clients/backup.js';
import { cliLauncher, ownLaunchers } from '../../../proxy-core/src/cli/launcher.js';
import { WRAPPER_NODE_FLAGS } from '../../../proxy-core/src/wrap/v8-tuning.js';
import { fixture, makeHome, TEST_LAUNCHER, type TestHome } from '../../helpers/client-home.js';

const homes: TestHome[] = [];
afterEach(() => {
  while (homes.length) homes.pop()!.remove();
});
function home(client: ClientId, content: string | Buffer | null): TestHome {
  const h = makeHome(client, content);
  homes.push(h);
  return h;
}

const CURSOR = '{\n  "mcpServers": {\n    "a": { "command": "npx", "args": ["-y", "a"], "env": { "TOKEN": "s3cret" } },\n    "b": { "command": "uvx" }\n  }\n}\n';

const MALFORMED: [ClientId, string][] = [
  ['claude-desktop', '{ "mcpServers": { "a": { "command": "x", } } }'],
  ['cursor', '{ "mcpServers": { "a": { "command": "x" }'],
  ['codex', '[mcp_servers.a]\ncommand = "x\n'],
  ['continue', 'mcpServers:\n  - name: a\n   command: x\n'],
  ['goose', 'extensions:\n  a: [\n'],
  ['zed', '{ "context_servers": { "a": { "command": "x" } }, }} '],
];

describe('a file that does not parse', () => {
  test.each(MALFORMED)('%s: refused, untouched, no backup', async (client, text) => {
    const h = home(client, text);
    const before = statSync(h.config);
    for (const servers of ['all', ['a']] as const) {
      const run = protectServers({ ...h.opts, client, servers: servers === 'all' ? 'all' : [...servers], launcher: TEST_LAUNCHER });
      await expect(run).rejects.toThrow(ClientConfigError);
      await expect(protectServers({ ...h.opts, client, servers: 'all', launcher: TEST_LAUNCHER })).rejects.toThrow(/line \d+/);
    }
    expect(readFileSync(h.config, 'utf8')).toBe(text);
    expect(statSync(h.config).mtimeMs).toBe(before.mtimeMs);
    expect(existsSync(join(h.env.AIRLOCK_HOME, 'backups'))).toBe(false);
    const report = await discoverClient(client, h.opts);
    expect(report.locations.find((l) => l.location.path === h.config)?.error).toMatch(/line \d+/);
  });

  test('bytes that are not UTF-8 are refused', async () => {
    const h = home('cursor', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]));
    await expect(protectServers({ ...h.opts, client: 'cursor', servers: 'all', launcher: TEST_LAUNCHER })).rejects.toThrow(/UTF-8/);
    expect(h.readBytes()).toEqual(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]));
  });
});

describe('concurrent writers', () => {
  test('a change between read and write is kept: the edit is redone on the new content', async () => {
    const h = home('cursor', CURSOR);
    let calls = 0;
    const report = await protectServers({
      ...h.opts,
      client: 'cursor',
      servers: ['a'],
      launcher: TEST_LAUNCHER,
      hooks: {
        beforeWrite: async () => {
          if (calls++ === 0) writeFileSync(h.config, CURSOR.replace('"b":', '"added": { "command": "z" },\n    "b":'));
        },
      },
    });
    expect(calls).toBe(2);
    expect(report.outcomes).toEqual([expect.objectContaining({ server: 'a', result: 'protected' })]);
    const servers = (await discoverClient('cursor', h.opts)).locations[0]!.servers;
    expect(servers.map((s) => [s.name, s.protected])).toEqual([['a', true], ['added', false], ['b', false]]);
  });

  test('a file that keeps changing is left to the other writer', async () => {
    const h = home('cursor', CURSOR);
    let n = 0;
    const run = protectServers({
      ...h.opts,
      client: 'cursor',
      servers: ['a'],
      launcher: TEST_LAUNCHER,
      hooks: { beforeWrite: async () => writeFileSync(h.config, CURSOR + ' '.repeat(++n)) },
    });
    await expect(run).rejects.toThrow(/kept changing/);
    expect(h.read()).toBe(CURSOR + ' '.repeat(n));
  });

  test('a client that rewrites the file right after us is reported, not ignored', async () => {
    const h = home('claude-desktop', CURSOR);
    const run = protectServers({
      ...h.opts,
      client: 'claude-desktop',
      servers: ['a'],
      launcher: TEST_LAUNCHER,
      processLister: async () => [],
      hooks: { afterWrite: async () => writeFileSync(h.config, CURSOR) },
    });
    await expect(run).rejects.toThrow(/no longer holds what Airlock wrote/);
  });

  test('writeFileAtomic refuses when the target changed, and leaves no temp file', async () => {
    const h = home('cursor', 'old');
    writeFileSync(h.config, 'someone else');
    await expect(writeFileAtomic(h.config, Buffer.from('mine'), { mode: 0o644, expect: Buffer.from('old') })).rejects.toThrow(ConcurrentEditError);
    expect(h.read()).toBe('someone else');
    expect(readdirSync(join(h.home, '.cursor'))).toEqual(['mcp.json']);
  });
});

describe('files on disk', () => {
  test('mode is kept and the first backup is never overwritten', async () => {
    const h = home('cursor', CURSOR);
    chmodSync(h.config, 0o600);
    const first = await protectServers({ ...h.opts, client: 'cursor', servers: 'all', launcher: TEST_LAUNCHER });
    expect(statSync(h.config).mode & 0o777).toBe(0o600);
    const backup = backupPath(h.env.AIRLOCK_HOME, h.config);
    expect(first.backups).toEqual([backup]);
    expect(readFileSync(backup, 'utf8')).toBe(CURSOR);
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    await unprotectServers({ ...h.opts, client: 'cursor', servers: 'all' });
    writeFileSync(h.config, CURSOR.replace('uvx', 'uvx2'));
    const second = await protectServers({ ...h.opts, client: 'cursor', servers: 'all', launcher: TEST_LAUNCHER });
    expect(second.backups).toEqual([]);
    expect(readFileSync(backup, 'utf8')).toBe(CURSOR);
  });

  test('a symlinked config stays a symlink; its target is edited', async () => {
    const h = home('cursor', null);
    const real = join(h.home, 'dotfiles', 'mcp.json');
    mkdirSync(join(h.home, 'dotfiles'));
    mkdirSync(join(h.home, '.cursor'));
    writeFileSync(real, CURSOR);
    symlinkSync(real, h.config);
    await protectServers({ ...h.opts, client: 'cursor', servers: ['b'], launcher: TEST_LAUNCHER });
    expect(lstatSync(h.config).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toContain('"--name", "b"');
    await unprotectServers({ ...h.opts, client: 'cursor', servers: ['b'] });
    expect(readFileSync(real, 'utf8')).toBe(CURSOR);
  });

  test('a byte-order mark is kept', async () => {
    const h = home('claude-desktop', Buffer.from('\uFEFF' + CURSOR, 'utf8'));
    await protectServers({ ...h.opts, client: 'claude-desktop', servers: 'all', launcher: TEST_LAUNCHER, processLister: async () => [] });
    expect(h.readBytes().subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    await unprotectServers({ ...h.opts, client: 'claude-desktop', servers: 'all', processLister: async () => [] });
    expect(h.readBytes().toString('utf8')).toBe('\uFEFF' + CURSOR);
  });
});

describe('choosing servers', () => {
  test('an unknown name fails and lists the known ones; nothing is written', async () => {
    const h = home('cursor', CURSOR);
    await expect(protectServers({ ...h.opts, client: 'cursor', servers: ['a', 'nope'], launcher: TEST_LAUNCHER })).rejects.toThrow('no server "nope" in Cursor\'s config (servers: a, b)');
    expect(h.read()).toBe(CURSOR);
  });

  test('a remote server in a TOML file is not protectable, with the reason', async () => {
    const h = home('codex', fixture('codex', 'before.toml').toString());
    await expect(protectServers({ ...h.opts, client: 'codex', servers: ['figma'], launcher: TEST_LAUNCHER })).rejects.toThrow(/remote server in a TOML file/);
  });

  test('remote servers of a JSON file are protectable, and are listed with their transport', async () => {
    const h = home('cline', fixture('cline', 'before.json').toString());
    const s = (await discoverClient('cline', h.opts)).locations[0]!.servers;
    expect(s.map((x) => [x.name, x.transport, x.protected, x.unprotectable !== undefined])).toEqual([
      ['weather', 'stdio', false, false],
      ['streaming', 'http', false, false],
      ['old-sse', 'sse', false, false],
    ]);
  });

  test('the same name in user and project scope of Claude Code is protected in both', async () => {
    const h = home('claude-code', fixture('claude-code', 'before.json').toString().replace('"sqlite"', '"memory"'));
    const r = await protectServers({ ...h.opts, client: 'claude-code', servers: ['memory'], launcher: TEST_LAUNCHER, processLister: async () => [] });
    expect(r.outcomes.map((o) => [o.scope, o.result])).toEqual([['global', 'protected'], ['local', 'protected']]);
    const local = await resolveServerEntry('claude-code', 'memory', h.opts);
    expect(local.location.scope).toBe('local');
    expect(local.command).toBe('uvx');
  });

  test('--scope limits the change to one scope', async () => {
    const h = home('claude-code', fixture('claude-code', 'before.json').toString().replace('"sqlite"', '"memory"'));
    const r = await protectServers({ ...h.opts, client: 'claude-code', servers: ['memory'], scope: 'local', launcher: TEST_LAUNCHER, processLister: async () => [] });
    expect(r.outcomes.map((o) => o.scope)).toEqual(['local']);
  });

  test('a running Claude Desktop is warned about', async () => {
    const h = home('claude-desktop', CURSOR);
    const warnings: string[] = [];
    await protectServers({
      ...h.opts,
      client: 'claude-desktop',
      servers: ['a'],
      launcher: TEST_LAUNCHER,
      processLister: async () => ['/usr/lib/systemd/systemd', 'claude-desktop'],
      warn: (m) => warnings.push(m),
    });
    expect(warnings).toEqual([expect.stringMatching(/Claude Desktop is running/)]);
  });

  test('Continue workspace blocks in .continue/mcpServers are found and protected', async () => {
    const h = home('continue', null);
    const dir = join(h.project, '.continue', 'mcpServers');
    mkdirSync(dir, { recursive: true });
    const block = 'name: Block\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: db\n    command: npx\n    args: [-y, db]\n';
    writeFileSync(join(dir, 'db.yaml'), block);
    const r = await protectServers({ ...h.opts, client: 'continue', servers: ['db'], launcher: TEST_LAUNCHER });
    expect(r.outcomes).toEqual([expect.objectContaining({ scope: 'project', result: 'protected' })]);
    await unprotectServers({ ...h.opts, client: 'continue', servers: ['db'] });
    expect(readFileSync(join(dir, 'db.yaml'), 'utf8')).toBe(block);
  });
});

describe('resolveServerEntry', () => {
  test('gives the original command, args, env and cwd of a protected entry', async () => {
    const h = home('cline', fixture('cline', 'before.json').toString());
    await protectServers({ ...h.opts, client: 'cline', servers: ['weather'], launcher: TEST_LAUNCHER });
    expect(await resolveServerEntry('cline', 'weather', h.opts)).toMatchObject({
      command: 'node',
      args: ['/Users/dev/mcp/weather/build/index.js'],
      env: { OPENWEATHER_API_KEY: 'fixture-weather-key' },
      cwd: '/Users/dev/mcp/weather',
    });
  });
  test('reads Goose envs and refuses remote or missing servers', async () => {
    const h = home('goose', fixture('goose', 'before.yaml').toString());
    expect(await resolveServerEntry('goose', 'github', h.opts)).toMatchObject({ command: 'npx', env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_fixture' } });
    await expect(resolveServerEntry('goose', 'remote', h.opts)).rejects.toThrow(/remote/);
    await expect(resolveServerEntry('goose', 'nope', h.opts)).rejects.toThrow(/no server "nope"/);
  });
});

describe('launcher', () => {
  test("the CLI's default is this node, the wrapper's Node flags and the repo bin, both paths absolute", () => {
    const l = cliLauncher({});
    expect(l.command).toBe(process.execPath);
    expect(l.argsPrefix).toEqual([...WRAPPER_NODE_FLAGS, expect.stringMatching(/bin[\\/]airlock\.js$/)]);
    expect(WRAPPER_NODE_FLAGS.every((f) => f.startsWith('--'))).toBe(true);
    expect(existsSync(l.argsPrefix.at(-1)!)).toBe(true);
  });
  test('what counts as this checkout: the launcher protect writes, and the same without the flags (entries written before them)', () => {
    const [mine, before, ...rest] = ownLaunchers({});
    expect(rest).toEqual([]);
    expect(mine).toEqual(cliLauncher({}));
    expect(before).toEqual({ command: process.execPath, argsPrefix: [cliLauncher({}).argsPrefix.at(-1)] });
    expect(ownLaunchers({ AIRLOCK_LAUNCHER: '["/opt/Airlock/airlock"]' })).toEqual([{ command: '/opt/Airlock/airlock', argsPrefix: [] }, mine, before]);
  });
  test('only those exact words: an entry with other Node flags before the script (a preload, say) is not protected', async () => {
    const h = home('cursor', CURSOR);
    const bin = cliLauncher({}).argsPrefix.at(-1)!;
    const opts = { ...h.opts, launchers: ownLaunchers({}) };
    for (const flags of [['--require', '/tmp/evil.cjs'], ['--v8-pool-size=1', '--import=/tmp/evil.mjs'], ['--v8-pool-size=2']]) {
      await protectServers({ ...opts, client: 'cursor', servers: ['b'], launcher: { command: process.execPath, argsPrefix: [...flags, bin] } });
      const b = (await discoverClient('cursor', opts)).locations[0]!.servers[1]!;
      // not Airlock's launcher: a look-alike, whatever the reason it gives (a flag's path that does not exist is "gone")
      expect(b, flags.join(' ')).toMatchObject({ protected: false, lookAlike: expect.stringMatching(/looks wrapped/) });
      await unprotectServers({ ...opts, client: 'cursor', servers: ['b'] }).catch(() => {});
      h.write(CURSOR);
    }
    // and the real one is
    await protectServers({ ...opts, client: 'cursor', servers: ['b'], launcher: cliLauncher({}) });
    expect((await discoverClient('cursor', opts)).locations[0]!.servers[1]!).toMatchObject({ protected: true });
  });
  test('AIRLOCK_LAUNCHER replaces it', async () => {
    expect(launcherFromEnv({})).toBeUndefined();
    expect(launcherFromEnv({ AIRLOCK_LAUNCHER: ' ' })).toBeUndefined();
    expect(launcherFromEnv({ AIRLOCK_LAUNCHER: '["/opt/Airlock/airlock", "--quiet"]' })).toEqual({ command: '/opt/Airlock/airlock', argsPrefix: ['--quiet'] });
    const h = home('cursor', CURSOR);
    const launcher = cliLauncher({ ...h.env, AIRLOCK_LAUNCHER: '["/opt/Airlock/airlock"]' });
    await protectServers({ ...h.opts, client: 'cursor', servers: ['b'], launcher });
    const b = (await discoverClient('cursor', { ...h.opts, launchers: [launcher] })).locations[0]!.servers[1]!;
    expect(b.written).toEqual({ command: '/opt/Airlock/airlock', args: ['wrap', '--name', 'b', '--client', 'cursor', 'uvx'] });
    expect(b.protected).toBe(true);
  });
  test.each(['nope', '[]', '[1]', '{"a":1}', '[""]'])('AIRLOCK_LAUNCHER=%s is refused', (value) => {
    expect(() => launcherFromEnv({ AIRLOCK_LAUNCHER: value })).toThrow(LauncherError);
    expect(() => cliLauncher({ AIRLOCK_LAUNCHER: value })).toThrow(LauncherError);
  });
  test('the library never picks one: protect without a launcher is refused and writes nothing', async () => {
    const h = home('cursor', CURSOR);
    // what a JavaScript caller (the types forbid it) or a careless cast would send
    const req = { ...h.opts, client: 'cursor', servers: 'all' } as unknown as Parameters<typeof protectServers>[0];
    await expect(protectServers(req)).rejects.toThrow(ClientConfigError);
    await expect(protectServers(req)).rejects.toThrow(/needs a launcher/);
    expect(h.read()).toBe(CURSOR);
    expect(existsSync(join(h.env.AIRLOCK_HOME, 'backups'))).toBe(false);
  });
  test('unprotect needs no launcher: the original command is in the entry', async () => {
    const h = home('cursor', CURSOR);
    await protectServers({ ...h.opts, client: 'cursor', servers: 'all', launcher: TEST_LAUNCHER });
    expect(h.read()).not.toBe(CURSOR);
    await unprotectServers({ ...h.opts, client: 'cursor', servers: 'all' });
    expect(h.read()).toBe(CURSOR);
  });
});

describe('stale launcher', () => {
  test('an entry protected from a checkout that moved is re-protected with the current launcher', async () => {
    const h = home('cursor', CURSOR);
    const gone = { command: '/usr/bin/env', argsPrefix: [join(h.home, 'old-checkout', 'bin', 'airlock.js')] };
    await protectServers({ ...h.opts, client: 'cursor', servers: ['b'], launcher: gone });
    const stale = (await discoverClient('cursor', h.opts)).locations[0]!.servers[1]!;
    // not Airlock's launcher (and gone): not protected, and protect rewrites it rather than wrapping it
    expect(stale).toMatchObject({ protected: false, lookAlikeStale: true, lookAlike: expect.stringContaining(`${gone.argsPrefix[0]} is gone`) });
    const r = await protectServers({ ...h.opts, client: 'cursor', servers: ['b'], launcher: TEST_LAUNCHER });
    expect(r.outcomes).toEqual([expect.objectContaining({ result: 'protected' })]);
    const fresh = (await discoverClient('cursor', h.opts)).locations[0]!.servers[1]!;
    expect(fresh.written?.args).toEqual([...TEST_LAUNCHER.argsPrefix, 'wrap', '--name', 'b', '--client', 'cursor', 'uvx']);
    await unprotectServers({ ...h.opts, client: 'cursor', servers: ['b'] });
    expect(h.read()).toBe(CURSOR);
  });

  test('a server name that looks like an option is passed glued to --name', async () => {
    const h = home('cursor', '{"mcpServers": {"-x": {"command": "y"}}}');
    await protectServers({ ...h.opts, client: 'cursor', servers: ['-x'], launcher: TEST_LAUNCHER });
    const s = (await discoverClient('cursor', h.opts)).locations[0]!.servers[0]!;
    expect(s.written?.args).toContain('--name=-x');
    expect(s.wrappedAs?.name).toBe('-x');
    await unprotectServers({ ...h.opts, client: 'cursor', servers: ['-x'] });
    expect(h.read()).toBe('{"mcpServers": {"-x": {"command": "y"}}}');
  });
});
