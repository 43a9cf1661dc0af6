/**
 * The call pipeline in memory: the state machine, hooks that fail closed, and the races a real broker and a
 * real client can produce, staged one message at a time with a fake clock.
 */
import { describe, expect, test } from 'vitest';
import { Call } from '../../../proxy-core/src/wrap/call.js';
import type { CallView } from '../../../proxy-core/src/wrap/call.js';
import type { CallStage } from '../../../proxy-core/src/wrap/stages.js';
import { Harness, settle, textOf } from '../../helpers/relay-harness.js';

const allowAll = { rules: [{ id: 'r1', action: 'allow' as const, server: '*', tool: '*', createdAt: 0 }] };

/** A pre-forward hook that waits until the test lets it go. */
function gate(name = 'snapshot'): CallStage & { release(value?: unknown): void; fail(err: Error): void; seen: CallView[] } {
  let release: (v?: unknown) => void = () => {};
  let fail: (e: Error) => void = () => {};
  const seen: CallView[] = [];
  return {
    name,
    seen,
    beforeForward(call) {
      seen.push(call);
      return new Promise((res, rej) => {
        release = res as (v?: unknown) => void;
        fail = rej;
      });
    },
    release: (v) => release(v),
    fail: (e) => fail(e),
  };
}

describe('a call has one state at a time, and only the transitions in the table', () => {
  const call = () =>
    new Call({ id: 1, key: 'n:1', callId: 'c1', tool: 't', args: {}, message: {}, progressToken: undefined, startedAt: 0, startedMono: 0 });

  test.each([
    ['deciding', ['forwarded']],
    ['asking', ['deciding', 'forwarded']],
    ['done', ['deciding', 'asking', 'preparing', 'forwarded']],
  ] as const)('from %s it cannot go to %s', (from, illegal) => {
    for (const to of illegal) {
      const c = call();
      if (from === 'asking') c.to('asking');
      if (from === 'done') c.to('done');
      expect(() => c.to(to)).toThrow(/cannot go from/);
    }
  });

  test('deciding → asking → preparing → forwarded → done', () => {
    const c = call();
    for (const s of ['asking', 'preparing', 'forwarded', 'done'] as const) c.to(s);
    expect(c.state).toBe('done');
  });

  test('a call that ends before it is sent aborts its signal; one that was sent does not', () => {
    const early = call();
    const signal = early.signal;
    early.to('done');
    expect(signal.aborted).toBe(true);
    const sent = call();
    sent.to('preparing');
    sent.to('forwarded');
    sent.markForwarded(1, 1);
    sent.to('done');
    expect(sent.signal.aborted).toBe(false);
  });
});

describe('a call owns its endings', () => {
  const call = () =>
    new Call({ id: 1, key: 'n:1', callId: 'c1', tool: 't', args: {}, message: {}, progressToken: undefined, startedAt: 0, startedMono: 0 });
  const forwarded = () => {
    const c = call();
    c.to('preparing');
    c.forward();
    return c;
  };

  test('end: a call not sent is denied, done, with its times; a denial is a decision, an early answer is not', () => {
    const denied = call();
    denied.end('deny', 'rule', 'denied by rule r1', 'not-run');
    expect(denied).toMatchObject({ state: 'done', decision: 'deny', decidedBy: 'rule', detail: 'denied by rule r1', outcome: 'not-run' });
    expect(denied.decidedAt).toBeTypeOf('number');
    expect(denied.finishedAt).toBeTypeOf('number');
    const early = call();
    early.to('asking');
    early.end('deny', 'timeout', 'answered early', 'not-run', false);
    expect(early.decidedAt).toBeUndefined();
    expect(early.state).toBe('done');
    // a call already sent cannot be ended as not sent
    expect(() => forwarded().end('deny', 'estop', 'x', 'not-run')).toThrow(/cannot end unsent/);
  });

  test("finish: the server's outcome stands, except an error answer to a call ended or cancelled while running", () => {
    const ok = forwarded();
    ok.finish({ by: 'server', outcome: 'tool-error' });
    expect(ok).toMatchObject({ state: 'done', outcome: 'tool-error' });
    expect(ok.durationMs).toBeTypeOf('number');
    const stopped = forwarded();
    stopped.endWhileRunning('estop', 'stopped by E-Stop');
    expect(stopped).toMatchObject({ state: 'forwarded', answered: true, outcome: 'cancelled' });
    stopped.finish({ by: 'server', outcome: 'rpc-error', note: '; the server answered afterwards (rpc-error)' });
    expect(stopped.outcome).toBe('cancelled');
    expect(stopped.detail).toBe('; ended while running (estop: stopped by E-Stop); the server answered afterwards (rpc-error)');
    const ranAnyway = forwarded();
    ranAnyway.cancelled = true;
    ranAnyway.outcome = 'cancelled';
    ranAnyway.finish({ by: 'server', outcome: 'ok' });
    expect(ranAnyway.outcome).toBe('ok');
  });

  test('finish: a server gone leaves a call answered to its client as it was; a task fills in only what is pending', () => {
    const answered = forwarded();
    answered.endWhileRunning('estop', 'stopped');
    answered.finish({ by: 'gone', outcome: 'unknown' });
    expect(answered.outcome).toBe('cancelled');
    const cancelled = forwarded();
    cancelled.cancelled = true;
    cancelled.outcome = 'cancelled';
    cancelled.finish({ by: 'gone', outcome: 'unknown' });
    expect(cancelled.outcome).toBe('unknown');
    const task = forwarded();
    task.to('done');
    task.finish({ by: 'task', outcome: 'ok' });
    expect(task).toMatchObject({ state: 'done', outcome: 'ok' });
    const stoppedTask = forwarded();
    stoppedTask.endWhileRunning('estop', 'stopped');
    stoppedTask.to('done');
    stoppedTask.finish({ by: 'task', outcome: 'ok' });
    expect(stoppedTask.outcome).toBe('cancelled');
  });
});

