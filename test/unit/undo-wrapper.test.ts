/**
 * Undo in the wrapper, in memory: a call of a file tool waits for its snapshot (and is denied when the broker
 * cannot take it), any other call is forwarded in the tick it was read; a declared inverse the broker asks for
 * goes to the server with a reserved id, and its answer never reaches the client.
 */
import { describe, expect, test } from 'vitest';
import type { PrepareAnswer, PrepareRequest } from '../../proxy-core/src/protocol/undo-api.js';
import type { PolicySnapshot } from '../../proxy-core/src/policy/decide.js';
import { type PrepareLink, readFileTools, snapshotStage } from '../../proxy-core/src/wrap/undo-stage.js';
import { Harness, settle } from '../helpers/relay-harness.js';

const allowAll = { rules: [{ id: 'r1', action: 'allow' as const, server: '*', tool: '*', createdAt: 0 }] };

/** A harness whose link answers prepares when the test says. */
async function withSnapshots(fileTools: Record<string, string[]> = { write_note: ['path'] }) {
  const prepares: { req: PrepareRequest; answer(a: PrepareAnswer): void; fail(e: Error): void }[] = [];
  const link: PrepareLink = {
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
  return { h, prepares };
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
  test('sent with an id of the reserved namespace; the answer goes to the broker, not the client', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    const answer = h.relay.inverses.call({ tool: 'delete_all', arguments: { names: ['a'] } });
    const sent = h.toUpstream.find((m) => m.method === 'tools/call')!;
    expect(sent).toMatchObject({ params: { name: 'delete_all', arguments: { names: ['a'] } } });
    expect(String(sent.id)).toMatch(/^airlock-internal:undo-/);
    const before = h.toClient.length;
    h.server({ jsonrpc: '2.0', id: sent.id as string, result: { content: [{ type: 'text', text: 'deleted' }] } });
    await expect(answer).resolves.toEqual({ ok: true, result: { content: [{ type: 'text', text: 'deleted' }] } });
    expect(h.toClient.length).toBe(before);
  });

  test('refused under E-Stop, before the server is initialized, and for a malformed request', async () => {
    const h = await new Harness({ policy: { ...allowAll, estop: true } }).start();
    await expect(h.relay.inverses.call({ tool: 'x', arguments: {} })).rejects.toMatchObject({ code: 'refused', message: expect.stringMatching(/E-Stop/) });
    const fresh = new Harness({ policy: allowAll });
    await expect(fresh.relay.inverses.call({ tool: 'x', arguments: {} })).rejects.toMatchObject({ code: 'refused', message: 'the server has not been initialized' });
    const up = await new Harness({ policy: allowAll }).start();
    await expect(up.relay.inverses.call({ tool: 'x', arguments: [] })).rejects.toMatchObject({ code: 'bad-request' });
    await expect(up.relay.inverses.call({ tool: 'a\u0000b' })).rejects.toMatchObject({ code: 'bad-request' });
    expect([...h.toUpstream, ...fresh.toUpstream, ...up.toUpstream].filter((m) => m.method === 'tools/call')).toEqual([]);
  });

  test('the server going away ends a call it never answered', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    const answer = h.relay.inverses.call({ tool: 'slow', arguments: {} });
    h.relay.upstreamExited('exited (code 1)');
    await expect(answer).rejects.toMatchObject({ code: 'upstream-gone' });
  });

  test('a server that does not answer in time is told to cancel, and the broker hears it timed out', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    const answer = h.relay.inverses.call({ tool: 'slow', arguments: {} });
    const outcome = expect(answer).rejects.toMatchObject({ code: 'timeout' });
    const sent = h.toUpstream.find((m) => m.method === 'tools/call')!;
    await h.advance(28_000);
    await outcome;
    expect(h.toUpstream.at(-1)).toMatchObject({ method: 'notifications/cancelled', params: { requestId: sent.id } });
  });
});
