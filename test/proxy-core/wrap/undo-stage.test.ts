/**
 * Undo in the wrapper, in memory: a call of a file tool waits for its snapshot (and is denied when the broker
 * cannot take it), any other call is forwarded in the tick it was read; a declared inverse the broker asks for
 * goes to the server with a reserved id, and its answer never reaches the client.
 */
import { describe, expect, test } from 'vitest';
import type { PrepareAnswer, PrepareRequest } from '../../../proxy-core/src/protocol/undo-api.js';
import type { PolicySnapshot } from '../../../proxy-core/src/policy/decide.js';
import { type PrepareLink, readFileTools, snapshotStage } from '../../../proxy-core/src/wrap/undo-stage.js';
import { Harness, settle } from '../../helpers/relay-harness.js';

const allowAll = { rules: [{ id: 'r1', action: 'allow' as const, server: '*', tool: '*', createdAt: 0 }] };

/** A harness whose link answers prepares when the test says. */
async function withSnapshots(fileTools: Record<string, string[]> = { write_note: ['path'] }) {
  const prepares: { req: PrepareRequest; answer(a: PrepareAnswer): void; fail(e: Error): void }[] = [];
  /** The journal's entries held when the stage asked for them to go at once. */
  const soon: string[][] = [];
  const link: PrepareLink = {
    journalSoon: () => void setImmediate(() => soon.push([...h.link.latest.keys()])),
    get policy(): PolicySnapshot | null {
      return h.link.policy;
    },
    prepare: (req: PrepareRequest) =>
      new Promise<PrepareAnswer>((answer, fail) => {
        prepares.push({ req, answer, fail });
      }),
  };
  const h: Harness = new Harness({ policy: { ...allowAll, fileTools }, stages: [snapshotStage(link)] });
  await h.start();
  return { h, prepares, soon };
}