describe('races', () => {
  test('E-Stop arrives while a call is being approved: the approval loses', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note');
    await settle();
    const ask = h.link.nextAsk();
    // the user's approval is on its way (resolved), and the E-Stop push lands before its continuation runs
    ask.answer({ decision: 'allow' });
    h.link.push({ estop: true });
    await settle();
    expect(h.decision(1)).toMatchObject({ decision: 'deny', decidedBy: 'estop' });
    expect(h.forwardedCalls()).toHaveLength(0);
    expect(h.link.records()[0]).toMatchObject({ decision: 'deny', decidedBy: 'estop', outcome: 'not-run' });
  });

  test('E-Stop while a call waits on its ticket denies it at once and withdraws the ticket', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note');
    await settle();
    const callId = h.link.asked[0]!.callId;
    h.link.push({ estop: true });
    expect(h.decision(1)).toMatchObject({ decidedBy: 'estop', ticketId: 't1' });
    expect(h.link.cancelled).toEqual([callId]);
  });

  test('a ticket ends (timeout) while a loosening policy push is in flight: denied once, never forwarded', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note');
    await settle();
    h.link.nextAsk().answer({ decision: 'deny', decidedBy: 'timeout', reason: 'nobody answered within 120 s' });
    h.link.push({ sessionAllows: ['write_note'] });
    await settle();
    expect(h.answers(1)).toHaveLength(1);
    expect(h.decision(1)).toMatchObject({ decidedBy: 'timeout' });
    expect(h.forwardedCalls()).toHaveLength(0);
    // the push applies to the next call
    h.call(2, 'write_note');
    expect(h.forwardedCalls()).toHaveLength(1);
  });

  test('an approval whose E-Stop push came first is denied even though the broker said allow', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note');
    await settle();
    h.link.policy = { ...h.link.policy!, estop: true }; // applied without an event, as a reconnect's policy would be read
    h.link.nextAsk().answer({ decision: 'allow' });
    await settle();
    expect(h.decision(1)).toMatchObject({ decidedBy: 'estop' });
    expect(h.forwardedCalls()).toHaveLength(0);
  });

  test('the client cancels during the pre-forward hook: never forwarded, even when the hook finishes', async () => {
    const hook = gate();
    const h = await new Harness({ policy: allowAll, stages: [hook] }).start();
    h.call(1, 'write_note');
    expect(h.relay.calls.inFlight().map((c) => c.state)).toEqual(['preparing']);
    const signal = hook.seen[0]!.signal;
    h.client({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'user pressed Esc' } });
    expect(signal.aborted).toBe(true);
    hook.release();
    await settle();
    expect(h.forwardedCalls()).toHaveLength(0);
    // the server never saw the request, so it does not hear of the cancellation either
    expect(h.toUpstream.some((m) => m.method === 'notifications/cancelled')).toBe(false);
    expect(h.answers(1)).toHaveLength(0);
    expect(h.link.records()[0]).toMatchObject({ decision: 'deny', decidedBy: 'cancelled', outcome: 'cancelled' });
    expect(h.relay.calls.inFlight()).toHaveLength(0);
  });

  test('the server answering a call whose pre-forward hook still runs is dropped; the call then runs normally', async () => {
    const hook = gate();
    const h = await new Harness({ policy: allowAll, stages: [hook] }).start();
    h.call(1, 'write_note');
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'forged' }] } });
    expect(h.answers(1)).toHaveLength(0);
    hook.release();
    await settle();
    expect(h.forwardedCalls()).toHaveLength(1);
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'real' }] } });
    expect(textOf(h.answer(1).result)).toBe('real');
  });

  test('E-Stop during a slow pre-forward hook: denied, and the hook finishing changes nothing', async () => {
    const hook = gate();
    const h = await new Harness({ policy: allowAll, stages: [hook] }).start();
    h.call(1, 'write_note');
    h.link.push({ estop: true });
    hook.release();
    await settle();
    expect(h.decision(1)).toMatchObject({ decidedBy: 'estop' });
    expect(h.forwardedCalls()).toHaveLength(0);
  });

  test('the client cancels a call waiting for approval: the ticket is withdrawn, nothing reaches the server', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note');
    await settle();
    const callId = h.link.asked[0]!.callId;
    h.client({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    expect(h.link.cancelled).toEqual([callId]);
    expect(h.toUpstream.filter((m) => m.method === 'notifications/cancelled' || m.method === 'tools/call')).toHaveLength(0);
  });

  test('the broker goes away while a call waits: broker-down, never forwarded', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note');
    await settle();
    h.link.drop();
    await settle();
    expect(h.decision(1)).toMatchObject({ decidedBy: 'broker-down' });
    expect(h.forwardedCalls()).toHaveLength(0);
  });

  test('a broker that refuses the ask (a bad field) is an error, not "Airlock is down"', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note');
    await settle();
    h.link.nextAsk().fail(Object.assign(new Error('tool too long'), { code: 'bad-request' }));
    await settle();
    expect(h.decision(1)).toMatchObject({ decidedBy: 'error' });
    expect(textOf(h.answer(1).result)).toMatch(/could not hold this call for approval: tool too long/);
  });

  test('with no broker at all, an allowed call fails closed', async () => {
    const h = await new Harness({ policy: null }).start();
    h.call(1, 'echo');
    await settle();
    expect(h.decision(1)).toMatchObject({ decidedBy: 'broker-down' });
  });

  test('a call before the client said initialized is refused, not guessed', async () => {
    const h = new Harness({ policy: allowAll });
    h.call(1, 'echo');
    expect(h.decision(1)).toMatchObject({ decidedBy: 'error' });
    expect(textOf(h.answer(1).result)).toMatch(/not been initialized/);
  });
});

