/**
 * Attacks on the gate itself, each against a lenient server that runs whatever it takes for a tools/call and
 * logs it: the log, not Airlock's word, says whether anything got through.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, cli, cliJson, connectWrapped, executed, executedCalls, ROOT, startDaemon, tempDir, waitFor, waitForSessions, waitForTicket } from '../helpers/airlock.js';
import { type RawWrapped, startRaw } from '../helpers/raw-client.js';

afterEach(cleanup);

const LENIENT = join(ROOT, 'test', 'fixtures', 'servers', 'lenient-server.mjs');

function lenient(home: string, extra: string[] = [], wrapExtra: string[] = []): { raw: RawWrapped; log: string } {
  const log = join(home, `lenient-${Math.random().toString(36).slice(2)}.log`);
  const raw = startRaw(home, ['--name', 'lenient', '--client', 'raw', ...wrapExtra], process.execPath, [LENIENT, ...extra], { FIXTURE_LOG: log });
  return { raw, log };
}

/** The lenient server with its read-only hints trusted by the person (`airlock trust`), as a wrap flag alone does not. */
async function trustedLenient(home: string): Promise<{ raw: RawWrapped; log: string }> {
  expect((await cli(home, ['trust', 'lenient', 'on'])).code).toBe(0);
  return lenient(home);
}

/**
 * A broker in a fresh home (with a rule that allows `allow` of the lenient server, when given) and a wrapped raw
 * session to the lenient server, shaken hands.
 */
async function lenientSession(allow?: string): Promise<{ home: string; raw: RawWrapped; log: string }> {
  const home = tempDir();
  await startDaemon(home);
  if (allow !== undefined) await cli(home, ['rules', 'add', 'allow', '--server', 'lenient', '--tool', allow]);
  const { raw, log } = lenient(home);
  await raw.handshake();
  return { home, raw, log };
}

const isRefusal = (m: Record<string, unknown>) => m.id === null && (m.error as { code?: number } | undefined)?.code === -32600;

describe('every tools/call is gated or refused, whatever its id', () => {
  const oddIds: [string, string][] = [
    ['null', '"id":null'],
    ['true', '"id":true'],
    ['an object', '"id":{"a":1}'],
    ['an array', '"id":[1]'],
    ['a number that overflows', '"id":1e400'],
    ['no id at all', ''],
  ];

  test.each(oddIds)('a tools/call whose id is %s is refused with id null and never reaches the server', async (_what, idPart) => {
    const { home, raw, log } = await lenientSession('read');
    await waitForSessions(home, 1);
    const comma = idPart ? `${idPart},` : '';
    raw.send(`{"jsonrpc":"2.0",${comma}"method":"tools/call","params":{"name":"del","arguments":{}}}`);
    raw.send(`{"jsonrpc":"2.0",${comma}"method":"tools/call","params":{"name":"read","arguments":{}}}`);
    const first = await raw.next(isRefusal, 5000, 'a -32600 refusal');
    expect((first.error as { message: string }).message).toMatch(/id|request/);
    await raw.next(isRefusal, 5000, 'a second refusal');
    // a well-formed call after them still works, so the server had every chance to run the odd ones first
    raw.send('{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"read","arguments":{}}}');
    await raw.next((m) => m.id === 42);
    expect(executedCalls(log).map((e) => e.tool)).toEqual(['read']);
  });

  test('the same holds inside a batch, next to a good call', async () => {
    const { raw, log } = await lenientSession('read');
    raw.send('[{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"del"}},{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read"}}]');
    await raw.next(isRefusal);
    await raw.next((m) => m.id === 5);
    expect(executedCalls(log).map((e) => e.tool)).toEqual(['read']);
  });
});

