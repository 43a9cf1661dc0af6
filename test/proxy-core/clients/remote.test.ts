/**
 * Remote entries: protect rewrites them into `airlock wrap --url` with each header's value moved into the
 * entry's env (never on the command line), and unprotect puts back the very bytes, or rebuilds the entry when
 * the kept original no longer matches what is in the file.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { discoverClient, protectServers, unprotectServers, type ClientId } from '../../../proxy-core/src/clients/index.js';
import { makeHome, TEST_LAUNCHER, type TestHome } from '../../helpers/client-home.js';

const homes: TestHome[] = [];
afterEach(() => {
  while (homes.length) homes.pop()!.remove();
});

function home(client: ClientId, text: string): TestHome {
  const h = makeHome(client, text);
  homes.push(h);
  return h;
}

interface Wrapped {
  type?: string;
  command: string | string[];
  args?: string[];
  env?: Record<string, string>;
  environment?: Record<string, string>;
}

const CLAUDE = `{
  "mcpServers": {
    "linear": {
      "type": "http",
      "url": "http://127.0.0.1:9/mcp",
      "headers": {
        "Authorization": "Bearer lin-secret",
        "X-Team": "core"
      }
    }
  }
}
`;

describe('protect a remote entry', () => {
  test('header values go into env, the command line names only the variables; unprotect gives back the bytes', async () => {
    const h = home('claude-code', CLAUDE);
    const r = await protectServers({ ...h.opts, client: 'claude-code', servers: 'all', launcher: TEST_LAUNCHER, processLister: async () => [] });
    expect(r.outcomes.map((o) => [o.server, o.result])).toEqual([['linear', 'protected']]);
    const e = (JSON.parse(h.read()) as { mcpServers: { linear: Wrapped } }).mcpServers.linear;
    expect(e).toEqual({
      type: 'stdio',
      command: TEST_LAUNCHER.command,
      args: [
        ...TEST_LAUNCHER.argsPrefix, 'wrap', '--name', 'linear', '--client', 'claude-code', '--url', 'http://127.0.0.1:9/mcp',
        '--header', 'Authorization: ${AIRLOCK_HEADER_AUTHORIZATION}', '--header', 'X-Team: ${AIRLOCK_HEADER_X_TEAM}', '--transport', 'http',
      ],
      env: { AIRLOCK_HEADER_AUTHORIZATION: 'Bearer lin-secret', AIRLOCK_HEADER_X_TEAM: 'core' },
    });
    expect(e.args!.join(' ')).not.toContain('lin-secret');
    const s = (await discoverClient('claude-code', h.opts)).locations[0]!.servers[0]!;
    expect(s).toMatchObject({ protected: true, remoteWrapped: true, url: 'http://127.0.0.1:9/mcp' });
    // the kept original holds the header's value: readable by this user only
    const backups = join(h.env.AIRLOCK_HOME, 'backups');
    const kept = readdirSync(backups).filter((f) => f.endsWith('.remote-entries.json'));
    expect(kept).toHaveLength(1);
    expect(statSync(join(backups, kept[0]!)).mode & 0o777).toBe(0o600);
    const again = await protectServers({ ...h.opts, client: 'claude-code', servers: 'all', launcher: TEST_LAUNCHER, processLister: async () => [] });
    expect(again.outcomes.map((o) => o.result)).toEqual(['unchanged']);
    await unprotectServers({ ...h.opts, client: 'claude-code', servers: 'all', processLister: async () => [] });
    expect(h.read()).toBe(CLAUDE);
  });

  test('an entry edited after protect is rebuilt from what it says, with the edit kept', async () => {
    const h = home('claude-code', CLAUDE);
    await protectServers({ ...h.opts, client: 'claude-code', servers: 'all', launcher: TEST_LAUNCHER, processLister: async () => [] });
    h.write(h.read().replace('"Bearer lin-secret"', '"Bearer rotated"'));
    await unprotectServers({ ...h.opts, client: 'claude-code', servers: 'all', processLister: async () => [] });
    expect(JSON.parse(h.read())).toEqual({
      mcpServers: { linear: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer rotated', 'X-Team': 'core' } } },
    });
  });

  test("the entry's own env stays beside the header variables, protected and rebuilt", async () => {
    const text = JSON.stringify({ mcpServers: { r: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { A: 'b' }, env: { KEEP: '1', AIRLOCK_HEADER_A: 'taken' } } } });
    const h = home('claude-code', text);
    await protectServers({ ...h.opts, client: 'claude-code', servers: 'all', launcher: TEST_LAUNCHER, processLister: async () => [] });
    const e = (JSON.parse(h.read()) as { mcpServers: { r: Wrapped } }).mcpServers.r;
    expect(e.env).toEqual({ KEEP: '1', AIRLOCK_HEADER_A: 'taken', AIRLOCK_HEADER_A_2: 'b' });
    expect(e.args).toContain('A: ${AIRLOCK_HEADER_A_2}');
    h.write(h.read().replace(/"KEEP": ?"1"/, '"KEEP": "2"'));
    expect(h.read()).toContain('"KEEP": "2"');
    await unprotectServers({ ...h.opts, client: 'claude-code', servers: 'all', processLister: async () => [] });
    expect(JSON.parse(h.read())).toEqual({ mcpServers: { r: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { A: 'b' }, env: { KEEP: '2', AIRLOCK_HEADER_A: 'taken' } } } });
  });

  test('protecting again for another data dir rewrites --home and still restores the original bytes', async () => {
    const h = home('claude-code', CLAUDE);
    const base = { ...h.opts, client: 'claude-code' as const, servers: 'all' as const, processLister: async () => [] };
    await protectServers({ ...base, launcher: TEST_LAUNCHER });
    const other = { ...base, env: { ...h.env, AIRLOCK_HOME: join(h.home, 'other') } };
    await protectServers({ ...other, launcher: TEST_LAUNCHER });
    expect(h.read()).toContain(`"--home",\n        ${JSON.stringify(join(h.home, 'other'))}`);
    await unprotectServers(other);
    expect(h.read()).toBe(CLAUDE);
  });

  test.each([
    ['userinfo', 'http://user:pw@127.0.0.1:9/mcp', /carries credentials/],
    ['a secret query parameter', 'http://127.0.0.1:9/mcp?api_key=k', /carries a secret \(api_key=…\)/],
    ['not http', 'ws://127.0.0.1:9/mcp', /not http/],
  ])('a URL with %s is refused, and nothing is written', async (_what, url, reason) => {
    const text = JSON.stringify({ mcpServers: { r: { type: 'http', url } } });
    const h = home('claude-code', text);
    await expect(protectServers({ ...h.opts, client: 'claude-code', servers: ['r'], launcher: TEST_LAUNCHER, processLister: async () => [] })).rejects.toThrow(reason);
    expect(h.read()).toBe(text);
  });
});

describe("each client's command shape", () => {
  test.each([
    ['gemini-cli', '{"mcpServers": {"r": {"httpUrl": "http://127.0.0.1:9/mcp", "headers": {"K": "v"}, "trust": false}}}', { command: TEST_LAUNCHER.command, trust: false }, 'http'],
    ['qwen-code', '{"mcpServers": {"r": {"url": "http://127.0.0.1:9/sse"}}}', { command: TEST_LAUNCHER.command }, 'sse'],
    ['windsurf', '{"mcpServers": {"r": {"serverUrl": "http://127.0.0.1:9/mcp"}}}', { command: TEST_LAUNCHER.command }, 'http'],
    ['vscode', '{"servers": {"r": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}', { type: 'stdio', command: TEST_LAUNCHER.command }, 'sse'],
    ['cursor', '{"mcpServers": {"r": {"url": "http://127.0.0.1:9/mcp"}}}', { command: TEST_LAUNCHER.command }, undefined],
  ] as const)('%s', async (client, text, shape, transport) => {
    const h = home(client, text);
    await protectServers({ ...h.opts, client, servers: 'all', launcher: TEST_LAUNCHER });
    const doc = JSON.parse(h.read()) as Record<string, Record<string, Wrapped>>;
    const e = Object.values(doc)[0]!.r!;
    expect(e).toMatchObject(shape);
    expect(e).not.toHaveProperty('url');
    const at = e.args!.indexOf('--transport');
    expect(at < 0 ? undefined : e.args![at + 1]).toBe(transport);
    await unprotectServers({ ...h.opts, client, servers: 'all' });
    expect(h.read()).toBe(text);
  });

  test('opencode: a local entry with the whole command in one list, and `environment`', async () => {
    const text = '{\n  "mcp": {\n    "r": {\n      "type": "remote",\n      "url": "http://127.0.0.1:9/mcp",\n      "headers": { "Authorization": "Bearer oc" },\n      "enabled": true\n    }\n  }\n}\n';
    const h = home('opencode', text);
    await protectServers({ ...h.opts, client: 'opencode', servers: 'all', launcher: TEST_LAUNCHER });
    const e = (JSON.parse(h.read()) as { mcp: { r: Wrapped & { enabled: boolean } } }).mcp.r;
    expect(e.type).toBe('local');
    expect(e.enabled).toBe(true);
    expect(e.command.slice(0, 2)).toEqual([TEST_LAUNCHER.command, ...TEST_LAUNCHER.argsPrefix]);
    expect(e.command).toContain('Authorization: ${AIRLOCK_HEADER_AUTHORIZATION}');
    expect(e.environment).toEqual({ AIRLOCK_HEADER_AUTHORIZATION: 'Bearer oc' });
    expect((await discoverClient('opencode', h.opts)).locations.flatMap((l) => l.servers)[0]).toMatchObject({ protected: true, remoteWrapped: true });
    await unprotectServers({ ...h.opts, client: 'opencode', servers: 'all' });
    expect(h.read()).toBe(text);
  });

  test("Cline CLI: the transport object becomes a stdio transport", async () => {
    const text = '{"mcpServers": {"r": {"transport": {"type": "streamableHttp", "url": "http://127.0.0.1:9/mcp", "headers": {"A": "b"}}, "disabled": false}}}';
    const h = home('cline', text);
    await protectServers({ ...h.opts, client: 'cline', servers: 'all', launcher: TEST_LAUNCHER });
    const e = (JSON.parse(h.read()) as { mcpServers: { r: { transport: Wrapped; disabled: boolean } } }).mcpServers.r;
    expect(e.disabled).toBe(false);
    expect(e.transport).toMatchObject({ type: 'stdio', command: TEST_LAUNCHER.command, env: { AIRLOCK_HEADER_A: 'b' } });
    await unprotectServers({ ...h.opts, client: 'cline', servers: 'all' });
    expect(h.read()).toBe(text);
  });
});
