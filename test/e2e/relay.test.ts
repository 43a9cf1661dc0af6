/** The relay: everything that is not a gated call passes both ways, intact; bad input is dropped, not fatal. */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, test } from 'vitest';
import { LineSplitter } from '../../proxy-core/src/jsonrpc/lines.js';
import {
  cleanup,
  cli,
  cliJson,
  connectWrapped,
  decisionOf,
  EVERYTHING,
  executed,
  executedCalls,
  fixture,
  processAlive,
  tempDir,
  waitFor,
  waitForTicket,
  wrapArgs,
} from '../helpers/airlock.js';
import { airlockWithFixture, startAirlock, wrapFixture } from '../helpers/e2e.js';

afterEach(cleanup);

describe('server-everything through airlock wrap', () => {
  test('server-initiated sampling, elicitation and roots requests reach the client and come back', async () => {
    const { home } = await startAirlock();
    await cli(home, ['rules', 'add', 'allow', '--server', 'everything', '--tool', 'trigger-*']);
    const w = await connectWrapped(
      { home, server: 'everything', trust: true, command: process.execPath, args: [EVERYTHING, 'stdio'] },
      { sampling: {}, elicitation: {}, roots: { listChanged: true } },
    );
    const seen: string[] = [];
    w.client.setRequestHandler(CreateMessageRequestSchema, async () => {
      seen.push('sampling');
      return { model: 'fixture-model', role: 'assistant', content: { type: 'text', text: 'sampled answer 42' } };
    });
    w.client.setRequestHandler(ElicitRequestSchema, async () => {
      seen.push('elicitation');
      return { action: 'decline' };
    });
    w.client.setRequestHandler(ListRootsRequestSchema, async () => {
      seen.push('roots');
      return { roots: [{ uri: 'file:///tmp/airlock-root', name: 'root' }] };
    });
    await waitFor(async () => (await w.client.listTools()).tools.some((t) => t.name === 'trigger-sampling-request'), 5000, 'capability-dependent tools');
    const sampled = await w.client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } });
    expect(JSON.stringify(sampled)).toContain('sampled answer 42');
    await w.client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    const roots = await w.client.callTool({ name: 'get-roots-list', arguments: {} });
    expect(JSON.stringify(roots)).toContain('airlock-root');
    expect(seen).toEqual(expect.arrayContaining(['sampling', 'elicitation', 'roots']));
  });

  test("the server's progress notifications reach the client, in order, before the result", async () => {
    const { home } = await startAirlock();
    const w = await connectWrapped({ home, server: 'everything', trust: true, command: process.execPath, args: [EVERYTHING, 'stdio'] });
    // Watch the transport itself: the SDK client dispatches notifications a tick later than responses, so
    // its onprogress can miss a last progress that arrives in the same chunk as the result.
    const seen: string[] = [];
    const deliver = w.transport.onmessage!;
    w.transport.onmessage = (m) => {
      const msg = m as { method?: string; params?: { progress?: number }; id?: unknown };
      if (msg.method === 'notifications/progress') seen.push(`progress ${msg.params?.progress}`);
      else if (msg.id !== undefined && msg.method === undefined) seen.push('result');
      deliver(m);
    };
    const r = await w.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } }, undefined, {
      onprogress: () => {},
    });
    expect(r.isError).toBeFalsy();
    expect(seen.filter((s) => s.startsWith('progress') || s === 'result').slice(-4)).toEqual(['progress 1', 'progress 2', 'progress 3', 'result']);
  });
});

