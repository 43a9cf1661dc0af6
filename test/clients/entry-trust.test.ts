/**
 * What counts as protected, judged by the file on disk: only an entry that starts Airlock's own launcher and
 * reports to this data dir. Look-alikes, entries naming another data dir, and loosening flags are reported;
 * auto-protect wraps what was unwrapped (also while Airlock was down), once per file change, and refuses a
 * config past its size limit.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { discoverClient, protectServers, unprotectServers, watchClientConfigs, type ClientConfigEvent } from '../../proxy-core/src/clients/index.js';
import { entryState } from '../../proxy-core/src/clients/entry-status.js';
import type { KnownServer, WatchStateStore } from '../../proxy-core/src/clients/watch.js';
import { MAX_CONFIG_BYTES } from '../../proxy-core/src/clients/config-file.js';
import { fill, mountTmpfs } from '../helpers/small-disk.js';
import { makeHome, TEST_LAUNCHER, type TestHome } from '../helpers/client-home.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function home(text: string): TestHome {
  const h = makeHome('cursor', text);
  cleanups.push(() => h.remove());
  return h;
}

async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

function memoryState(): WatchStateStore & { data: Map<string, Map<string, KnownServer>> } {
  const data = new Map<string, Map<string, KnownServer>>();
  return { data, load: () => new Map([...data].map(([k, v]) => [k, new Map(v)])), save: (k, v) => void data.set(k, new Map(v)) };
}

function watch(h: TestHome, autoProtect: boolean, state?: WatchStateStore) {
  const events: ClientConfigEvent[] = [];
  const w = watchClientConfigs({
    ...h.opts,
    clients: ['cursor'],
    onEvent: (e) => events.push(e),
    autoProtect: () => autoProtect,
    launcher: TEST_LAUNCHER,
    debounceMs: 50,
    rescanMs: 100,
    ...(state ? { state } : {}),
  });
  cleanups.push(() => w.close());
  return { events, w };
}

const LOOK_ALIKE = {
  command: 'bash',
  args: ['-c', 'exec node real-server.js', 'airlock', 'wrap', '--name', 'files', '--', 'node', 'server.js'],
};
const doc = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers }, null, 2) + '\n';
const onDisk = (h: TestHome, name: string) => (JSON.parse(h.read()) as { mcpServers: Record<string, { command: string; args?: string[] }> }).mcpServers[name]!;

describe('a look-alike entry', () => {
  test('is not protected, says why, and protect wraps what it really starts', async () => {
    const h = home(doc({ files: LOOK_ALIKE }));
    const s = (await discoverClient('cursor', h.opts)).locations[0]!.servers[0]!;
    expect(s.protected).toBe(false);
    expect(entryState(s)).toMatch(/^not protected: looks wrapped but does not run Airlock's launcher/);
    await protectServers({ ...h.opts, client: 'cursor', servers: ['files'], launcher: TEST_LAUNCHER });
    const e = onDisk(h, 'files');
    // ground truth: the client now starts Airlock's launcher, and behind it the very command it started before
    expect(e.command).toBe(TEST_LAUNCHER.command);
    expect(e.args!.slice(e.args!.indexOf('cursor') + 1)).toEqual([LOOK_ALIKE.command, ...LOOK_ALIKE.args]);
    expect((await discoverClient('cursor', h.opts)).locations[0]!.servers[0]!.protected).toBe(true);
    await unprotectServers({ ...h.opts, client: 'cursor', servers: ['files'] });
    expect(onDisk(h, 'files')).toEqual(LOOK_ALIKE);
  });

  test('added while auto-protect is on, it is wrapped, not left as "protected"', async () => {
    const h = home(doc({}));
    const { events, w } = watch(h, true);
    await w.ready;
    h.write(doc({ files: LOOK_ALIKE }));
    await until(() => events.some((e) => e.type === 'server-protected'));
    expect(events).toContainEqual(expect.objectContaining({ type: 'server-warning', server: 'files', warning: expect.stringMatching(/does not run Airlock's launcher/) }));
    expect(onDisk(h, 'files').command).toBe(TEST_LAUNCHER.command);
  });
});

describe('entries that report elsewhere or loosen', () => {
  const wrapped = (extra: string[]) => ({ command: TEST_LAUNCHER.command, args: [...TEST_LAUNCHER.argsPrefix, 'wrap', '--name', 's', '--client', 'cursor', ...extra, '--', 'node', 'server.js'] });

  test('--home of another data dir is not protected here, and the watcher says so', async () => {
    const h = home(doc({}));
    const { events, w } = watch(h, false);
    await w.ready;
    h.write(doc({ s: wrapped(['--home', '/tmp/other-airlock']) }));
    await until(() => events.some((e) => e.type === 'server-warning'));
    expect(events.find((e) => e.type === 'server-warning')).toMatchObject({ warning: 'reports to another Airlock data dir: /tmp/other-airlock' });
    const s = (await discoverClient('cursor', h.opts)).locations[0]!.servers[0]!;
    expect(s.protected).toBe(false);
    expect(entryState(s)).toBe('not protected: reports to another Airlock data dir: /tmp/other-airlock');
  });

  test('loosening flags are shown and raise an event', async () => {
    const h = home(doc({}));
    const { events, w } = watch(h, false);
    await w.ready;
    h.write(doc({ s: wrapped(['--trust-read-only-hints', '--undo', 'write=delete']) }));
    await until(() => events.some((e) => e.type === 'server-warning'));
    const warning = (events.find((e) => e.type === 'server-warning') as { warning: string }).warning;
    expect(warning).toContain('--trust-read-only-hints, --undo write=delete');
    expect(warning).toContain('airlock trust s on');
    const s = (await discoverClient('cursor', h.opts)).locations[0]!.servers[0]!;
    expect(entryState(s)).toMatch(/^protected.*; its entry adds --trust-read-only-hints/);
  });
});

describe('auto-protect and unwrapped servers', () => {
  const ORIGINAL = doc({ a: { command: 'node', args: ['a.js'] } });

  test('an entry someone unwrapped is wrapped again', async () => {
    const h = home(ORIGINAL);
    await protectServers({ ...h.opts, client: 'cursor', servers: 'all', launcher: TEST_LAUNCHER });
    const { events, w } = watch(h, true);
    await w.ready;
    h.write(ORIGINAL);
    await until(() => events.some((e) => e.type === 'server-protected'));
    expect(events.map((e) => e.type)).toEqual(['server-unprotected', 'server-protected']);
    expect(events[1]).toMatchObject({ again: true });
    expect(onDisk(h, 'a').command).toBe(TEST_LAUNCHER.command);
  });

  test('a change made while Airlock was down is found at start, and re-wrapped', async () => {
    const h = home(ORIGINAL);
    await protectServers({ ...h.opts, client: 'cursor', servers: 'all', launcher: TEST_LAUNCHER });
    const state = memoryState();
    const first = watch(h, true, state);
    await first.w.ready;
    first.w.close();
    h.write(ORIGINAL); // unwrapped while nothing watched
    const second = watch(h, true, state);
    await second.w.ready;
    await until(() => second.events.some((e) => e.type === 'server-protected'));
    expect(second.events.map((e) => e.type)).toEqual(['server-unprotected', 'server-protected']);
    expect(onDisk(h, 'a').command).toBe(TEST_LAUNCHER.command);
  });

  test('the person\'s choice is on disk before the unwrapped entry is: a watcher that reads the file at once finds it', async () => {
    const h = home(ORIGINAL);
    await protectServers({ ...h.opts, client: 'cursor', servers: 'all', launcher: TEST_LAUNCHER });
    await unprotectServers({ ...h.opts, client: 'cursor', servers: ['a'] });
    const kept = join(h.env.AIRLOCK_HOME, 'kept-unprotected.json');
    expect(readFileSync(kept, 'utf8')).toContain('"server": "a"');
    // recorded first, written second: never a moment when the file shows the entry unwrapped and no choice stands
    expect(statSync(kept, { bigint: true }).mtimeNs).toBeLessThanOrEqual(statSync(h.config, { bigint: true }).mtimeNs);
    expect(onDisk(h, 'a')).toEqual({ command: 'node', args: ['a.js'] });
  });

  test('an unprotect that cannot write the file takes the choice back: the entry stays protected, and auto-protect still guards it', async () => {
    const h = home(ORIGINAL);
    await protectServers({ ...h.opts, client: 'cursor', servers: 'all', launcher: TEST_LAUNCHER });
    const wrapped = readFileSync(h.config);
    // the config's folder on a disk with no room left (a tmpfs, filled): the file reads, no write goes through
    const folder = dirname(h.config);
    mountTmpfs(folder, '256k', (fn) => cleanups.push(fn));
    writeFileSync(h.config, wrapped);
    const filler = fill(folder);
    await expect(unprotectServers({ ...h.opts, client: 'cursor', servers: ['a'] })).rejects.toThrow();
    expect(readFileSync(h.config)).toEqual(wrapped);
    // the choice recorded before the write was taken back: no "kept" stands for a server still protected
    const kept = join(h.env.AIRLOCK_HOME, 'kept-unprotected.json');
    if (existsSync(kept)) expect(readFileSync(kept, 'utf8')).not.toContain('"server": "a"');
    // and so an agent that unwraps it afterwards is undone, as for any protected entry
    const { events, w } = watch(h, true);
    await w.ready;
    rmSync(filler);
    h.write(ORIGINAL);
    await until(() => events.some((e) => e.type === 'server-protected'));
    expect(onDisk(h, 'a').command).toBe(TEST_LAUNCHER.command);
  });

  test('`unprotect` is the person\'s choice: auto-protect leaves that server alone', async () => {
    const h = home(ORIGINAL);
    await protectServers({ ...h.opts, client: 'cursor', servers: 'all', launcher: TEST_LAUNCHER });
    const { events, w } = watch(h, true);
    await w.ready;
    await unprotectServers({ ...h.opts, client: 'cursor', servers: ['a'] });
    await until(() => events.some((e) => e.type === 'server-unprotected'));
    // a later unrelated change in the same file must not re-wrap it either
    h.write(ORIGINAL.replace('a.js', 'a.js').replace('\n}', ',\n  "x": 1\n}'));
    await until(() => events.length >= 1);
    await new Promise((r) => setTimeout(r, 400));
    expect(events).toEqual([expect.objectContaining({ type: 'server-unprotected', kept: true })]);
    expect(onDisk(h, 'a')).toEqual({ command: 'node', args: ['a.js'] });
  });
});

describe('a huge config', () => {
  test('20,000 servers are auto-protected in one rewrite of the file', async () => {
    const h = home(doc({}));
    const { events, w } = watch(h, true);
    await w.ready;
    const servers: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i++) servers[`s${i}`] = { command: 'node', args: [`server-${i}.js`, '--port', String(i)] };
    const text = doc(servers);
    const rssBefore = process.memoryUsage().rss;
    const t0 = Date.now();
    h.write(text);
    const mtimeBefore = statSync(h.config).mtimeMs;
    await until(() => events.filter((e) => e.type === 'server-protected').length === 20_000 || events.some((e) => e.type === 'protect-failed'), 240_000);
    const ms = Date.now() - t0;
    const rssAfter = process.memoryUsage().rss;
    expect(events.filter((e) => e.type === 'protect-failed')).toEqual([]);
    const after = JSON.parse(h.read()) as { mcpServers: Record<string, { command: string }> };
    expect(Object.values(after.mcpServers).every((e) => e.command === TEST_LAUNCHER.command)).toBe(true);
    expect(statSync(h.config).mtimeMs).toBeGreaterThanOrEqual(mtimeBefore);
    writeFileSync(process.env.AIRLOCK_BENCH_OUT ?? '/dev/null', JSON.stringify({ bytes: text.length, ms, rssBeforeMb: rssBefore / 2 ** 20, rssAfterMb: rssAfter / 2 ** 20 }));
  }, 300_000);

  test(`a config past ${MAX_CONFIG_BYTES / 2 ** 20} MB is refused with a clear message, and left alone`, async () => {
    const h = home(doc({}));
    const { events, w } = watch(h, true);
    await w.ready;
    const servers: Record<string, unknown> = { a: { command: 'node' } };
    const big = doc({ ...servers, pad: { command: 'x', args: ['y'.repeat(MAX_CONFIG_BYTES)] } });
    h.write(big);
    await until(() => events.some((e) => e.type === 'config-error'));
    expect(events.find((e) => e.type === 'config-error')).toMatchObject({ error: expect.stringMatching(/over the 8 MB Airlock reads in a client config; it was left alone/) });
    expect(events.filter((e) => e.type === 'server-protected')).toEqual([]);
    expect(h.read()).toBe(big);
    const loc = (await discoverClient('cursor', h.opts)).locations[0]!;
    expect(loc.error).toMatch(/over the 8 MB/);
  });
});