describe('hooks', () => {
  test('synchronous hooks run in order and the call is still forwarded in the same tick', async () => {
    const order: string[] = [];
    const stages: CallStage[] = [
      { name: 'a', beforeForward: () => void order.push('a') },
      { name: 'b', beforeForward: (c) => void order.push(`b:${c.state}`) },
    ];
    const h = await new Harness({ policy: allowAll, stages }).start();
    h.call(1, 'echo');
    expect(order).toEqual(['a', 'b:preparing']);
    expect(h.forwardedCalls()).toHaveLength(1);
  });

  test.each([
    ['throws', { name: 'snap', beforeForward: () => { throw new Error('disk full'); } }, /snap stage failed before the call was sent: disk full/],
    ['rejects', { name: 'snap', beforeForward: () => Promise.reject(new Error('disk full')) }, /snap stage failed before the call was sent: disk full/],
    ['vetoes', { name: 'snap', beforeForward: () => ({ veto: 'the folder is too large to snapshot' }) }, /too large to snapshot/],
    ['vetoes later', { name: 'snap', beforeForward: async () => ({ veto: 'no space' }) }, /no space/],
  ] as [string, CallStage, RegExp][])('a pre-forward hook that %s denies the call', async (_what, stage, text) => {
    const after: string[] = [];
    const h = await new Harness({ policy: allowAll, stages: [stage, { name: 'after', beforeForward: () => void after.push('ran') }] }).start();
    h.call(1, 'echo');
    await settle();
    expect(h.forwardedCalls()).toHaveLength(0);
    expect(h.decision(1)).toMatchObject({ decision: 'deny', decidedBy: 'error' });
    expect(textOf(h.answer(1).result)).toMatch(text);
    expect(h.link.records()[0]).toMatchObject({ decision: 'deny', outcome: 'not-run' });
    expect(after).toEqual([]);
  });

  test('an async hook that passes: forwarded once it resolves, and only then', async () => {
    const hook = gate();
    const h = await new Harness({ policy: allowAll, stages: [hook] }).start();
    h.call(1, 'echo', { path: '/tmp/x' });
    expect(hook.seen[0]).toMatchObject({ tool: 'echo', args: { path: '/tmp/x' }, decidedBy: 'rule' });
    expect(h.forwardedCalls()).toHaveLength(0);
    hook.release();
    await settle();
    expect(h.forwardedCalls()).toHaveLength(1);
  });

  test('a post-result hook that fails is logged and journaled; the client has its result', async () => {
    const seen: string[] = [];
    const stages: CallStage[] = [
      { name: 'capture', afterResult: (_c, r) => void seen.push(r.outcome) },
      { name: 'broken', afterResult: () => { throw new Error('no space left'); } },
      { name: 'slow', afterResult: async () => { await settle(); seen.push('slow done'); } },
    ];
    const h = await new Harness({ policy: allowAll, stages }).start();
    h.call(1, 'echo');
    h.server({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    expect(h.answer(1)).toMatchObject({ result: { content: [] } });
    await settle();
    expect(seen).toEqual(['ok', 'slow done']);
    expect(h.logs.join('\n')).toMatch(/broken stage failed after the result: no space left/);
    expect(h.link.records()[0]).toMatchObject({ outcome: 'ok' });
    expect(h.link.records()[0]!.detail).toMatch(/broken stage failed after the result/);
  });
});

describe('E-Stop on every call in flight', () => {
  test('inFlight lists each call with its state; end() denies one not yet sent', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note');
    h.call(2, 'delete_all');
    await settle();
    const calls = h.relay.calls.inFlight();
    expect(calls.map((c) => [c.tool, c.state])).toEqual([['write_note', 'asking'], ['delete_all', 'asking']]);
    expect(h.relay.calls.end(calls[1]!.callId, { decidedBy: 'estop', reason: 'hard stop' })).toBe(true);
    expect(h.decision(2)).toMatchObject({ decidedBy: 'estop', reason: 'hard stop' });
    expect(h.relay.calls.inFlight().map((c) => c.tool)).toEqual(['write_note']);
    expect(h.relay.calls.end('nope', { decidedBy: 'estop', reason: 'x' })).toBe(false);
  });

  test('end() on a running call: the server is told to cancel, the client is answered now, the late answer is only journaled', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    h.call(7, 'write_note');
    const [running] = h.relay.calls.inFlight();
    expect(running!.state).toBe('forwarded');
    expect(h.relay.calls.end(running!.callId, { decidedBy: 'estop', reason: 'E-Stop was pressed' })).toBe(true);
    expect(h.toUpstream.at(-1)).toMatchObject({ method: 'notifications/cancelled', params: { requestId: 7 } });
    expect(textOf(h.answer(7).result)).toMatch(/already been sent to the server/);
    expect(h.relay.calls.end(running!.callId, { decidedBy: 'estop', reason: 'again' })).toBe(false);
    h.server({ jsonrpc: '2.0', id: 7, result: { content: [] } });
    expect(h.answers(7)).toHaveLength(1);
    const r = h.link.records()[0]!;
    // the server ran it after all: the outcome is its own
    expect(r).toMatchObject({ decision: 'allow', outcome: 'ok' });
    expect(r.detail).toMatch(/ended while running .*the server answered afterwards \(ok\)/);
  });
});

