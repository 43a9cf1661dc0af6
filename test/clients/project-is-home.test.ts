/**
 * The project folder is HOME (a client started from ~): the project config is then the global one. It must be
 * listed once and protected once, whether the paths are equal, reached through a symlink, or differ only in case
 * on macOS and Windows.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, test } from 'vitest';
import { discoverClient, protectServers, unprotectServers, type ClientId } from '../../proxy-core/src/clients/index.js';
import { allLocations } from '../../proxy-core/src/clients/discover.js';
import { fixture, makeHome, TEST_LAUNCHER, type TestHome } from '../helpers/client-home.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'airlock.js');

const homes: TestHome[] = [];
afterEach(() => {
  while (homes.length) homes.pop()!.remove();
});
function home(client: ClientId, content: string): TestHome {
  const h = makeHome(client, content);
  homes.push(h);
  return h;
}

/** Clients whose project file sits at the same place under the project as the global file under HOME. */
const SAME_PLACE: [ClientId, string][] = [
  ['cursor', fixture('cursor', 'before.json').toString()],
  ['gemini-cli', fixture('gemini-cli', 'before.json').toString()],
  ['codex', fixture('codex', 'before.toml').toString()],
];

async function listed(client: ClientId, h: TestHome, projectDir: string) {
  const r = await discoverClient(client, { ...h.opts, projectDir });
  return r.locations.filter((l) => l.exists).map((l) => ({ path: l.location.path, scope: l.location.scope, servers: l.servers.length }));
}

describe.each(SAME_PLACE)('%s with the project folder = HOME', (client, text) => {
  test('the file is listed once, as global', async () => {
    const h = home(client, text);
    expect(await listed(client, h, h.home)).toEqual([{ path: h.config, scope: 'global', servers: expect.any(Number) }]);
  });

  test('protect --all changes each server once, and unprotect restores the bytes', async () => {
    const h = home(client, text);
    const opts = { ...h.opts, projectDir: h.home, client, servers: 'all' as const, launcher: TEST_LAUNCHER };
    const r = await protectServers(opts);
    const protectedOnes = r.outcomes.filter((o) => o.result === 'protected');
    expect(protectedOnes.length).toBeGreaterThan(0);
    expect(new Set(protectedOnes.map((o) => o.server)).size).toBe(protectedOnes.length);
    expect(r.outcomes.every((o) => o.scope === 'global')).toBe(true);
    const u = await unprotectServers({ ...opts });
    expect(u.outcomes.filter((o) => o.result === 'unprotected')).toHaveLength(protectedOnes.length);
    expect(h.read()).toBe(text);
  });

  test('a project folder that is a symlink to HOME: the same real file, listed once', async () => {
    const h = home(client, text);
    const link = join(h.project, 'home-link');
    symlinkSync(h.home, link);
    expect(await listed(client, h, link)).toEqual([{ path: h.config, scope: 'global', servers: expect.any(Number) }]);
  });
});

test('a project below HOME still has its own file', async () => {
  const h = home('cursor', '{"mcpServers": {"g": {"command": "g"}}}');
  mkdirSync(join(h.project, '.cursor'));
  writeFileSync(join(h.project, '.cursor', 'mcp.json'), '{"mcpServers": {"p": {"command": "p"}}}');
  expect((await listed('cursor', h, h.project)).map((l) => l.scope)).toEqual(['global', 'project']);
});

test("Claude Code with the project = HOME: the user servers and HOME's project servers in ~/.claude.json stay apart", async () => {
  const h = home('claude-code', JSON.stringify({ mcpServers: { u: { command: 'u' } }, projects: { PLACEHOLDER: { mcpServers: { l: { command: 'l' } } } } }));
  writeFileSync(h.config, readFileSync(h.config, 'utf8').replace('PLACEHOLDER', h.home));
  const r = await discoverClient('claude-code', { ...h.opts, projectDir: h.home });
  expect(r.locations.filter((l) => l.exists).map((l) => [l.location.scope, l.servers.map((s) => s.name)])).toEqual([
    ['global', ['u']],
    ['local', ['l']],
  ]);
  const p = await protectServers({ ...h.opts, projectDir: h.home, client: 'claude-code', servers: 'all', launcher: TEST_LAUNCHER, processLister: async () => [] });
  expect(p.outcomes.map((o) => [o.scope, o.server, o.result])).toEqual([
    ['global', 'u', 'protected'],
    ['local', 'l', 'protected'],
  ]);
});

describe('paths that differ only in case', () => {
  const mac = { env: { HOME: '/Users/Ann' }, platform: 'darwin' as const };
  const win = { env: { USERPROFILE: 'C:\\Users\\Ann', APPDATA: 'C:\\Users\\Ann\\AppData\\Roaming' }, platform: 'win32' as const };
  const linux = { env: { HOME: '/home/Ann' }, platform: 'linux' as const };
  test.each([
    ['macOS', mac, '/users/ann', 1],
    ['Windows', win, 'c:\\users\\ANN', 1],
    ['Linux (case matters)', linux, '/home/ann', 2],
  ] as const)('%s', async (_os, o, projectDir, count) => {
    const paths = (await allLocations('cursor', { ...o, projectDir })).map((l) => l.path);
    expect(paths).toHaveLength(count);
  });
});

test('`airlock clients --json` and `airlock protect` run from HOME name the file once', async () => {
  const h = home('cursor', '{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}');
  const env = { ...process.env, ...h.env, XDG_CONFIG_HOME: '', XDG_DATA_HOME: '', CODEX_HOME: '', CLAUDE_CONFIG_DIR: '' };
  const run = (args: string[]) =>
    new Promise<{ code: number; stdout: string }>((res) =>
      execFile(process.execPath, [CLI, ...args], { env, cwd: h.home, timeout: 20_000 }, (err, stdout) => res({ code: err ? 1 : 0, stdout })),
    );
  const list = await run(['clients', '--json']);
  const cursor = (JSON.parse(list.stdout) as { client: string; locations: { path: string }[] }[]).find((c) => c.client === 'cursor')!;
  expect(cursor.locations.map((l) => l.path)).toEqual([h.config]);
  const p = await run(['protect', 'cursor', '--all']);
  expect(p.code).toBe(0);
  expect(p.stdout.match(/^protected/gm)).toHaveLength(2);
});