describe('what the wrapper judges is exactly what the server runs', () => {
  test('a duplicate "name" key: judged and run as the same tool', async () => {
    const home = tempDir();
    await startDaemon(home);
    // echo is read-only and this server's hints are trusted: it runs without asking; del would ask
    const { raw, log } = await trustedLenient(home);
    await raw.handshake();
    raw.send('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"del","arguments":{},"name":"echo"}}');
    const answer = await raw.next((m) => m.id === 7);
    expect(answer.result).toBeDefined();
    expect(executedCalls(log).map((e) => e.tool)).toEqual(['echo']);
  });

  test('a duplicate "method" key cannot turn a relayed ping into a call', async () => {
    const { raw, log } = await lenientSession();
    raw.send('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"del","arguments":{}},"method":"ping"}');
    await raw.next((m) => m.id === 8);
    expect(executedCalls(log)).toEqual([]);
  });

  test('a duplicate key inside the arguments: the server gets the value that was journaled', async () => {
    const home = tempDir();
    await startDaemon(home);
    const { raw, log } = await trustedLenient(home);
    await raw.handshake();
    raw.send('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"path":"/etc/shadow","path":"/tmp/notes"}}}');
    await raw.next((m) => m.id === 9);
    expect(executedCalls(log)).toMatchObject([{ tool: 'echo', arguments: { path: '/tmp/notes' } }]);
    let calls: { tool: string; arguments: string; outcome: string }[] = [];
    await waitFor(async () => {
      calls = await cliJson<typeof calls>(home, ['history']);
      return calls[0]?.outcome === 'ok';
    });
    expect(JSON.parse(calls[0]!.arguments)).toEqual({ path: '/tmp/notes' });
  });

  const lookalikes: [string, string][] = [
    ['a NUL after the name', 'tools/call\\u0000'],
    ['a NUL and more', 'tools/call\\u0000x'],
    ['another case', 'Tools/Call'],
    ['a trailing blank', 'tools/call '],
    ['a fullwidth solidus', 'tools\\uff0fcall'],
    ['a zero-width space', 'tools/\\u200bcall'],
  ];

  test.each(lookalikes)('a method like "tools/call" with %s is refused, never run', async (_what, method) => {
    const home = tempDir();
    await startDaemon(home);
    const { raw, log } = await trustedLenient(home);
    await raw.handshake();
    raw.send(`{"jsonrpc":"2.0","id":11,"method":"${method}","params":{"name":"del","arguments":{}}}`);
    await raw.next(isRefusal);
    raw.send('{"jsonrpc":"2.0","id":12,"method":"ping"}');
    await raw.next((m) => m.id === 12);
    expect(executedCalls(log)).toEqual([]);
  });
});

test('a tool name with a NUL (which a C-string server reads as "del") is refused, never run', async () => {
  const home = tempDir();
  await startDaemon(home);
  await cli(home, ['rules', 'add', 'allow', '--server', 'lenient', '--tool', 'del*']);
  const { raw, log } = await trustedLenient(home);
  await raw.handshake();
  raw.send('{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"del\\u0000ete","arguments":{}}}');
  const answer = await raw.next((m) => m.id === 21);
  expect(answer).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/control characters/) } });
  expect(executedCalls(log)).toEqual([]);
});

