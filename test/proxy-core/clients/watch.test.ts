/** The config watcher: servers added later are reported, and protected when autoProtect says so. */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { AUTO_PROTECT_KEY, startBroker, type RunningBroker } from '../../../proxy-core/src/daemon/start.js';
import { discoverClient, watchClientConfigs, type ClientConfigEvent, type ConfigWatcher, type Launcher } from '../../../proxy-core/src/clients/index.js';
import { NO_LAUNCHER } from '../../../proxy-core/src/clients/watch.js';
import { makeHome, TEST_LAUNCHER, type TestHome } from '../../helpers/client-home.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function start(h: TestHome, autoProtect: () => boolean, launcher: Launcher | undefined): { events: ClientConfigEvent[]; w: ConfigWatcher } {
  const events: ClientConfigEvent[] = [];
  const w = watchClientConfigs({
    ...h.opts,
    clients: ['cursor', 'codex'],
    onEvent: (e) => events.push(e),
    autoProtect,
    launcher,
    debounceMs: 50,
    rescanMs: 100,
  });
  cleanups.push(() => w.close());
  return { events, w };
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const ONE = '{ "mcpServers": { "a": { "command": "x" } } }\n';
const TWO = '{ "mcpServers": { "a": { "command": "x" }, "b": { "command": "y", "args": ["1"] }, "r": { "url": "https://r.example/mcp?token=x" } } }\n';

describe('watchClientConfigs', () => {
  test('reports a server added later as unprotected; existing ones are not reported', async () => {
    const h = makeHome('cursor', ONE);
    cleanups.push(() => h.remove());
    const { events, w } = start(h, () => false, TEST_LAUNCHER);
    await w.ready;
    writeFileSync(h.config, TWO);
    await until(() => events.filter((e) => e.type === 'server-added').length === 2);
    expect(events).toEqual([
      expect.objectContaining({ type: 'server-added', client: 'cursor', server: 'b', protected: false, transport: 'stdio' }),
      expect.objectContaining({ type: 'server-added', client: 'cursor', server: 'r', transport: 'http', unprotectable: expect.stringMatching(/URL carries a secret/) }),
    ]);
    expect(h.read()).toBe(TWO);
  });

  test('protects it when autoProtect() is true, and says so', async () => {
    const h = makeHome('cursor', ONE);
    cleanups.push(() => h.remove());
    const { events, w } = start(h, () => true, TEST_LAUNCHER);
    await w.ready;
    writeFileSync(h.config, TWO);
    await until(() => events.some((e) => e.type === 'server-protected'));
    expect(events.filter((e) => e.type === 'server-protected')).toEqual([expect.objectContaining({ server: 'b', path: h.config })]);
    const servers = (await discoverClient('cursor', h.opts)).locations[0]!.servers;
    expect(servers.map((s) => [s.name, s.protected])).toEqual([['a', false], ['b', true], ['r', false]]);
    // Our own write must not come back as a new event.
    await new Promise((r) => setTimeout(r, 300));
    expect(events.filter((e) => e.type === 'server-added')).toHaveLength(2);
  });

  test('a config whose folder appears later is picked up', async () => {
    const h = makeHome('codex', null);
    cleanups.push(() => h.remove());
    const { events, w } = start(h, () => true, TEST_LAUNCHER);
    await w.ready;
    mkdirSync(dirname(h.config), { recursive: true });
    writeFileSync(h.config, '[mcp_servers.late]\ncommand = "late-server"\n');
    await until(() => events.some((e) => e.type === 'server-protected'));
    expect(events.map((e) => e.type)).toEqual(['server-added', 'server-protected']);
    expect(h.read()).toContain('"--name", "late"');
  });

  test('a broken write is reported once and does not count as removing servers', async () => {
    const h = makeHome('cursor', ONE);
    cleanups.push(() => h.remove());
    const { events, w } = start(h, () => false, TEST_LAUNCHER);
    await w.ready;
    writeFileSync(h.config, '{ "mcpServers": ');
    await until(() => events.some((e) => e.type === 'config-error'));
    writeFileSync(h.config, ONE);
    await new Promise((r) => setTimeout(r, 300));
    expect(events.map((e) => e.type)).toEqual(['config-error']);
  });

  test('close() stops reporting', async () => {
    const h = makeHome('cursor', ONE);
    cleanups.push(() => h.remove());
    const { events, w } = start(h, () => false, TEST_LAUNCHER);
    await w.ready;
    w.close();
    writeFileSync(h.config, TWO);
    rmSync(h.config);
    await new Promise((r) => setTimeout(r, 300));
    expect(events).toEqual([]);
  });
});

describe('auto-protect without a launcher', () => {
  test('the watcher reports protect-failed and writes nothing: it never guesses a launcher', async () => {
    const h = makeHome('cursor', ONE);
    cleanups.push(() => h.remove());
    const { events, w } = start(h, () => true, undefined);
    await w.ready;
    writeFileSync(h.config, TWO);
    await until(() => events.some((e) => e.type === 'protect-failed'));
    await new Promise((r) => setTimeout(r, 200));
    expect(events.filter((e) => e.type === 'protect-failed')).toEqual([expect.objectContaining({ server: 'b', error: NO_LAUNCHER })]);
    expect(events.some((e) => e.type === 'server-protected')).toBe(false);
    expect(h.read()).toBe(TWO);
  });

  async function broker(h: TestHome, launcher: Launcher | undefined): Promise<RunningBroker> {
    // the data dir a wrapper finds by itself, so protect writes no --home
    const running = await startBroker({ dir: h.env.AIRLOCK_HOME, env: h.env, launcher, presence: { required: false } });
    cleanups.push(() => running.stop());
    running.store.setSetting(AUTO_PROTECT_KEY, 'on');
    return running;
  }
  const journaled = (r: RunningBroker, type: string) => r.store.eventsSince(0, 1000).filter((e) => e.type === type);

  test("startBroker's watcher journals protect-failed when it was given no launcher", async () => {
    const h = makeHome('cursor', ONE);
    cleanups.push(() => h.remove());
    const running = await broker(h, undefined);
    await new Promise((r) => setTimeout(r, 500));
    writeFileSync(h.config, TWO);
    await until(() => journaled(running, 'protect-failed').length > 0, 8000);
    expect(journaled(running, 'protect-failed')[0]).toMatchObject({ server: 'b', detail: { error: NO_LAUNCHER } });
    expect(h.read()).toBe(TWO);
  });

  test("startBroker's watcher writes exactly the launcher it was given", async () => {
    const h = makeHome('cursor', ONE);
    cleanups.push(() => h.remove());
    const running = await broker(h, TEST_LAUNCHER);
    await new Promise((r) => setTimeout(r, 500));
    writeFileSync(h.config, TWO);
    await until(() => journaled(running, 'server-protected').length > 0, 8000);
    const b = (await discoverClient('cursor', h.opts)).locations[0]!.servers.find((s) => s.name === 'b')!;
    expect(b.written).toEqual({ command: TEST_LAUNCHER.command, args: [...TEST_LAUNCHER.argsPrefix, 'wrap', '--name', 'b', '--client', 'cursor', 'y', '1'] });
  });
});
