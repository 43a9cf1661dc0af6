/**
 * Secrets in args never reach the screen: `airlock clients` (text and --json) and the session command of
 * `airlock status` show them redacted, while the broker keeps the full command. Real CLI, throwaway homes.
 */
import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, test } from 'vitest';
import { connectBroker } from '../../proxy-core/src/ipc/connect.js';
import type { BrokerStatus } from '../../proxy-core/src/protocol/api.js';
import { cleanup, cliJson, connectWrapped, fixture, startDaemon, tempDir, waitForSessions } from '../helpers/airlock.js';
import { makeHome, type TestHome } from '../helpers/client-home.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'airlock.js');

const homes: TestHome[] = [];
afterEach(async () => {
  while (homes.length) homes.pop()!.remove();
  await cleanup();
});

/** A Goose config as found on a real machine: database passwords in args. */
const GOOSE = `extensions:
  mysql:
    args: ["mysql-mcp", "-pS3cretPass", "--host", "db.internal"]
    cmd: uvx
    enabled: true
    name: mysql
    type: stdio
  mysql2:
    args:
    - mysql-mcp
    - -p
    - S3cretTwo
    cmd: uvx
    enabled: true
    name: mysql2
    type: stdio
  pg:
    args: [mcp-server-postgres, "postgres://app:S3cretPg@db:5432/app"]
    cmd: npx
    enabled: true
    name: pg
    type: stdio
  remote:
    args: [mcp-remote, https://mcp.example.com/mcp, --header, "Authorization: Bearer S3cretBearer"]
    cmd: npx
    enabled: true
    name: remote
    type: stdio
  gh:
    args: [run, -e, GITHUB_TOKEN=ghp_S3cretGh, ghcr.io/github/github-mcp-server]
    cmd: docker
    enabled: true
    name: gh
    type: stdio
`;

function airlock(h: TestHome, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, ...h.env, XDG_CONFIG_HOME: '', XDG_DATA_HOME: '', CODEX_HOME: '', CLAUDE_CONFIG_DIR: '', APPDATA: '', LOCALAPPDATA: '', USERPROFILE: '' };
  return new Promise((res) => {
    execFile(process.execPath, [CLI, ...args], { env, cwd: h.home, timeout: 20_000 }, (err, stdout, stderr) => {
      res({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('airlock clients', () => {
  test('--json shows args with every secret redacted, the rest as written', async () => {
    const h = makeHome('goose', GOOSE);
    homes.push(h);
    const r = await airlock(h, ['clients', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/S3cret/);
    const goose = (JSON.parse(r.stdout) as { client: string; locations: { servers: { name: string; args?: string[] }[] }[] }[]).find((c) => c.client === 'goose')!;
    const args = Object.fromEntries(goose.locations[0]!.servers.map((s) => [s.name, s.args]));
    expect(args).toEqual({
      mysql: ['mysql-mcp', '-p<redacted>', '--host', 'db.internal'],
      mysql2: ['mysql-mcp', '-p', '<redacted>'],
      pg: ['mcp-server-postgres', 'postgres://app:<redacted>@db:5432/app'],
      remote: ['mcp-remote', 'https://mcp.example.com/mcp', '--header', 'Authorization: <redacted>'],
      gh: ['run', '-e', 'GITHUB_TOKEN=<redacted>', 'ghcr.io/github/github-mcp-server'],
    });
  });

  test('text output and protect output carry no secret either', async () => {
    const h = makeHome('goose', GOOSE);
    homes.push(h);
    for (const args of [['clients'], ['protect', 'goose', '--all'], ['clients', '--json'], ['unprotect', 'goose', '--all']]) {
      const r = await airlock(h, args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toMatch(/S3cret/);
    }
    expect(h.read()).toBe(GOOSE);
  });
});

test('airlock status shows a session command redacted; the broker keeps it whole', async () => {
  const home = tempDir();
  await startDaemon(home);
  const fx = fixture(home);
  await connectWrapped({ home, server: 'db', command: fx.command, args: [...fx.args, '-pS3cretPass', '--token', 'S3cretTok'], env: fx.env });
  await waitForSessions(home, 1);
  const status = await cliJson<{ sessions: { server: string; command: string[] }[] }>(home, ['status']);
  expect(JSON.stringify(status)).not.toMatch(/S3cret/);
  expect(status.sessions[0]!.command).toEqual([fx.command, ...fx.args, '-p<redacted>', '--token', '<redacted>']);
  // what the broker itself holds (and a UI would redact with the same function)
  const channel = await connectBroker({ dir: home, role: 'cli' });
  try {
    const raw = await channel.request<BrokerStatus>('status', undefined, 5000);
    expect(raw.sessions[0]!.command).toEqual([fx.command, ...fx.args, '-pS3cretPass', '--token', 'S3cretTok']);
  } finally {
    channel.end();
  }
});