describe('smaller protocol faults', () => {
  test('a line that is not JSON gets -32700 with id null; a leading BOM is accepted', async () => {
    const { raw } = await lenientSession();
    raw.send('this is not json');
    const parseError = await raw.next((m) => m.id === null && (m.error as { code?: number } | undefined)?.code === -32700);
    expect((parseError.error as { message: string }).message).toMatch(/parse/);
    raw.send('\uFEFF{"jsonrpc":"2.0","id":"bom","method":"ping"}');
    expect(await raw.next((m) => m.id === 'bom')).toMatchObject({ result: {} });
    raw.send('[]');
    await raw.next(isRefusal, 5000, 'the empty batch refused');
  });

  test('a duplicate id while the first call is held is answered with id null; the held call keeps its id', async () => {
    const { home, raw, log } = await lenientSession();
    raw.send('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"del","arguments":{"n":1}}}');
    const ticket = await waitForTicket(home, 'del');
    raw.send('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"n":2}}}');
    const refused = await raw.next(isRefusal);
    expect((refused.error as { message: string }).message).toMatch(/already in flight/);
    expect(raw.received.filter((m) => m.id === 5)).toEqual([]);
    await cli(home, ['approve', ticket.id]);
    expect(await raw.next((m) => m.id === 5)).toMatchObject({ result: { content: [{ text: 'ran del' }] } });
    expect(executedCalls(log).map((e) => e.tool)).toEqual(['del']);
  });

  test('ids that print alike stay apart: 7 and "7" are two calls, 7.0 is 7 again, a cancel of 1e400 names no call', async () => {
    const { home, raw, log } = await lenientSession('echo');
    raw.send('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"del","arguments":{"n":1}}}');
    const ticket = await waitForTicket(home, 'del');
    raw.send('{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"echo","arguments":{"text":"string seven"}}}');
    expect(await raw.next((m) => m.id === '7')).toMatchObject({ result: { content: [{ text: 'ran echo' }] } });
    raw.send('{"jsonrpc":"2.0","id":7.0,"method":"tools/call","params":{"name":"echo","arguments":{"text":"seven again"}}}');
    expect(((await raw.next(isRefusal)).error as { message: string }).message).toMatch(/already in flight/);
    raw.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e400}}');
    await cli(home, ['approve', ticket.id]);
    expect(await raw.next((m) => m.id === 7)).toMatchObject({ result: { content: [{ text: 'ran del' }] } });
    expect(executedCalls(log).map((e) => e.tool)).toEqual(['echo', 'del']);
  });

  test("a client id in Airlock's own namespace is refused, so it cannot swallow an answer", async () => {
    const { raw, log } = await lenientSession();
    raw.send('{"jsonrpc":"2.0","id":"airlock-internal:0:1","method":"tools/list"}');
    await raw.next(isRefusal);
    raw.send('{"jsonrpc":"2.0","id":"mine","method":"tools/list"}');
    await raw.next((m) => m.id === 'mine');
    const lists = executed(log).filter((e) => e.method === 'tools/list');
    expect(lists.map((e) => e.id)).not.toContain('airlock-internal:0:1');
  });
});

describe('what the client reads is what the wrapper matched', () => {
  // the forged answer's text: plain, and one a scan of the line's strings must step over exactly (an escaped quote,
  // around what reads as "id", a run of backslashes ending the string just before the second "id")
  for (const [what, text] of [['', undefined], [', behind a string of escaped quotes and backslashes', 'a \\"id\\": 5 \\\\']] as const) {
    test(`a server cannot answer a held call with a second "id" key hidden in a request of its own${what}`, async () => {
      const { home, raw, log } = await lenientSession();
      raw.send('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"del","arguments":{}}}');
      const ticket = await waitForTicket(home, 'del');
      raw.send(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'fixture/forge-dup', params: { forgeId: 5, ...(text === undefined ? {} : { text }) } }));
      await raw.next((m) => m.id === 6);
      const forwarded = await raw.next((m) => m.method === 'roots/list');
      expect(forwarded.id).toBe('srv-forge');
      // a first-value-wins reader of every line the client got must not see an answer for the held call
      expect(raw.lines.filter((l) => /^\{"jsonrpc":"2.0","id":5\b/.test(l) || /^\{[^{]*"id":5[,}]/.test(l))).toEqual([]);
      await cli(home, ['deny', ticket.id]);
      expect(await raw.next((m) => m.id === 5)).toMatchObject({ result: { isError: true } });
      expect(executedCalls(log)).toEqual([]);
    });
  }
});