describe('live output checks', () => {
  /** A broker that allows the fixture's `structured` tool, and a raw client of a wrapped fixture, initialized. */
  async function structuredSession() {
    const { home } = await startAirlock();
    await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', 'structured']);
    const fx = fixture(home);
    const raw = rawWrap(home, fx.command, fx.args, fx.env);
    await raw.init();
    return { home, fx, raw };
  }

  test('structuredContent that breaks the output schema is journaled as a finding, never blocked', async () => {
    const { home, raw } = await structuredSession();
    raw.send({ jsonrpc: '2.0', id: 's1', method: 'tools/call', params: { name: 'structured', arguments: {} } });
    const r = await raw.response('s1');
    expect((r.result as { structuredContent: unknown }).structuredContent).toEqual({ n: 'not a number' });
    await waitFor(
      async () => (await cliJson<{ type: string }[]>(home, ['history', '--events'])).some((e) => e.type === 'output-schema-mismatch'),
      5000,
      'mismatch event',
    );
    const events = await cliJson<{ type: string; tool: string; detail: { errors: string[] } }[]>(home, ['history', '--events']);
    const mismatch = events.find((e) => e.type === 'output-schema-mismatch')!;
    expect(mismatch.tool).toBe('structured');
    expect(mismatch.detail.errors.join(' ')).toMatch(/number/);
    raw.proc.stdin.end();
    await raw.exited;
  });

  test('a server that churns its listing between pipelined calls: every call it ran is journaled, and every structuredContent checked', async () => {
    const { home, fx, raw } = await structuredSession();
    const rounds = 30;
    // all at once: each round changes a definition (list_changed), the client lists again (a new catalog report
    // from the wrapper), and calls right behind it
    for (let i = 0; i < rounds; i++) {
      raw.send({ jsonrpc: '2.0', id: `c${i}`, method: 'fixture/change-member', params: { member: 'description', value: `churn ${i}`, announce: true } });
      raw.send({ jsonrpc: '2.0', id: `l${i}`, method: 'tools/list' });
      raw.send({ jsonrpc: '2.0', id: `s${i}`, method: 'tools/call', params: { name: 'structured', arguments: {} } });
    }
    for (let i = 0; i < rounds; i++) expect((await raw.response(`s${i}`)).result).toMatchObject({ structuredContent: { n: 'not a number' } });
    // ground truth: what the server ran
    expect(executedCalls(fx.log, 'structured')).toHaveLength(rounds);
    const mismatches = async () =>
      (await cliJson<{ type: string; tool: string }[]>(home, ['history', '--events', '--limit', '1000'])).filter((e) => e.type === 'output-schema-mismatch' && e.tool === 'structured').length;
    await waitFor(async () => (await mismatches()) >= rounds, 10_000, 'a mismatch event for every call');
    expect(await mismatches()).toBe(rounds);
    const journaled = await cliJson<{ tool: string; outcome: string }[]>(home, ['history', '--tool', 'structured', '--limit', '100']);
    expect(journaled.filter((r) => r.outcome === 'ok')).toHaveLength(rounds);
    expect(processAlive(raw.proc.pid!)).toBe(true);
    raw.proc.stdin.end();
    expect(await raw.exited).toBe(0);
  });
});

describe('waiting for a human', () => {
  test('progress notifications keep a client with resetTimeoutOnProgress waiting past its timeout', async () => {
    const { home } = await startAirlock();
    const { w } = await wrapFixture(home, { env: { AIRLOCK_PROGRESS_MS: '150' } });
    const messages: string[] = [];
    const call = w.client.callTool({ name: 'write_note', arguments: {} }, undefined, {
      timeout: 800,
      resetTimeoutOnProgress: true,
      onprogress: (p) => messages.push(p.message ?? ''),
    });
    const ticket = await waitForTicket(home, 'write_note');
    await new Promise((r) => setTimeout(r, 1500));
    await cli(home, ['approve', ticket.id]);
    const r = await call;
    expect(r.isError).toBeFalsy();
    expect(messages.length).toBeGreaterThan(3);
    expect(messages.at(-1)).toContain(`ticket ${ticket.id}`);
  });

  test('a call the client cancels withdraws its ticket and is journaled as cancelled', async () => {
    const { home, fx, w } = await airlockWithFixture();
    const ac = new AbortController();
    const call = w.client.callTool({ name: 'write_note', arguments: {} }, undefined, { signal: ac.signal });
    await waitForTicket(home, 'write_note');
    ac.abort('changed my mind');
    await expect(call).rejects.toThrow();
    await waitFor(async () => (await cliJson<unknown[]>(home, ['pending'])).length === 0, 3000, 'ticket withdrawn');
    await waitFor(async () => (await cliJson<{ outcome: string }[]>(home, ['history'])).some((h) => h.outcome === 'cancelled'), 3000, 'journal');
    expect(executedCalls(fx.log)).toHaveLength(0);
    // the upstream never saw the request, so it must not see the cancellation either
    expect(executed(fx.log).some((e) => e.notification === 'notifications/cancelled')).toBe(false);
  });

  test('a client that disconnects while waiting withdraws its ticket', async () => {
    const { home, fx, w } = await airlockWithFixture();
    void w.client.callTool({ name: 'write_note', arguments: {} }).catch(() => undefined);
    await waitForTicket(home, 'write_note');
    await w.close();
    await waitFor(async () => (await cliJson<unknown[]>(home, ['pending'])).length === 0, 3000, 'ticket withdrawn');
    expect(executedCalls(fx.log)).toHaveLength(0);
  });
});