describe('a call of a file tool waits for its snapshot', () => {
  test('sent once the broker has it; only the path arguments go to the broker, never the content', async () => {
    const { h, prepares } = await withSnapshots();
    h.call(1, 'write_note', { path: '/notes/a.md', content: 'x'.repeat(1000) });
    await settle();
    expect(h.forwardedCalls()).toEqual([]);
    expect(prepares.map((p) => p.req)).toEqual([{ callId: expect.any(String), tool: 'write_note', paths: { path: '/notes/a.md' } }]);
    prepares[0]!.answer({ ok: true, undoable: true });
    await settle();
    expect(h.forwardedCalls()).toHaveLength(1);
  });

  test('the next prepare names the snapshotted calls the server answered since the last, so the broker reads their files first', async () => {
    const { h, prepares } = await withSnapshots();
    /** Call `id` and return its prepare; `settleCall` answers that, then answers the call as the server when `answered`. */
    const call = async (id: number, path: unknown) => {
      h.call(id, 'write_note', { path });
      await settle();
      return prepares.at(-1)!;
    };
    const settleCall = async (p: (typeof prepares)[number], answer: PrepareAnswer, answered = true) => {
      p.answer(answer);
      await settle();
      if (answered) h.server({ jsonrpc: '2.0', id: h.forwardedCalls().at(-1)!.id as string, result: { content: [] } });
      await settle();
    };
    const undoable = { ok: true, undoable: true };
    const first = await call(1, '/a');
    await settleCall(first, undoable, false);
    // a second call sent while the first still runs: the first has not ended, so it is not named
    const second = await call(2, '/a');
    expect(second.req.finished).toBeUndefined();
    await settleCall(second, undoable);
    h.server({ jsonrpc: '2.0', id: h.forwardedCalls()[0]!.id as string, result: { content: [] } });
    await settle();
    // named in the order the server answered them; a call that was not undoable is not named (nothing to read)
    const third = await call(3, 42);
    expect(third.req.finished).toEqual([second.req.callId, first.req.callId]);
    await settleCall(third, { ok: true, undoable: false });
    // named once; a prepare the broker did not take names them again in the next one
    const fourth = await call(4, '/b');
    expect(fourth.req.finished).toBeUndefined();
    await settleCall(fourth, undoable);
    const fifth = await call(5, '/b');
    expect(fifth.req.finished).toEqual([fourth.req.callId]);
    fifth.fail(new Error('Airlock is not connected'));
    await settle();
    expect((await call(6, '/b')).req.finished).toEqual([fourth.req.callId]);
  });

  test("a snapshotted call's end goes to the broker at once (the broker reads what it left as it arrives); another call's waits", async () => {
    const { h, prepares, soon } = await withSnapshots();
    h.call(1, 'write_note', { path: '/a' });
    h.call(2, 'write_note', { path: 42 });
    await settle();
    prepares[0]!.answer({ ok: true, undoable: true });
    prepares[1]!.answer({ ok: true, undoable: false, reason: 'its path argument is not a path' });
    await settle();
    const [first, second] = h.forwardedCalls();
    h.server({ jsonrpc: '2.0', id: second!.id as string, result: { content: [] } });
    await settle();
    expect(soon).toEqual([]);
    h.server({ jsonrpc: '2.0', id: first!.id as string, result: { content: [] } });
    await settle();
    // asked once, and by the end of that turn the call's end was in the journal
    expect(soon).toEqual([expect.arrayContaining([prepares[0]!.req.callId])]);
    expect(h.link.latest.get(prepares[0]!.req.callId)).toMatchObject({ outcome: 'ok' });
  });

  test('a refusal, an error or a broker gone denies the call, with the reason; the server never sees it', async () => {
    const { h, prepares } = await withSnapshots();
    h.call(1, 'write_note', { path: '/a' });
    h.call(2, 'write_note', { path: '/b' });
    await settle();
    prepares[0]!.answer({ ok: false, undoable: false, reason: 'Airlock could not record the state of /a (EIO) before the call, so the call was not run' });
    prepares[1]!.fail(new Error('Airlock is not connected'));
    await settle();
    expect(h.forwardedCalls()).toEqual([]);
    expect(h.decision(1)).toMatchObject({ decidedBy: 'error', reason: expect.stringContaining('EIO') });
    expect(h.decision(2)).toMatchObject({ decidedBy: 'error', reason: expect.stringContaining('could not record the state of the files') });
  });

  test('a call that runs, not undoable, is still sent', async () => {
    const { h, prepares } = await withSnapshots();
    h.call(1, 'write_note', { path: 42 });
    await settle();
    expect(prepares[0]!.req.paths).toEqual({ path: 42 });
    prepares[0]!.answer({ ok: true, undoable: false, reason: 'its path argument is not a path' });
    await settle();
    expect(h.forwardedCalls()).toHaveLength(1);
  });

  test('any other tool is forwarded in the tick it was read, with no request to the broker', async () => {
    const { h, prepares } = await withSnapshots({ write_note: ['path'] });
    h.call(1, 'echo', { path: '/a' });
    expect(h.forwardedCalls()).toHaveLength(1);
    // a tool named like a property of every object is not a file tool either
    h.call(2, 'constructor', {});
    await settle();
    expect(prepares).toEqual([]);
  });

  test('E-Stop pressed while the snapshot is taken: the call is denied', async () => {
    const { h, prepares } = await withSnapshots();
    h.call(1, 'write_note', { path: '/a' });
    await settle();
    h.link.push({ estop: true });
    prepares[0]!.answer({ ok: true, undoable: true });
    await settle();
    expect(h.forwardedCalls()).toEqual([]);
    expect(h.decision(1)).toMatchObject({ decidedBy: 'estop' });
  });

  test("the policy's fileTools are read strictly: anything but lists of names is dropped", () => {
    const tools = readFileTools({ write: ['path', 3, 'dest'], bad: 'path', empty: [], __proto__: ['x'] });
    expect(Object.entries(tools)).toEqual([['write', ['path', 'dest']]]);
    expect(readFileTools(null)).toEqual({});
  });
});