describe('a listing the client fetched is evidence too (rug pull without list_changed)', () => {
  test('a server that answers the client with a destructive tool: the client is told, and the next call asks', async () => {
    const home = tempDir();
    await startDaemon(home);
    const log = join(home, 'lie.log');
    const w = await connectWrapped({ home, server: 'lenient', trust: true, command: process.execPath, args: [LENIENT, '--lie-to-wrapper'], env: { FIXTURE_LOG: log } });
    await waitForSessions(home, 1);
    const { tools } = await w.client.listTools();
    const echo = tools.find((t) => t.name === 'echo')!;
    // the server's own claim is destructive: the client must never be shown read-only next to it
    expect(echo.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    const call = w.client.callTool({ name: 'echo', arguments: { text: 'x' } });
    const ticket = await waitForTicket(home, 'echo');
    expect(ticket.class).toBe('destructive');
    expect(ticket.reasons.join(' ')).toMatch(/differently during this session/);
    expect(executedCalls(log, 'echo')).toHaveLength(0);
    await cli(home, ['deny', ticket.id]);
    expect((await call).isError).toBe(true);
  });

  // The wrapper's own listing goes right behind the client's, and is taken from the client's page only when the
  // server wrote it the very same bytes: a server that tells the wrapper something else is read, and believed.
  const listsAndCalls = async (raw: RawWrapped) => {
    await raw.handshake();
    raw.send('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    raw.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}');
    return raw.next((m) => m.id === 1);
  };
  const ownListings = (log: string) =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { method?: string; id?: unknown })
      .filter((e) => e.method === 'tools/list' && typeof e.id === 'string');

  test("the same page to the client and to the wrapper's own listing: a trusted read-only tool runs unasked", async () => {
    const home = tempDir();
    await startDaemon(home);
    const { raw, log } = await trustedLenient(home);
    await listsAndCalls(raw);
    expect(await raw.next((m) => m.id === 2)).toMatchObject({ result: { content: [{ text: 'ran echo' }] } });
    expect(executedCalls(log, 'echo')).toHaveLength(1);
    // the server was asked by the wrapper itself, not only by the client
    expect(ownListings(log).length).toBeGreaterThanOrEqual(1);
  });

  test("a server that shows the client a read-only tool and the wrapper's own listing a destructive one: the call asks, and never runs", async () => {
    const home = tempDir();
    await startDaemon(home);
    expect((await cli(home, ['trust', 'lenient', 'on'])).code).toBe(0);
    const { raw, log } = lenient(home, ['--lie-to-client']);
    const page = await listsAndCalls(raw);
    // what the server told the client alone would have let it run
    const shown = (page.result as { tools: { name: string; _meta: Record<string, { declared: { readOnlyHint?: boolean } }> }[] }).tools.find((t) => t.name === 'echo')!;
    expect(shown._meta['airlock/verdict']!.declared.readOnlyHint).toBe(true);
    const ticket = await waitForTicket(home, 'echo');
    expect(ticket.class).toBe('destructive');
    expect(ownListings(log).length).toBeGreaterThanOrEqual(1);
    expect(executedCalls(log, 'echo')).toHaveLength(0);
    await cli(home, ['deny', ticket.id]);
    expect(await raw.next((m) => m.id === 2)).toMatchObject({ result: { isError: true } });
    expect(executedCalls(log, 'echo')).toHaveLength(0);
  });

  test('a silent change tightens at once and never loosens again in this session', async () => {
    const home = tempDir();
    await startDaemon(home);
    const log = join(home, 'flip.log');
    const w = await connectWrapped({ home, server: 'lenient', trust: true, command: process.execPath, args: [LENIENT], env: { FIXTURE_LOG: log } });
    await waitForSessions(home, 1);
    // trusted read-only: runs without asking
    expect((await w.client.callTool({ name: 'echo', arguments: {} })).isError).toBeFalsy();
    const { z } = await import('zod');
    await w.client.request({ method: 'fixture/flip', params: {} }, z.object({}).passthrough());
    expect((await w.client.listTools()).tools.find((t) => t.name === 'echo')!.annotations).toMatchObject({ readOnlyHint: false });
    const held = w.client.callTool({ name: 'echo', arguments: { n: 2 } });
    const ticket = await waitForTicket(home, 'echo');
    await cli(home, ['deny', ticket.id]);
    await held;
    // flipped back, silently: the strictest declaration seen still applies
    await w.client.request({ method: 'fixture/unflip', params: {} }, z.object({}).passthrough());
    expect((await w.client.listTools()).tools.find((t) => t.name === 'echo')!.annotations).toMatchObject({ readOnlyHint: false });
    const again = w.client.callTool({ name: 'echo', arguments: { n: 3 } });
    const second = await waitForTicket(home, 'echo');
    expect(second.class).toBe('destructive');
    await cli(home, ['deny', second.id]);
    await again;
    expect(executedCalls(log, 'echo')).toHaveLength(1);
  });
});
