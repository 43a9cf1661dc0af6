/**
 * Golden files: for every client format, `protect --all` turns before.* into protected.* exactly, protecting
 * twice changes nothing, and `unprotect --all` gives back before.* byte for byte.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { discoverClient, protectServers, unprotectServers, type ClientId } from '../../proxy-core/src/clients/index.js';
import { CONFIGS, FIXTURE_PROJECT, fixture, makeHome, TEST_LAUNCHER, type TestHome } from '../helpers/client-home.js';

const CASES: { client: ClientId; ext: string }[] = [
  { client: 'claude-desktop', ext: 'json' },
  { client: 'claude-code', ext: 'json' },
  { client: 'cursor', ext: 'json' },
  { client: 'vscode', ext: 'json' },
  { client: 'windsurf', ext: 'json' },
  { client: 'zed', ext: 'json' },
  { client: 'cline', ext: 'json' },
  { client: 'gemini-cli', ext: 'json' },
  { client: 'codex', ext: 'toml' },
  { client: 'lm-studio', ext: 'json' },
  { client: 'continue', ext: 'yaml' },
  { client: 'goose', ext: 'yaml' },
  { client: 'qwen-code', ext: 'json' },
  { client: 'opencode', ext: 'json' },
];

const homes: TestHome[] = [];
afterEach(() => {
  while (homes.length) homes.pop()!.remove();
});

function setup(client: ClientId, ext: string): { h: TestHome; before: Buffer; golden: string } {
  const before = fixture(client, `before.${ext}`);
  const h = makeHome(client, before.toString('utf8').startsWith('\uFEFF') ? before : before.toString('utf8'));
  homes.push(h);
  return { h, before, golden: join(CONFIGS, client, `protected.${ext}`) };
}

async function names(client: ClientId, h: TestHome): Promise<string[]> {
  const r = await discoverClient(client, h.opts);
  return r.locations.flatMap((l) => l.servers.map((s) => `${l.location.scope}:${s.name}`)).sort();
}

describe.each(CASES)('$client', ({ client, ext }) => {
  test('protect --all matches the golden file', async () => {
    const { h, golden } = setup(client, ext);
    await protectServers({ ...h.opts, client, servers: 'all', launcher: TEST_LAUNCHER });
    if (process.env.UPDATE_GOLDEN) writeFileSync(golden, h.readBytes().toString('utf8').split(h.project).join(FIXTURE_PROJECT));
    expect(existsSync(golden)).toBe(true);
    expect(h.read()).toBe(fixture(client, `protected.${ext}`).toString('utf8'));
  });

  test('protect, protect again, unprotect, unprotect again: byte-identical round trip', async () => {
    const { h, before } = setup(client, ext);
    const namesBefore = await names(client, h);
    const first = await protectServers({ ...h.opts, client, servers: 'all', launcher: TEST_LAUNCHER });
    expect(first.outcomes.some((o) => o.result === 'protected')).toBe(true);
    const protectedBytes = h.readBytes();
    expect(await names(client, h)).toEqual(namesBefore);

    const again = await protectServers({ ...h.opts, client, servers: 'all', launcher: TEST_LAUNCHER });
    expect(again.outcomes.filter((o) => o.result === 'protected')).toEqual([]);
    expect(h.readBytes().equals(protectedBytes)).toBe(true);

    const report = await discoverClient(client, h.opts);
    for (const s of report.locations.flatMap((l) => l.servers)) expect(s.protected).toBe(!s.unprotectable);

    await unprotectServers({ ...h.opts, client, servers: 'all' });
    expect(h.read()).toBe(before.toString('utf8').startsWith('\uFEFF') ? before.toString('utf8') : before.toString('utf8'));
    expect(h.readBytes().toString('utf8').split(h.project).join(FIXTURE_PROJECT)).toBe(before.toString('utf8'));

    const noop = await unprotectServers({ ...h.opts, client, servers: 'all' });
    expect(noop.outcomes.filter((o) => o.result === 'unprotected')).toEqual([]);
    expect(h.read()).toBe(before.toString('utf8'));
    expect(await names(client, h)).toEqual(namesBefore);
  });
});
