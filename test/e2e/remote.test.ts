/** `airlock wrap --url`: a remote server behind the same gate, over Streamable HTTP or the older HTTP+SSE. */
import { spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import {
  CLI,
  cleanup,
  cli,
  cliJson,
  decisionOf,
  EVERYTHING,
  executed,
  onCleanup,
  ROOT,
  startDaemon,
  tempDir,
  textOf,
  waitFor,
  waitForTicket,
} from '../helpers/airlock.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

afterEach(cleanup);

const HTTP_FIXTURE = join(ROOT, 'test', 'fixtures', 'servers', 'http-fixture.mjs');

async function startHttpFixture(log: string): Promise<{ port: number; stop(): void }> {
  const proc = spawn(process.execPath, [HTTP_FIXTURE], { env: { ...process.env, FIXTURE_LOG: log }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m) resolve(Number(m[1]));
    });
    proc.on('exit', () => reject(new Error('http fixture exited')));
  });
  const stop = () => proc.kill('SIGTERM');
  onCleanup(stop);
  return { port, stop };
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function connectRemote(home: string, args: string[], env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'wrap', '--name', 'remote', '--client', 'test-client', ...args],
    env: { ...(process.env as Record<string, string>), AIRLOCK_HOME: home, ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'airlock-test', version: '1.0.0' });
  await client.connect(transport);
  onCleanup(() => client.close().catch(() => {}));
  return client;
}

describe('remote servers', () => {
  test('Streamable HTTP: calls are gated and classified like a local server; headers expand from the environment', async () => {
    const home = tempDir();
    await startDaemon(home);
    const log = join(home, 'http.log');
    const { port } = await startHttpFixture(log);
    const client = await connectRemote(home, ['--url', `http://127.0.0.1:${port}/mcp`, '--header', 'Authorization: Bearer ${REMOTE_TOKEN}'], {
      REMOTE_TOKEN: 's3cret-token',
    });
    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(['drop_table', 'lookup']);
    expect(tools.find((t) => t.name === 'lookup')!._meta!['airlock/verdict']).toMatchObject({ class: 'read-only-unchecked' });

    const lookup = client.callTool({ name: 'lookup', arguments: { q: 'users' } });
    const ticket = await waitForTicket(home, 'lookup');
    expect(executed(log).filter((e) => e.tool)).toHaveLength(0);
    await cli(home, ['approve', ticket.id]);
    expect(textOf(await lookup)).toBe('found users');

    const drop = client.callTool({ name: 'drop_table', arguments: { name: 'users' } });
    await cli(home, ['deny', (await waitForTicket(home, 'drop_table')).id]);
    expect(decisionOf(await drop)).toMatchObject({ decidedBy: 'user', class: 'destructive' });
    expect(executed(log).filter((e) => e.tool).map((e) => e.tool)).toEqual(['lookup']);

    expect(executed(log).some((e) => e.authorization === 'Bearer s3cret-token')).toBe(true);
    const status = await cliJson<{ sessions: { command: string[] }[] }>(home, ['status']);
    expect(JSON.stringify(status.sessions)).toContain(`http://127.0.0.1:${port}/mcp`);
    expect(JSON.stringify(status)).not.toContain('s3cret-token');
  });

  test('a server that only speaks HTTP+SSE is reached by falling back to it', async () => {
    const home = tempDir();
    await startDaemon(home);
    const port = await freePort();
    const server = spawn(process.execPath, [EVERYTHING, 'sse'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    onCleanup(() => server.kill('SIGTERM'));
    await new Promise<void>((resolve) => server.stderr.on('data', (d: Buffer) => d.toString().includes('running on port') && resolve()));
    // the person trusts its read-only hints (a wrap flag alone does not)
    expect((await cli(home, ['trust', 'remote', 'on'])).code).toBe(0);
    const client = await connectRemote(home, ['--url', `http://127.0.0.1:${port}/sse`]);
    const r = await client.callTool({ name: 'echo', arguments: { message: 'over sse' } });
    expect(textOf(r)).toBe('Echo: over sse');
  });

  test('an unreachable server: the client hears so at once, nothing hangs', async () => {
    const home = tempDir();
    await startDaemon(home);
    const port = await freePort();
    const t0 = Date.now();
    await expect(connectRemote(home, ['--transport', 'http', '--url', `http://127.0.0.1:${port}/mcp`])).rejects.toThrow(/could not be reached/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  test('a server whose every answer is an error nested 20,000 deep: the client hears an error for each request, the wrapper lives', async () => {
    const home = tempDir();
    await startDaemon(home);
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const server = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const id = (JSON.parse(body) as { id?: unknown }).id ?? null;
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32603,"message":"x","data":${deep}}}`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    onCleanup(() => server.close());
    const port = (server.address() as { port: number }).port;
    const proc = spawn(process.execPath, [CLI, 'wrap', '--name', 'remote', '--client', 'test-client', '--transport', 'http', '--url', `http://127.0.0.1:${port}/mcp`], {
      env: { ...process.env, AIRLOCK_HOME: home },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    onCleanup(() => proc.kill('SIGKILL'));
    const answers: { id: unknown; error?: { message: string } }[] = [];
    let out = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (let nl = out.indexOf('\n'); nl !== -1; nl = out.indexOf('\n')) {
        answers.push(JSON.parse(out.slice(0, nl)) as { id: unknown });
        out = out.slice(nl + 1);
      }
    });
    const ask = async (id: number, method: string) => {
      proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: method === 'initialize' ? { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } : {} })}\n`);
      await waitFor(() => answers.some((a) => a.id === id), 10_000, `an answer to ${method}`);
      return answers.find((a) => a.id === id)!;
    };
    expect((await ask(1, 'initialize')).error).toBeDefined();
    expect((await ask(2, 'ping')).error).toBeDefined();
    expect(proc.exitCode).toBeNull();
    expect(proc.signalCode).toBeNull();
  });

  test('bad remote flags are one-line usage errors', async () => {
    const home = tempDir();
    for (const args of [
      ['--url', 'not a url'],
      ['--url', 'ftp://example.invalid/'],
      ['--url', 'http://127.0.0.1:1/', '--header', 'no colon here'],
      ['--url', 'http://127.0.0.1:1/', '--header', 'X-Key: ${AIRLOCK_SURELY_UNSET_VAR}'],
      ['--url', 'http://127.0.0.1:1/', '--', 'node', 'x.js'],
      ['--header', 'A: b', '--', 'node', 'x.js'],
    ]) {
      const r = await cli(home, ['wrap', '--name', 'x', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });
});