/** A raw line-level client, for input the SDK client would never send. */
function rawWrap(home: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const proc = spawn(process.execPath, wrapArgs({ home, command, args }), { env: { ...process.env, AIRLOCK_HOME: home, ...env } });
  const lines: Record<string, unknown>[] = [];
  const splitter = new LineSplitter((line) => lines.push(JSON.parse(line.toString('utf8')) as Record<string, unknown>));
  proc.stdout.on('data', (d: Buffer) => splitter.push(d));
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return {
    proc,
    lines,
    stderr: () => stderr,
    exited,
    send: (m: unknown) => proc.stdin.write((typeof m === 'string' ? m : JSON.stringify(m)) + '\n'),
    response: async (id: unknown, timeoutMs = 8000) => {
      await waitFor(() => lines.some((l) => l.id === id), timeoutMs, `response ${String(id)}`);
      return lines.find((l) => l.id === id)!;
    },
    init: async function () {
      this.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      await this.response('init');
      this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    },
  };
}

describe('bad input and lifecycle', () => {
  test('malformed tools/call gets -32602 and is never forwarded; non-JSON lines are dropped, the relay goes on', async () => {
    const { home } = await startAirlock();
    await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', '*']);
    const fx = fixture(home, ['--noise']);
    const raw = rawWrap(home, fx.command, fx.args, fx.env);
    await raw.init();
    raw.send('this is not json {');
    raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 42 } });
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: ['not', 'an', 'object'] } });
    raw.send({ jsonrpc: '2.0', id: 3, method: 'tools/call' });
    raw.send({ jsonrpc: '2.0', id: 4, method: 'tools/list' });
    raw.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { text: 'still alive' } } });
    for (const id of [1, 2, 3]) expect((await raw.response(id)).error).toMatchObject({ code: -32602 });
    expect(((await raw.response(4)).result as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
    expect(JSON.stringify(await raw.response(5))).toContain('still alive');
    expect(executedCalls(fx.log).map((c) => c.arguments)).toEqual([{ text: 'still alive' }]);
    expect(raw.stderr()).toMatch(/client sent a line that is not JSON/);
    expect(raw.stderr()).toMatch(/server wrote a line that is not JSON/);
    // an unknown method passes through and its answer comes back
    raw.send({ jsonrpc: '2.0', id: 6, method: 'vendor/unknown-thing', params: {} });
    expect((await raw.response(6)).error).toMatchObject({ code: -32601 });
    raw.proc.stdin.end();
    await raw.exited;
  });

  test('lines that begin as an answer and end inside it, while the client lists: dropped, the listing answered, the wrapper lives', async () => {
    const { home } = await startAirlock();
    const fx = fixture(home, ['--cut-answers']);
    const raw = rawWrap(home, fx.command, fx.args, fx.env);
    await raw.init();
    for (const id of [1, 2]) {
      raw.send({ jsonrpc: '2.0', id, method: 'tools/list' });
      expect(((await raw.response(id)).result as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
    }
    expect(raw.stderr()).toMatch(/server wrote a line that is not JSON; dropped \(\{"jsonrpc":"2.0","id":12345678901\)/);
    expect(raw.stderr()).not.toMatch(/ERR_OUT_OF_RANGE|could not be handled/);
    raw.proc.stdin.end();
    expect(await raw.exited).toBe(0);
  });

  test('a response the server was never asked for is dropped: a waiting call cannot be forged complete', async () => {
    const { home } = await startAirlock();
    const fx = fixture(home);
    const raw = rawWrap(home, fx.command, fx.args, fx.env);
    await raw.init();
    raw.send({ jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 'write_note', arguments: {} } });
    const ticket = await waitForTicket(home, 'write_note');
    raw.send({ jsonrpc: '2.0', id: 21, method: 'fixture/forge', params: { forgeId: 20 } });
    await raw.response(21);
    await new Promise((r) => setTimeout(r, 200));
    expect(raw.lines.some((l) => l.id === 20)).toBe(false);
    expect(raw.stderr()).toMatch(/answered request 20, which it was never sent/);
    await cli(home, ['deny', ticket.id]);
    const r = await raw.response(20);
    expect(decisionOf(r.result)).toMatchObject({ decidedBy: 'user' });
    expect(executedCalls(fx.log)).toHaveLength(0);
    raw.proc.stdin.end();
    await raw.exited;
  });

  test('a batch cannot carry a call past the gate', async () => {
    const { home } = await startAirlock({ args: ['--ticket-timeout', '1'] });
    const fx = fixture(home);
    const raw = rawWrap(home, fx.command, fx.args, fx.env);
    await raw.init();
    raw.send([
      { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'delete_all', arguments: {} } },
      { jsonrpc: '2.0', id: 11, method: 'ping' },
    ]);
    const r = await raw.response(10);
    expect(decisionOf(r.result)).toMatchObject({ decidedBy: 'timeout' });
    expect(executedCalls(fx.log)).toHaveLength(0);
    raw.proc.stdin.end();
    await raw.exited;
  });

  test('64 MB messages relay intact in both directions', async () => {
    const { home } = await startAirlock();
    await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', '*']);
    const fx = fixture(home);
    const raw = rawWrap(home, fx.command, fx.args, fx.env);
    await raw.init();
    const bytes = 64 * 1024 * 1024;
    raw.send({ jsonrpc: '2.0', id: 'big-result', method: 'tools/call', params: { name: 'huge', arguments: { bytes } } });
    // 64 MB each way is seconds of copying on a busy 2-core machine: the test's own budget bounds it
    const result = (await raw.response('big-result', 25_000)).result as { content: { text: string }[] };
    expect(result.content[0]!.text.length).toBe(bytes);
    expect(/^x+$/.test(result.content[0]!.text)).toBe(true);
    const big = 'y'.repeat(bytes);
    raw.send({ jsonrpc: '2.0', id: 'big-request', method: 'tools/call', params: { name: 'echo', arguments: { text: big } } });
    const echoed = (await raw.response('big-request', 25_000)).result as { content: { text: string }[] };
    expect(echoed.content[0]!.text).toBe(`echo: ${JSON.stringify({ text: big })}`);
    raw.proc.stdin.end();
    await raw.exited;
    const history = await cliJson<{ tool: string; argsTruncated: boolean; arguments: string; result: string; resultTruncated: boolean; resultBytes: number }[]>(home, ['history']);
    const echo = history.find((h) => h.tool === 'echo')!;
    expect(echo.argsTruncated).toBe(true);
    expect(echo.arguments.length).toBeLessThanOrEqual(64 * 1024);
    // the big answer was read without its text (unread-payload.ts): the journal still keeps its start and its size
    const huge = history.find((h) => h.tool === 'huge')!;
    expect(huge.resultTruncated).toBe(true);
    expect(huge.resultBytes).toBe(Buffer.byteLength(JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(bytes) }] })));
    expect(huge.result.length).toBe(64 * 1024);
    expect(huge.result.startsWith('{"content":[{"type":"text","text":"xxxx')).toBe(true);
  }, 60_000);

  test('a hostile server\'s big answers: a text JSON refuses is dropped, a result past the first MiB is journaled from its bytes', async () => {
    const { home } = await startAirlock();
    await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', '*']);
    const log = join(home, 'executed.log');
    // answers of 2 MiB and more, each written by hand: one with a raw control byte in its text (not JSON), one whose
    // result begins after a 2 MiB member (past where the journal looks), one plain
    const server = String.raw`
      const fs = require('fs');
      const MiB = 1024 * 1024;
      const answers = {
        bad: (id) => '{"jsonrpc":"2.0","id":' + id + ',"result":{"content":[{"type":"text","text":"' + 'a'.repeat(2 * MiB) + '\u0001"}]}}',
        padded: (id) => '{"jsonrpc":"2.0","pad":"' + 'p'.repeat(2 * MiB) + '","id":' + id + ',"result":{"content":[{"type":"text","text":"START' + 'x'.repeat(MiB) + '"}]}}',
        good: (id) => '{"jsonrpc":"2.0","id":' + id + ',"result":{"content":[{"type":"text","text":"GOOD' + 'g'.repeat(2 * MiB) + '"}]}}',
      };
      const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
      let buf = '';
      process.stdin.on('data', (d) => {
        buf += d;
        for (let nl; (nl = buf.indexOf('\n')) !== -1; ) {
          const m = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1' } } });
          else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: Object.keys(answers).map((name) => ({ name, inputSchema: { type: 'object' } })) } });
          else if (m.method === 'tools/call') {
            fs.appendFileSync(${JSON.stringify(log)}, m.params.name + '\n');
            process.stdout.write(answers[m.params.name](JSON.stringify(m.id)) + '\n');
          }
        }
      });
      process.stdin.on('end', () => process.exit(0));
    `;
    const raw = rawWrap(home, process.execPath, ['-e', server]);
    await raw.init();
    for (const [id, name] of [[1, 'bad'], [2, 'padded'], [3, 'good']] as const) raw.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
    const MiB = 1024 * 1024;
    const padded = (await raw.response(2, 15_000)).result as { content: { text: string }[] };
    expect(padded.content[0]!.text).toBe('START' + 'x'.repeat(MiB));
    const good = (await raw.response(3, 15_000)).result as { content: { text: string }[] };
    expect(good.content[0]!.text).toBe('GOOD' + 'g'.repeat(2 * MiB));
    // the server answers in order: by the time the third came, the first was read and refused
    expect(raw.lines.some((l) => l.id === 1)).toBe(false);
    expect(raw.stderr()).toMatch(/server wrote a line that is not JSON/);
    // what the server ran, by its own record: all three
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['bad', 'padded', 'good']);
    // what the journal holds on disk: each result cut from the bytes the server sent, with the size of the whole
    type Entry = { tool: string; outcome: string; result?: string; resultTruncated?: boolean; resultBytes?: number };
    const entries = async () => await cliJson<Entry[]>(home, ['history', '--limit', '20']);
    await waitFor(async () => (await entries()).filter((e) => e.outcome === 'ok').length === 2, 5000, 'journal');
    const byTool = Object.fromEntries((await entries()).map((e) => [e.tool, e]));
    expect(byTool.padded).toMatchObject({ outcome: 'ok', resultTruncated: true, resultBytes: Buffer.byteLength(JSON.stringify({ content: [{ type: 'text', text: 'START' + 'x'.repeat(MiB) }] })) });
    expect(byTool.padded!.result!.startsWith('{"content":[{"type":"text","text":"STARTxxx')).toBe(true);
    expect(byTool.good).toMatchObject({ outcome: 'ok', resultTruncated: true });
    expect(byTool.good!.result!.startsWith('{"content":[{"type":"text","text":"GOODggg')).toBe(true);
    expect(byTool.bad?.outcome).not.toBe('ok');
    raw.proc.stdin.end();
    await raw.exited;
  }, 30_000);

  test('a resource read of several MB reaches the client whole (its texts are not parsed on the way)', async () => {
    const { home } = await startAirlock();
    // a server with one big resource: a text of 3 MiB and a blob of 2 MiB, written as the client should read them
    const server = `
      const text = 'r'.repeat(3 * 1024 * 1024) + '\\u00e9 "quoted" \\\\ end';
      const blob = Buffer.alloc(2 * 1024 * 1024, 7).toString('base64');
      let buf = '';
      const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
      process.stdin.on('data', (d) => {
        buf += d;
        for (let nl; (nl = buf.indexOf('\\n')) !== -1; ) {
          const m = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {}, resources: {} }, serverInfo: { name: 'big-resource', version: '1' } } });
          else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [] } });
          else if (m.method === 'resources/read') send({ jsonrpc: '2.0', id: m.id, result: { contents: [{ uri: 'file:///big', mimeType: 'text/plain', text }, { uri: 'file:///big.bin', blob }] } });
        }
      });
      process.stdin.on('end', () => process.exit(0));
    `;
    const raw = rawWrap(home, process.execPath, ['-e', server]);
    await raw.init();
    raw.send({ jsonrpc: '2.0', id: 'read', method: 'resources/read', params: { uri: 'file:///big' } });
    const result = (await raw.response('read', 15_000)).result as { contents: Record<string, string>[] };
    expect(result.contents[0]).toEqual({ uri: 'file:///big', mimeType: 'text/plain', text: 'r'.repeat(3 * 1024 * 1024) + '\u00e9 "quoted" \\ end' });
    expect(result.contents[1]).toEqual({ uri: 'file:///big.bin', blob: Buffer.alloc(2 * 1024 * 1024, 7).toString('base64') });
    raw.proc.stdin.end();
    await raw.exited;
  }, 30_000);

  test('a server that dies mid-call: the client gets an error, the journal says unknown, the wrapper exits with its code', async () => {
    const { home } = await startAirlock();
    const fx = fixture(home);
    const raw = rawWrap(home, fx.command, fx.args, fx.env);
    await cli(home, ['trust', 'fixture', 'on']);
    await raw.init();
    raw.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'crash', arguments: {} } });
    const r = await raw.response(7);
    expect((r.error as { message: string }).message).toMatch(/exited with code 3 before answering/);
    expect(await raw.exited).toBe(3);
    expect(executedCalls(fx.log, 'crash')).toHaveLength(1);
    await waitFor(async () => (await cliJson<{ outcome: string }[]>(home, ['history'])).some((h) => h.outcome === 'unknown'), 3000, 'journal');
  });

  test('client closes stdin: the whole upstream tree is stopped, even one that ignores stdin and SIGTERM', async () => {
    const { home } = await startAirlock();
    const pidFile = join(home, 'grandchild.pid');
    // sh -> node: the node server is a grandchild of the wrapper, as with npx
    const script = `trap '' TERM; ${JSON.stringify(process.execPath)} -e ${JSON.stringify(
      `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); process.on('SIGTERM', () => {}); process.stdin.resume(); process.stdin.on('end', () => {}); setInterval(() => {}, 1000);`,
    )}; echo after`;
    const raw = rawWrap(home, '/bin/sh', ['-c', script]);
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').length > 0, 5000, 'grandchild pid');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(processAlive(pid)).toBe(true);
    const t0 = Date.now();
    raw.proc.stdin.end();
    await raw.exited;
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(processAlive(pid)).toBe(false);
  });

  test('the upstream exits by itself: the wrapper exits with the same code', async () => {
    const home = tempDir();
    const raw = rawWrap(home, process.execPath, ['-e', 'setTimeout(() => process.exit(7), 100)']);
    expect(await raw.exited).toBe(7);
  });

  test('a server command that does not exist: one clear line on stderr and exit 127', async () => {
    const home = tempDir();
    const raw = rawWrap(home, 'surely-not-an-mcp-server-xyz', []);
    expect(await raw.exited).toBe(127);
    expect(raw.stderr()).toMatch(/the MCP server "surely-not-an-mcp-server-xyz" could not be started: command not found/);
  });
});
