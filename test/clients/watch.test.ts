/** The config watcher: servers added later are reported, and protected when autoProtect says so. */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { discoverClient, watchClientConfigs, type ClientConfigEvent, type ConfigWatcher } from '../../proxy-core/src/clients/index.js';
import { makeHome, TEST_LAUNCHER, type TestHome } from './home.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function start(h: TestHome, autoProtect: () => boolean): { events: ClientConfigEvent[]; w: ConfigWatcher } {
  const events: ClientConfigEvent[] = [];
  const w = watchClientConfigs({
    ...h.opts,
    clients: ['cursor', 'codex'],
    onEvent: (e) => events.push(e),
    autoProtect,
    launcher: TEST_LAUNCHER,
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
const TWO = '{ "mcpServers": { "a": { "command": "x" }, "b": { "command": "y", "args": ["1"] }, "r": { "url": "https://r.example/mcp" } } }\n';

describe('watchClientConfigs', () => {
  test('reports a server added later as unprotected; existing ones are not reported', async () => {
    const h = makeHome('cursor', ONE);
    cleanups.push(() => h.remove());
    const { events, w } = start(h, () => false);
    await w.ready;
    writeFileSync(h.config, TWO);
    await until(() => events.filter((e) => e.type === 'server-added').length === 2);
    expect(events).toEqual([
      expect.objectContaining({ type: 'server-added', client: 'cursor', server: 'b', protected: false, transport: 'stdio' }),
      expect.objectContaining({ type: 'server-added', client: 'cursor', server: 'r', transport: 'http', unprotectable: expect.stringMatching(/remote/) }),
    ]);
    expect(h.read()).toBe(TWO);
  });

  test('protects it when autoProtect() is true, and says so', async () => {
    const h = makeHome('cursor', ONE);
    cleanups.push(() => h.remove());
    const { events, w } = start(h, () => true);
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
    const { events, w } = start(h, () => true);
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
    const { events, w } = start(h, () => false);
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
    const { events, w } = start(h, () => false);
    await w.ready;
    w.close();
    writeFileSync(h.config, TWO);
    rmSync(h.config);
    await new Promise((r) => setTimeout(r, 300));
    expect(events).toEqual([]);
  });
});