describe("a declared inverse, run for the broker's undo", () => {
  const UNDO = 'undo-0123456789ab';
  const asUndo = (tool: string, args: unknown = {}, extra: Record<string, unknown> = {}) => ({ tool, arguments: args, undoId: UNDO, note: 'undo of call c-1 (create), asked for by you', ...extra });

  test('sent with an id of the reserved namespace; the answer goes to the broker, not the client; journaled under the undo id', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    const answer = h.relay.inverses.call(asUndo('delete_all', { names: ['a'] }));
    const sent = h.toUpstream.find((m) => m.method === 'tools/call')!;
    expect(sent).toMatchObject({ params: { name: 'delete_all', arguments: { names: ['a'] } } });
    expect(String(sent.id)).toMatch(/^airlock-internal:undo-/);
    const before = h.toClient.length;
    h.server({ jsonrpc: '2.0', id: sent.id as string, result: { content: [{ type: 'text', text: 'deleted' }] } });
    await expect(answer).resolves.toEqual({ ok: true, result: { content: [{ type: 'text', text: 'deleted' }] } });
    expect(h.toClient.length).toBe(before);
    expect(h.link.latest.get(UNDO)).toMatchObject({ tool: 'delete_all', decision: 'allow', decidedBy: 'rule', outcome: 'ok' });
    expect(h.link.latest.get(UNDO)!.reasons[0]).toBe('undo of call c-1 (create), asked for by you');
  });

  test('a rule that denies it, E-Stop, an uninitialized server: not sent, and the broker hears what decided it', async () => {
    const h = await new Harness({ policy: { rules: [{ id: 'r9', action: 'deny', server: '*', tool: 'delete_all', createdAt: 0 }] } }).start();
    await expect(h.relay.inverses.call(asUndo('delete_all'))).resolves.toEqual({ ok: false, notRun: { decidedBy: 'rule', reason: expect.stringMatching(/denied by rule r9/) } });
    expect(h.link.latest.get(UNDO)).toMatchObject({ decision: 'deny', decidedBy: 'rule', outcome: 'not-run' });
    expect(h.link.latest.get(UNDO)!.reasons[0]).toBe('undo of call c-1 (create), asked for by you');
    const stopped = await new Harness({ policy: { ...allowAll, estop: true } }).start();
    await expect(stopped.relay.inverses.call(asUndo('x'))).resolves.toMatchObject({ ok: false, notRun: { decidedBy: 'estop' } });
    const fresh = new Harness({ policy: allowAll });
    await expect(fresh.relay.inverses.call(asUndo('x'))).resolves.toMatchObject({ ok: false, notRun: { decidedBy: 'error', reason: expect.stringMatching(/not been initialized/) } });
    expect([...h.toUpstream, ...stopped.toUpstream, ...fresh.toUpstream].filter((m) => m.method === 'tools/call')).toEqual([]);
  });

  test('a malformed request, or one without its undo id, is refused before the pipeline', async () => {
    const up = await new Harness({ policy: allowAll }).start();
    await expect(up.relay.inverses.call(asUndo('x', []))).rejects.toMatchObject({ code: 'bad-request' });
    await expect(up.relay.inverses.call(asUndo('a\u0000b'))).rejects.toMatchObject({ code: 'bad-request' });
    await expect(up.relay.inverses.call({ tool: 'x', arguments: {} })).rejects.toMatchObject({ code: 'bad-request' });
    await expect(up.relay.inverses.call(asUndo('x', {}, { undoId: 'call-1' }))).rejects.toMatchObject({ code: 'bad-request' });
    expect(up.toUpstream.filter((m) => m.method === 'tools/call')).toEqual([]);
  });

  test('one that asks holds a ticket with its arguments, never answered "still waiting", never taking a held client ticket', async () => {
    const h = await new Harness({ policy: {}, holdAnswerMs: 1000 }).start();
    // a client call of the same tool and arguments, answered "still waiting" and approved meanwhile
    h.call(1, 'delete_all', { names: ['a'] });
    await settle();
    await h.advance(1000);
    h.link.asks.shift()!.answer({ decision: 'allow' });
    await settle();
    const answer = h.relay.inverses.call(asUndo('delete_all', { names: ['a'] }));
    await settle();
    expect(h.forwardedCalls()).toEqual([]);
    expect(h.link.asks.map((a) => a.request)).toEqual([expect.objectContaining({ callId: UNDO, tool: 'delete_all', arguments: { names: ['a'] } })]);
    await h.advance(60_000);
    expect(h.forwardedCalls()).toEqual([]);
    h.link.asks.shift()!.answer({ decision: 'deny', decidedBy: 'user', reason: 'denied by you' });
    await expect(answer).resolves.toEqual({ ok: false, notRun: { decidedBy: 'user', reason: 'denied by you' } });
    expect(h.toUpstream.filter((m) => m.method === 'tools/call')).toEqual([]);
  });

  test('the server going away ends a call it never answered; the client cannot cancel it', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    const answer = h.relay.inverses.call(asUndo('slow'));
    const sent = h.toUpstream.find((m) => m.method === 'tools/call')!;
    h.client({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: sent.id } });
    expect(h.toUpstream.filter((m) => m.method === 'notifications/cancelled')).toEqual([]);
    h.relay.upstreamExited('exited (code 1)');
    await expect(answer).resolves.toEqual({ ok: false, unknown: expect.stringMatching(/exited \(code 1\) before answering/) });
  });

  test('past the time the broker gives, a call still held is withdrawn and one sent is cancelled', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    const answer = h.relay.inverses.call(asUndo('slow', {}, { waitMs: 5000 }));
    const sent = h.toUpstream.find((m) => m.method === 'tools/call')!;
    await h.advance(5000);
    await expect(answer).resolves.toEqual({ ok: false, unknown: expect.stringMatching(/ended while running \(timeout/) });
    expect(h.toUpstream.at(-1)).toMatchObject({ method: 'notifications/cancelled', params: { requestId: sent.id } });
    const asking = await new Harness({ policy: {} }).start();
    const held = asking.relay.inverses.call(asUndo('delete_all', {}, { waitMs: 5000 }));
    await settle();
    await asking.advance(5000);
    await expect(held).resolves.toMatchObject({ ok: false, notRun: { decidedBy: 'timeout' } });
    expect(asking.link.cancelled).toEqual([asking.link.asked[0]!.callId]);
  });
});
