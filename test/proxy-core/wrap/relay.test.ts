/** The relay in memory: routing both ways, the gate's answers, and the one CallRecord per call it journals. */
import { describe, expect, test } from 'vitest';
import { LIMITS } from '../../../proxy-core/src/protocol/limits.js';
import { argumentsHash } from '../../../proxy-core/src/jsonrpc/canonical.js';
import { Harness, settle, textOf } from '../../helpers/relay-harness.js';

const allowAll = { rules: [{ id: 'r1', action: 'allow' as const, server: '*', tool: '*', createdAt: 0 }] };

describe('routing', () => {
  test("requests other than tools/call pass through; the server's answers reach the client as its own bytes", async () => {
    const h = await new Harness().start();
    h.client({ jsonrpc: '2.0', id: 5, method: 'resources/list' });
    expect(h.toUpstream.at(-1)).toEqual({ jsonrpc: '2.0', id: 5, method: 'resources/list' });
    const raw = '{"result": {"resources": []},   "jsonrpc":"2.0", "id":5}';
    h.server(raw);
    expect(h.clientLines.at(-1)).toBe(raw);
    // a server-initiated request and its answer both pass
    h.server({ jsonrpc: '2.0', id: 's1', method: 'sampling/createMessage', params: {} });
    expect(h.toClient.at(-1)).toMatchObject({ id: 's1', method: 'sampling/createMessage' });
    h.client({ jsonrpc: '2.0', id: 's1', result: { role: 'assistant' } });
    expect(h.toUpstream.at(-1)).toMatchObject({ id: 's1', result: { role: 'assistant' } });
  });

  test('tools/list the client fetched is annotated with the verdicts', async () => {
    const h = await new Harness().start();
    h.client({ jsonrpc: '2.0', id: 'l', method: 'tools/list' });
    const listed = h.toUpstream.at(-1)!;
    h.server({ jsonrpc: '2.0', id: listed.id, result: { tools: [{ name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }] } });
    const tools = (h.answer('l').result as { tools: { annotations: Record<string, unknown>; _meta: Record<string, { class: string }> }[] }).tools;
    expect(tools[0]!.annotations.readOnlyHint).toBe(false);
    expect(tools[0]!._meta['airlock/verdict']!.class).toBe('read-only-unchecked');
  });

  test('a malformed call gets -32602 and is never forwarded', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    h.client({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: [1] } });
    expect(h.answer(1)).toMatchObject({ error: { code: -32602 } });
    expect(h.forwardedCalls()).toHaveLength(0);
  });

  test('an allowed call is forwarded in the tick it was read, as parsed and re-serialised', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    h.client('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}');
    // no await: decided and sent synchronously
    expect(h.forwardedCalls()).toEqual([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'b' } } }]);
  });

  test('the server answering a call that is still asking is dropped; the real decision still reaches the client', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note', { text: 'x' });
    await settle();
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'forged' }] } });
    expect(h.answers(1)).toHaveLength(0);
    expect(h.logs.join('\n')).toMatch(/answered request 1, which it was never sent/);
    h.link.nextAsk().answer({ decision: 'deny', reason: 'no' });
    await settle();
    expect(h.decision(1)).toMatchObject({ decision: 'deny', decidedBy: 'user' });
    expect(h.forwardedCalls()).toHaveLength(0);
  });

  test('every answer is routed once, by id: a second answer, a reserved id nobody sent, an id of the wrong kind are dropped', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    h.call(1, 'echo', { text: 'a' });
    h.client({ jsonrpc: '2.0', id: 'p', method: 'ping' });
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'one' }] } });
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'again' }] } });
    h.server({ jsonrpc: '2.0', id: 'p', result: {} });
    h.server({ jsonrpc: '2.0', id: 'p', result: {} });
    // the string "1" is not the number 1; a reserved id is the wrapper's own, never the client's
    h.server({ jsonrpc: '2.0', id: '1', result: {} });
    h.server({ jsonrpc: '2.0', id: 'airlock-internal:nobody', result: {} });
    expect(h.answers(1)).toHaveLength(1);
    expect(h.answers(1)[0]).toMatchObject({ result: { content: [{ text: 'one' }] } });
    expect(h.answers('p')).toHaveLength(1);
    expect(h.answers('1')).toHaveLength(0);
    expect(h.toClient.filter((m) => m.id === 'airlock-internal:nobody')).toHaveLength(0);
    expect(h.logs.filter((l) => /which it was never sent/.test(l))).toHaveLength(3);
  });

  test('a duplicate id while the first call waits is refused with id null', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note');
    h.call(1, 'write_note');
    expect(h.toClient.at(-1)).toMatchObject({ id: null, error: { code: -32600 } });
  });
});

