/**
 * Entry shapes of the clients whose command is not a plain `command` + `args`: Cline CLI 3.x's nested
 * `transport` object and opencode's one `command` list. Each is read, protected and restored byte for byte, in
 * the layout the client's own `mcp add` writes.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { discoverClient, protectServers, unprotectServers } from '../../../proxy-core/src/clients/index.js';
import { makeHome, TEST_LAUNCHER, type TestHome } from '../../helpers/client-home.js';

const homes: TestHome[] = [];
afterEach(() => {
  while (homes.length) homes.pop()!.remove();
});

// as `cline mcp add files --yes -- node /srv/server.js --stdio` (and --transport http) writes it
const CLINE_CLI = `{
  "mcpServers": {
    "files": {
      "transport": {
        "type": "stdio",
        "command": "node",
        "args": [
          "/srv/server.js",
          "--stdio"
        ],
        "env": {
          "TOKEN": "t"
        }
      }
    },
    "remote": {
      "transport": {
        "type": "streamableHttp",
        "url": "http://127.0.0.1:9/mcp"
      }
    }
  }
}`;

// as `opencode mcp add files --env FOO=bar -- node /srv/server.js --stdio` writes it
const OPENCODE = `{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "files": {
      "type": "local",
      "command": [
        "node",
        "/srv/server.js",
        "--stdio"
      ],
      "environment": {
        "FOO": "bar"
      }
    },
    "bad": { "type": "local", "command": [] }
  }
}`;

describe("Cline CLI's transport object", () => {
  test('a stdio transport is read, protected inside the transport object and restored byte for byte', async () => {
    const h = makeHome('cline', CLINE_CLI);
    homes.push(h);
    const before = (await discoverClient('cline', h.opts)).locations[0]!.servers;
    expect(before.map((s) => [s.name, s.transport, s.envKeys])).toEqual([
      ['files', 'stdio', ['TOKEN']],
      ['remote', 'http', []],
    ]);
    expect(before[0]!.original).toEqual({ command: 'node', args: ['/srv/server.js', '--stdio'] });
    await protectServers({ ...h.opts, client: 'cline', servers: ['files'], launcher: TEST_LAUNCHER });
    const doc = JSON.parse(h.read()) as { mcpServers: { files: { transport: { type: string; command: string; args: string[] } } } };
    expect(doc.mcpServers.files.transport).toMatchObject({ type: 'stdio', command: TEST_LAUNCHER.command });
    expect(doc.mcpServers.files.transport.args.slice(-3)).toEqual(['node', '/srv/server.js', '--stdio']);
    expect((await discoverClient('cline', h.opts)).locations[0]!.servers[0]!.protected).toBe(true);
    await unprotectServers({ ...h.opts, client: 'cline', servers: 'all' });
    expect(h.read()).toBe(CLINE_CLI);
  });
});

describe("opencode's command list", () => {
  test('the program is the first item; protect puts the launcher in front of it; unprotect takes it out', async () => {
    const h = makeHome('opencode', OPENCODE);
    homes.push(h);
    const servers = (await discoverClient('opencode', h.opts)).locations.flatMap((l) => l.servers);
    expect(servers[0]).toMatchObject({ name: 'files', transport: 'stdio', envKeys: ['FOO'], original: { command: 'node', args: ['/srv/server.js', '--stdio'] } });
    expect(servers[1]).toMatchObject({ name: 'bad', unprotectable: expect.stringMatching(/starting with the program/) });
    const r = await protectServers({ ...h.opts, client: 'opencode', servers: 'all', launcher: TEST_LAUNCHER });
    expect(r.outcomes.map((o) => [o.server, o.result])).toEqual([['files', 'protected'], ['bad', 'skipped']]);
    const doc = JSON.parse(h.read().replace(/^\s*\/\/.*$/gm, '')) as { mcp: { files: { command: string[] } } };
    expect(doc.mcp.files.command).toEqual([TEST_LAUNCHER.command, ...TEST_LAUNCHER.argsPrefix, 'wrap', '--name', 'files', '--client', 'opencode', 'node', '/srv/server.js', '--stdio']);
    const again = await protectServers({ ...h.opts, client: 'opencode', servers: 'all', launcher: TEST_LAUNCHER });
    expect(again.outcomes.find((o) => o.server === 'files')?.result).toBe('unchanged');
    await unprotectServers({ ...h.opts, client: 'opencode', servers: 'all' });
    expect(h.read()).toBe(OPENCODE);
  });
});
