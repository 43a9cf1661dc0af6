/**
 * `airlock wrap --url` and the HTTP rules of revision 2026-07-28: every POST mirrors its body in Mcp-Method,
 * Mcp-Name and Mcp-Param-* headers (a strict server refuses a mismatch with HeaderMismatch); a server's refusal
 * reaches the client in its own words; a 401 challenge says where to authorize and how to give Airlock a token;
 * the older HTTP+SSE transport still works when asked for.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, cli, EVERYTHING, executed, onCleanup, ROOT, startDaemon, tempDir, textOf } from '../helpers/airlock.js';
import { connectRemote, startRemoteFixture } from '../helpers/remote.js';

afterEach(cleanup);

const STRICT = join(ROOT, 'test', 'fixtures', 'servers', 'http-strict-fixture.mjs');

async function allowingHome(): Promise<string> {
  const home = tempDir();
  await startDaemon(home);
  expect((await cli(home, ['rules', 'add', 'allow', '--server', 'remote', '--tool', '*'])).code).toBe(0);
  return home;
}

describe('remote servers and the 2026-07-28 HTTP rules', () => {
  test('each POST carries Mcp-Method and Mcp-Name from its body, and Mcp-Param-* where a tool asks; a tool with a bad x-mcp-header is left out', async () => {
    const home = await allowingHome();
    const log = join(home, 'strict.log');
    const { url } = await startRemoteFixture(STRICT, { FIXTURE_LOG: log });
    const { client, stderr } = await connectRemote(home, ['--url', url]);

    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['lookup', 'once_refused', 'query_region', 'tampered']);
    expect(stderr()).toMatch(/left out tool "bad_header_tool".*not an integer, string or boolean/);

    expect(textOf(await client.callTool({ name: 'lookup', arguments: { q: 'users' } }))).toBe('lookup ran with {"q":"users"}');
    // a value that is not plain ASCII goes Base64 in the sentinel form; the strict server decodes and compares
    expect(textOf(await client.callTool({ name: 'query_region', arguments: { region: 'zürich-1', sql: 'select 1' } }))).toContain('zürich-1');

    const seen = executed(log);
    expect(seen.every((e) => e.mcpMethod === e.method || e.method === undefined)).toBe(true);
    expect(seen.find((e) => e.method === 'initialize')).toMatchObject({ mcpMethod: 'initialize' });
    expect(seen.find((e) => e.method === 'notifications/initialized')).toMatchObject({ mcpMethod: 'notifications/initialized' });
    const calls = seen.filter((e) => e.method === 'tools/call');
    expect(calls[0]).toMatchObject({ mcpName: 'lookup', params: {} });
    expect(calls[1]).toMatchObject({ mcpName: 'query_region', params: { 'mcp-param-region': `=?base64?${Buffer.from('zürich-1').toString('base64')}?=` } });
    // the negotiated revision rides on every later POST
    expect(calls.every((e) => typeof e.protocolVersion === 'string')).toBe(true);
  });

  test('a call refused with HeaderMismatch is tried once more after listing the tools again, for headers a tool gained since', async () => {
    const home = await allowingHome();
    const log = join(home, 'strict.log');
    const { url } = await startRemoteFixture(STRICT, { FIXTURE_LOG: log });
    const { client, stderr } = await connectRemote(home, ['--url', url]);
    expect(textOf(await client.callTool({ name: 'once_refused', arguments: {} }))).toBe('once_refused ran with {}');
    const seen = executed(log).filter((e) => e.method === 'tools/call' || e.method === 'tools/list');
    const calls = seen.flatMap((e, i) => (e.method === 'tools/call' ? [i] : []));
    expect(calls).toHaveLength(2);
    expect(seen.slice(calls[0]! + 1, calls[1]).map((e) => e.method)).toContain('tools/list');
    // answered in the end: nothing to flag
    expect(stderr()).not.toMatch(/do not match its body/);
  });

  test("a server's HeaderMismatch that stands reaches the client as that error, and the wrapper says something on the way changed a header", async () => {
    const home = await allowingHome();
    const log = join(home, 'strict.log');
    const { url } = await startRemoteFixture(STRICT, { FIXTURE_LOG: log });
    const { client, stderr } = await connectRemote(home, ['--url', url]);
    const err = await client.callTool({ name: 'tampered', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e as { code?: number; message: string },
    );
    expect(err?.code).toBe(-32020);
    expect(err?.message).toMatch(/Header mismatch/);
    expect(stderr()).toMatch(/headers of a tools\/call request do not match its body .*something between Airlock and the server changed them/);
    // tried twice, a listing between, and no more
    expect(executed(log).filter((e) => e.method === 'tools/call')).toHaveLength(2);
  });

  test('401: the client hears where to authorize and how to give Airlock a token; with the token from the environment it gets in', async () => {
    const home = await allowingHome();
    const log = join(home, 'strict.log');
    const { port, url } = await startRemoteFixture(STRICT, { FIXTURE_TOKEN: 'tok-123', FIXTURE_LOG: log });

    // no fall back to HTTP+SSE on a 401: it is an answer, not a sign of an old server
    const refused = await connectRemote(home, ['--url', url]).then(
      () => undefined,
      (e: unknown) => e as Error & { stderr: string },
    );
    expect(refused?.message).toMatch(/requires authorization: HTTP 401 \(scope "files:read"\)/);
    expect(refused?.message).toContain(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`);
    expect(refused?.message).toContain('--header "Authorization: Bearer ${TOKEN}"');
    expect(refused?.stderr).not.toMatch(/trying HTTP\+SSE/);

    const { client } = await connectRemote(home, ['--url', url, '--header', 'Authorization: Bearer ${REMOTE_TOKEN}'], { REMOTE_TOKEN: 'tok-123' });
    expect(textOf(await client.callTool({ name: 'lookup', arguments: { q: 'x' } }))).toBe('lookup ran with {"q":"x"}');
    const status = await cli(home, ['status', '--json']);
    expect(status.stdout).not.toContain('tok-123');
  });

  test('a URL that carries a token is refused before anything is sent: tokens go in a header', async () => {
    const home = tempDir();
    for (const url of ['https://mcp.example.invalid/mcp?access_token=abc', 'https://user:secret@mcp.example.invalid/mcp']) {
      const r = await cli(home, ['wrap', '--name', 'x', '--url', url]);
      expect(r.code, url).toBe(2);
      expect(r.stderr.trim().split('\n'), url).toHaveLength(1);
      expect(r.stderr).toMatch(/must not carry credentials.*--header "Authorization: Bearer \$\{TOKEN\}"/);
    }
  });

  test('--transport sse still reaches a server that only speaks the deprecated HTTP+SSE transport', async () => {
    const home = tempDir();
    await startDaemon(home);
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const { port: p } = s.address() as { port: number };
        s.close(() => resolve(p));
      });
    });
    const server = spawn(process.execPath, [EVERYTHING, 'sse'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    onCleanup(() => server.kill('SIGTERM'));
    await new Promise<void>((resolve) => server.stderr.on('data', (d: Buffer) => d.toString().includes('running on port') && resolve()));
    expect((await cli(home, ['trust', 'remote', 'on'])).code).toBe(0);
    const { client, stderr } = await connectRemote(home, ['--transport', 'sse', '--url', `http://127.0.0.1:${port}/sse`]);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'over sse' } }))).toBe('Echo: over sse');
    // asked for by name: no Streamable HTTP attempt first
    expect(stderr()).not.toMatch(/refused Streamable HTTP/);
  });
});