describe('ends of a session', () => {
  test('the upstream exits: a running call ends unknown with an error, a waiting one is denied', async () => {
    const h = await new Harness({ policy: { rules: [{ id: 'r1', action: 'allow', server: '*', tool: 'echo', createdAt: 0 }] } }).start();
    h.call(1, 'echo');
    h.call(2, 'write_note');
    await settle();
    h.relay.upstreamExited('exited with code 3');
    expect(h.answer(1)).toMatchObject({ error: { message: expect.stringMatching(/exited with code 3 before answering/) } });
    expect(h.decision(2)).toMatchObject({ decidedBy: 'error' });
    const byTool = Object.fromEntries(h.link.records().map((r) => [r.tool, r]));
    expect(byTool.echo).toMatchObject({ outcome: 'unknown' });
    expect(byTool.write_note).toMatchObject({ outcome: 'not-run' });
  });

  test('the client goes away: waiting calls are journaled cancelled and their tickets withdrawn', async () => {
    const h = await new Harness().start();
    h.call(1, 'write_note');
    await settle();
    h.relay.clientClosed();
    expect(h.link.cancelled).toHaveLength(1);
    expect(h.link.records()[0]).toMatchObject({ decidedBy: 'cancelled', outcome: 'cancelled', detail: 'the client disconnected' });
  });
});