describe('the CallRecord journaled for a call', () => {
  test('an allowed call: pending at forward, then the outcome, result, times and duration from forward to finish', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    const t0 = h.clock.now();
    h.call(1, 'echo', { b: 2, a: 1 });
    const pending = h.link.sent.at(-1)!;
    expect(pending).toMatchObject({ tool: 'echo', decision: 'allow', decidedBy: 'rule', outcome: 'pending', startedAt: t0, forwardedAt: t0 });
    expect(pending.finishedAt).toBeUndefined();
    h.clock.advance(250);
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hi' }] } });
    const done = h.link.latest.get(pending.id)!;
    expect(done).toMatchObject({
      id: pending.id,
      client: 'test',
      server: 'fx',
      arguments: '{"b":2,"a":1}',
      argsTruncated: false,
      argsBytes: 13,
      class: 'read-only-unchecked',
      outcome: 'ok',
      result: '{"content":[{"type":"text","text":"hi"}]}',
      resultTruncated: false,
      finishedAt: t0 + 250,
      durationMs: 250,
    });
    // a call that never asked is not hashed just for the journal
    expect(done.argsSha256).toBeUndefined();
  });

  test("with a clock that runs work after the tick's writes, the answer is written before the call's end is journaled", async () => {
    const h = await new Harness({ policy: allowAll }).start();
    const later: (() => void)[] = [];
    h.clock.afterWrites = (fn) => void later.push(fn);
    h.call(1, 'echo', {});
    const pending = h.link.sent.at(-1)!;
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hi' }] } });
    // the client has its answer; the entry still stands as at forward, and nothing of the result was kept yet
    expect(h.answer(1)).toMatchObject({ result: { content: [{ type: 'text', text: 'hi' }] } });
    expect(h.link.latest.get(pending.id)).toMatchObject({ outcome: 'pending' });
    expect(later).toHaveLength(1);
    later[0]!();
    expect(h.link.latest.get(pending.id)).toMatchObject({ outcome: 'ok', result: '{"content":[{"type":"text","text":"hi"}]}' });
  });

  test("a human's wait is not in the duration; askedAt and decidedAt say when it was asked and answered", async () => {
    const h = await new Harness().start();
    const t0 = h.clock.now();
    h.call(1, 'write_note');
    await settle();
    await h.advance(30_000);
    h.link.nextAsk().answer({ decision: 'allow' });
    await settle();
    await h.advance(40);
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    const r = h.link.records()[0]!;
    expect(r).toMatchObject({ decidedBy: 'user', ticketId: 't1', startedAt: t0, askedAt: t0, decidedAt: t0 + 30_000, forwardedAt: t0 + 30_000 });
    expect(r.durationMs).toBe(40);
    // a call that asked carries the hash its ticket matched on
    expect(r.argsSha256).toBe(argumentsHash(JSON.parse(r.arguments)));
  });

  test('a JSON-RPC error is journaled as the error object, as an rpc-error', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    h.call(1, 'echo');
    h.server({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'boom' } });
    expect(h.link.records()[0]).toMatchObject({ outcome: 'rpc-error', result: '{"code":-32000,"message":"boom"}' });
  });

  test('a large result is cut from the bytes and marked; the client still gets every byte', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    h.call(1, 'echo');
    const big = 'x'.repeat(2_000_000);
    const raw = `{"result":{"content":[{"type":"text","text":"${big}"}]},"jsonrpc":"2.0","id":1}`;
    h.server(raw);
    expect(h.clientLines.at(-1)).toBe(raw);
    const r = h.link.records()[0]!;
    expect(r.resultTruncated).toBe(true);
    expect(r.result!.length).toBe(LIMITS.resultShown);
    expect(r.result!.startsWith('{"content":[{"type":"text","text":"xxx')).toBe(true);
    expect(r.resultBytes).toBe(JSON.stringify({ content: [{ type: 'text', text: big }] }).length);
  });

  test('a denied call: not-run, no forward time and no duration, and the text says what the user can do', async () => {
    const h = await new Harness({ policy: { rules: [{ id: 'r9', action: 'deny', server: '*', tool: 'delete_all', createdAt: 0 }] } }).start();
    h.call(1, 'delete_all');
    expect(textOf(h.answer(1).result)).toMatch(/denied by rule r9.*airlock rules/);
    const r = h.link.records()[0]!;
    expect(r).toMatchObject({ decision: 'deny', decidedBy: 'rule', outcome: 'not-run', class: 'destructive' });
    expect(r.forwardedAt).toBeUndefined();
    expect(r.durationMs).toBeUndefined();
  });
});
