/**
 * `--home`: a data dir that is not the default one is written into wrapped entries, because clients that start
 * servers with a scrubbed environment drop AIRLOCK_HOME. Detection, re-protection and byte-for-byte unprotect
 * all understand it; entries wrapped by hand are never wrapped again.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { discoverClient, protectServers, unprotectServers, unwrap, wrapperHome, type ClientId } from '../../proxy-core/src/clients/index.js';
import { parseWrapArgv, wrappedByHand } from '../../proxy-core/src/clients/wrapped.js';
import { fixture, makeHome, TEST_LAUNCHER, type TestHome } from '../helpers/client-home.js';

const homes: TestHome[] = [];
afterEach(() => {
  while (homes.length) homes.pop()!.remove();
});
function home(client: ClientId, content: string | Buffer): TestHome {
  const h = makeHome(client, content);
  homes.push(h);
  return h;
}

type Opts = Parameters<typeof wrapperHome>[0];
const WRAPPER_HOME: [string, Opts, string | undefined][] = [
  ['no AIRLOCK_HOME', { env: { HOME: '/home/ann' }, platform: 'linux' }, undefined],
  ['AIRLOCK_HOME equal to the default', { env: { HOME: '/home/ann', AIRLOCK_HOME: '/home/ann/.local/share/airlock' }, platform: 'linux' }, undefined],
  ['AIRLOCK_HOME elsewhere', { env: { HOME: '/home/ann', AIRLOCK_HOME: '/data/airlock' }, platform: 'linux' }, '/data/airlock'],
  ['XDG_DATA_HOME (dropped by a scrubbed env)', { env: { HOME: '/home/ann', XDG_DATA_HOME: '/xdg' }, platform: 'linux' }, '/xdg/airlock'],
  ['macOS default', { env: { HOME: '/Users/ann' }, platform: 'darwin' }, undefined],
  ['macOS AIRLOCK_HOME elsewhere', { env: { HOME: '/Users/ann', AIRLOCK_HOME: '/Volumes/x/airlock' }, platform: 'darwin' }, '/Volumes/x/airlock'],
  ['Windows default', { env: { USERPROFILE: 'C:\\Users\\Ann', APPDATA: 'C:\\Users\\Ann\\AppData\\Roaming' }, platform: 'win32' }, undefined],
  [
    'Windows AIRLOCK_HOME elsewhere',
    { env: { USERPROFILE: 'C:\\Users\\Ann', APPDATA: 'C:\\Users\\Ann\\AppData\\Roaming', AIRLOCK_HOME: 'D:\\airlock' }, platform: 'win32' },
    'D:\\airlock',
  ],
  ['the broker passes its own dir', { env: { HOME: '/home/ann' }, platform: 'linux', dataDir: '/srv/airlock' }, '/srv/airlock'],
  ['the broker passes the default dir', { env: { HOME: '/home/ann' }, platform: 'linux', dataDir: '/home/ann/.local/share/airlock' }, undefined],
];

test.each(WRAPPER_HOME)('wrapperHome: %s', (_what, opts, expected) => {
  expect(wrapperHome(opts)).toBe(expected);
});

test('wrapperHome: a relative AIRLOCK_HOME is written absolute', () => {
  expect(wrapperHome({ env: { HOME: '/home/ann', AIRLOCK_HOME: 'rel/data' }, platform: process.platform === 'win32' ? 'win32' : 'linux' })).toBe(
    `${process.cwd()}/rel/data`.replace(/\//g, process.platform === 'win32' ? '\\' : '/'),
  );
});

const CASES: { client: ClientId; ext: string }[] = [
  { client: 'claude-desktop', ext: 'json' },
  { client: 'cursor', ext: 'json' },
  { client: 'zed', ext: 'json' },
  { client: 'codex', ext: 'toml' },
  { client: 'continue', ext: 'yaml' },
  { client: 'goose', ext: 'yaml' },
];

describe.each(CASES)('$client with a non-default data dir', ({ client, ext }) => {
  test('protect writes --home before --; re-protecting with the same dir changes nothing; unprotect restores the bytes', async () => {
    const before = fixture(client, `before.${ext}`).toString();
    const h = home(client, before);
    const data = `${h.home}/elsewhere`;
    const opts = { ...h.opts, env: { ...h.env, AIRLOCK_HOME: data }, client, servers: 'all' as const, launcher: TEST_LAUNCHER, processLister: async () => [] };
    await protectServers(opts);
    // seen from the default data dir, these entries report elsewhere: not protected there
    const fromDefault = (await discoverClient(client, h.opts)).locations.flatMap((l) => l.servers);
    expect(fromDefault.filter((s) => s.protected)).toEqual([]);
    expect(fromDefault.filter((s) => s.otherHome === data).length).toBeGreaterThan(0);
    const servers = (await discoverClient(client, opts)).locations.flatMap((l) => l.servers).filter((s) => s.protected);
    expect(servers.length).toBeGreaterThan(0);
    for (const s of servers) {
      const args = s.written!.args;
      expect(args.slice(args.indexOf('--home'), args.indexOf('--home') + 2)).toEqual(['--home', data]);
      expect(args.indexOf('--home')).toBeLessThan(args.indexOf(s.original?.command ?? '--url'));
      expect(s.wrappedAs?.home).toBe(data);
    }
    const bytes = h.readBytes();
    const again = await protectServers(opts);
    expect(again.outcomes.filter((o) => o.result === 'protected')).toEqual([]);
    expect(h.readBytes().equals(bytes)).toBe(true);
    await unprotectServers(opts);
    expect(h.read()).toBe(before);
  });
});

test('protect again with another data dir moves --home; with the default one it drops it', async () => {
  const text = '{"mcpServers": {"a": {"command": "npx", "args": ["-y", "a"]}}}';
  const h = home('cursor', text);
  const at = (dir: string | undefined) => ({ ...h.opts, env: { HOME: h.home, ...(dir ? { AIRLOCK_HOME: dir } : {}) }, client: 'cursor' as const, servers: 'all' as const, launcher: TEST_LAUNCHER });
  const argsNow = async () => (await discoverClient('cursor', h.opts)).locations[0]!.servers[0]!.written!.args;
  await protectServers(at('/one'));
  expect(await argsNow()).toContain('/one');
  const moved = await protectServers(at('/two'));
  expect(moved.outcomes.map((o) => o.result)).toEqual(['protected']);
  expect(await argsNow()).toEqual([...TEST_LAUNCHER.argsPrefix, 'wrap', '--name', 'a', '--client', 'cursor', '--home', '/two', 'npx', '-y', 'a']);
  await protectServers(at(undefined));
  expect(await argsNow()).toEqual([...TEST_LAUNCHER.argsPrefix, 'wrap', '--name', 'a', '--client', 'cursor', 'npx', '-y', 'a']);
  await unprotectServers(at(undefined));
  expect(h.read()).toBe(text);
});

describe('reading wrapped entries', () => {
  const L = ['/opt/airlock/bin/airlock.js', 'wrap'];
  test.each([
    ['--home DIR', [...L, '--name', 's', '--client', 'c', '--home', '/d', '--', 'x', 'y'], '/d'],
    ['--home=DIR', [...L, '--name', 's', '--home=/d', '--client', 'c', '--', 'x', 'y'], '/d'],
    ['no --home', [...L, '--name', 's', '--client', 'c', '--', 'x', 'y'], undefined],
    ['with --trust-read-only-hints', [...L, '--trust-read-only-hints', '--name', 's', '--home', '/d', '--', 'x', 'y'], '/d'],
  ])('unwrap understands %s', (_what, args, homeDir) => {
    const u = unwrap({ command: 'node', args });
    expect(u).toMatchObject({ name: 's', home: homeDir, original: { command: 'x', args: ['y'] } });
    expect(args[u!.separator]).toBe('--');
  });

  test('an entry without `--` (what protect writes now) is protect\'s too, and the server command follows the last option', () => {
    const args = [...L, '--name', 's', '--client', 'c', '--home', '/d', 'x', 'y'];
    const u = unwrap({ command: 'node', args });
    expect(u).toMatchObject({ name: 's', home: '/d', original: { command: 'x', args: ['y'] } });
    expect(args[u!.separator]).toBe('/d');
  });

  test('a --home value equal to "--" is not mistaken for the separator', () => {
    expect(unwrap({ command: 'node', args: [...L, '--name', 's', '--home', '--', 'x'] })).toBeNull();
  });

  test('an entry wrapped by hand without --name is recognised, never wrapped again, left alone both ways', async () => {
    const args = ['wrap', '--client', 'cursor', 'node', 'server.js'];
    expect(unwrap({ command: '/opt/Airlock/airlock', args })).toBeNull();
    const text = JSON.stringify({ mcpServers: { s: { command: '/opt/Airlock/airlock', args } } });
    const h = home('cursor', text);
    const opts = { ...h.opts, launchers: [{ command: '/opt/Airlock/airlock', argsPrefix: [] }] };
    const s = (await discoverClient('cursor', opts)).locations[0]!.servers[0]!;
    expect(s).toMatchObject({ protected: true, unprotectable: expect.stringMatching(/by hand/) });
    const p = await protectServers({ ...opts, client: 'cursor', servers: ['s'], launcher: TEST_LAUNCHER });
    expect(p.outcomes.map((o) => o.result)).toEqual(['skipped']);
    const u = await unprotectServers({ ...opts, client: 'cursor', servers: 'all' });
    expect(u.outcomes.map((o) => o.result)).toEqual(['skipped']);
    expect(h.read()).toBe(text);
  });

  test('an entry written as `airlock wrap --url` is a protected remote server: unprotect rebuilds the remote entry', async () => {
    const args = ['wrap', '--name', 'gh', '--url', 'https://x.example/mcp', '--header', 'Authorization: ${AIRLOCK_HEADER_AUTHORIZATION}'];
    expect(wrappedByHand({ command: '/opt/Airlock/airlock', args })?.original).toBeUndefined();
    const text = JSON.stringify({ mcpServers: { s: { command: '/opt/Airlock/airlock', args, env: { AIRLOCK_HEADER_AUTHORIZATION: 'Bearer t' }, disabled: false } } });
    const h = home('cursor', text);
    const opts = { ...h.opts, launchers: [{ command: '/opt/Airlock/airlock', argsPrefix: [] }] };
    const s = (await discoverClient('cursor', opts)).locations[0]!.servers[0]!;
    expect(s).toMatchObject({ protected: true, remoteWrapped: true, url: 'https://x.example/mcp' });
    expect(s.unprotectable).toBeUndefined();
    const p = await protectServers({ ...opts, client: 'cursor', servers: ['s'], launcher: { command: '/opt/Airlock/airlock', argsPrefix: [] } });
    expect(p.outcomes.map((o) => o.result)).toEqual(['unchanged']);
    const u = await unprotectServers({ ...opts, client: 'cursor', servers: 'all' });
    expect(u.outcomes.map((o) => o.result)).toEqual(['unprotected']);
    // no kept original (written by hand): rebuilt, the header's value filled from the entry's env
    expect(JSON.parse(h.read())).toEqual({ mcpServers: { s: { disabled: false, url: 'https://x.example/mcp', headers: { Authorization: 'Bearer t' } } } });
  });
});

describe('parseWrapArgv', () => {
  test.each([
    ['with --', ['--name', 'a', '--', 'node', 's.js'], { name: 'a', command: ['node', 's.js'], dashDash: true }],
    ['without --', ['--name', 'a', 'node', 's.js'], { name: 'a', command: ['node', 's.js'], dashDash: false }],
    ['server options after the command are the server\'s', ['--name', 'ev', 'node', 'server.js', '--name', 'x'], { name: 'ev', command: ['node', 'server.js', '--name', 'x'] }],
    ['glued values', ['--name=-x', '--client=c', '--home=/d', 'node'], { name: '-x', client: 'c', home: '/d', command: ['node'] }],
    ['headers repeat', ['--name', 'r', '--url', 'http://x/', '--header', 'A: b', '--header', 'C: d'], { url: 'http://x/', header: ['A: b', 'C: d'], command: [] }],
    ['a flag', ['--trust-read-only-hints', '--name', 'a', 'x'], { trustReadOnlyHints: true, command: ['x'] }],
  ] as const)('%s', (_what, argv, expected) => {
    expect(parseWrapArgv([...argv])).toMatchObject(expected);
  });

  test.each([
    [['--name'], /--name needs a value/],
    [['--name', '--', 'x'], /--name needs a value/],
    [['--name', '-x', 'node'], /--name=-x/],
    [['--name', 'a', '--bogus', 'node'], /unknown option "--bogus"/],
    [['--name', 'a', '-y', 'node'], /unknown option "-y"/],
    [['--trust-read-only-hints=yes', '--name', 'a', 'x'], /takes no value/],
  ])('%j is refused', (argv, message) => {
    expect(() => parseWrapArgv(argv)).toThrow(message);
  });
});
