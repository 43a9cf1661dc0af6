/**
 * A call held for approval longer than its client would wait: answered "still waiting" before the client's
 * own timeout, its ticket kept open, and the decision picked up by the same call made again.
 */
import { describe, expect, test } from 'vitest';
import { Harness, settle, textOf } from '../../helpers/relay-harness.js';

const HOLD = 50_000;

async function heldOnce(h: Harness, id: number | string, args: Record<string, unknown> = { text: 'x' }): Promise<void> {
  h.call(id, 'write_note', args);
  await settle();
  await h.advance(HOLD);
}

describe('without a progressToken', () => {
  test('answered "still waiting" at the hold time, with the ticket id; the ticket stays open', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    h.call(1, 'write_note', { text: 'x' });
    await settle();
    await h.advance(HOLD - 1);
    expect(h.answers(1)).toHaveLength(0);
    await h.advance(1);
    const result = h.answer(1).result as Record<string, unknown>;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/waiting for your approval in Airlock \(ticket t1\) — call the tool again with the same arguments to pick up the decision/);
    expect(h.decision(1)).toMatchObject({ decidedBy: 'waiting', state: 'waiting', ticketId: 't1' });
    expect(h.link.cancelled).toEqual([]);
    expect(h.link.asks).toHaveLength(1);
    expect(h.link.records()[0]).toMatchObject({ decision: 'deny', decidedBy: 'timeout', outcome: 'not-run', ticketId: 't1' });
    expect(h.link.records()[0]!.detail).toMatch(/answered early while waiting for approval.*stays open/);
    expect(h.relay.calls.heldTickets()).toEqual([{ askId: h.link.asked[0]!.callId, tool: 'write_note', ticketId: 't1', decided: false }]);
  });

  test('approved after the early answer: the same call made again runs, with no second ticket', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    await heldOnce(h, 1, { a: 1, b: [1, 2] });
    h.link.nextAsk().answer({ decision: 'allow' });
    await settle();
    // the same arguments in another key order are the same call
    h.call(2, 'write_note', { b: [1, 2], a: 1 });
    expect(h.forwardedCalls()).toEqual([expect.objectContaining({ id: 2 })]);
    expect(h.link.asked).toHaveLength(1);
    h.server({ jsonrpc: '2.0', id: 2, result: { content: [] } });
    const [first, second] = h.link.records();
    expect(first).toMatchObject({ decidedBy: 'timeout', outcome: 'not-run', ticketId: 't1' });
    expect(second).toMatchObject({ decision: 'allow', decidedBy: 'user', outcome: 'ok', ticketId: 't1' });
    expect(second!.detail).toMatch(/picked up by this call/);
  });

  test('still pending when the call is made again: it waits on the same ticket, and runs when approved', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    await heldOnce(h, 1);
    h.call(2, 'write_note', { text: 'x' });
    await settle();
    expect(h.link.asked).toHaveLength(1);
    expect(h.relay.calls.inFlight().map((c) => [c.state, c.ticketId])).toEqual([['asking', 't1']]);
    h.link.nextAsk().answer({ decision: 'allow' });
    await settle();
    expect(h.forwardedCalls()).toEqual([expect.objectContaining({ id: 2 })]);
  });

  test('a repeat that also outlasts the hold time is answered again, and a third call still finds the ticket', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    await heldOnce(h, 1);
    await heldOnce(h, 2);
    expect(h.decision(2)).toMatchObject({ decidedBy: 'waiting', ticketId: 't1' });
    h.link.nextAsk().answer({ decision: 'allow' });
    await settle();
    h.call(3, 'write_note', { text: 'x' });
    expect(h.forwardedCalls()).toEqual([expect.objectContaining({ id: 3 })]);
    expect(h.link.asked).toHaveLength(1);
  });

  test('an approval is used once: the call made a third time asks again', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    await heldOnce(h, 1);
    h.link.nextAsk().answer({ decision: 'allow' });
    await settle();
    h.call(2, 'write_note', { text: 'x' });
    h.server({ jsonrpc: '2.0', id: 2, result: { content: [] } });
    h.call(3, 'write_note', { text: 'x' });
    await settle();
    expect(h.forwardedCalls()).toHaveLength(1);
    expect(h.link.asked).toHaveLength(2);
  });

  test('denied after the early answer: the call made again is denied with the reason', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    await heldOnce(h, 1);
    h.link.nextAsk().answer({ decision: 'deny', reason: 'not that file' });
    await settle();
    h.call(2, 'write_note', { text: 'x' });
    expect(h.decision(2)).toMatchObject({ decision: 'deny', decidedBy: 'user', ticketId: 't1' });
    expect(textOf(h.answer(2).result)).toMatch(/not that file/);
    expect(h.forwardedCalls()).toHaveLength(0);
  });

  test('timed out at the broker: the repeat gets the timeout', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    await heldOnce(h, 1);
    h.link.nextAsk().answer({ decision: 'deny', decidedBy: 'timeout', reason: 'nobody answered within 120 s' });
    await settle();
    h.call(2, 'write_note', { text: 'x' });
    expect(h.decision(2)).toMatchObject({ decidedBy: 'timeout' });
    expect(textOf(h.answer(2).result)).toMatch(/nobody answered/);
  });

  test('other arguments, or another tool, are another call: a new ticket', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    await heldOnce(h, 1);
    h.link.nextAsk().answer({ decision: 'allow' });
    await settle();
    h.call(2, 'write_note', { text: 'y' });
    h.call(3, 'delete_all', { text: 'x' });
    await settle();
    expect(h.forwardedCalls()).toHaveLength(0);
    expect(h.link.asked.map((a) => a.tool)).toEqual(['write_note', 'write_note', 'delete_all']);
  });

  test('a decision nobody picks up expires; the call made after that asks again', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD, heldKeepMs: 120_000 }).start();
    await heldOnce(h, 1);
    h.link.nextAsk().answer({ decision: 'allow' });
    await settle();
    await h.advance(120_000);
    expect(h.logs.join('\n')).toMatch(/approval of ticket t1 .* was not picked up/);
    h.call(2, 'write_note', { text: 'x' });
    await settle();
    expect(h.forwardedCalls()).toHaveLength(0);
    expect(h.link.asked).toHaveLength(2);
  });

  test('E-Stop after the approval: the repeat is refused by the policy before any ticket is looked at', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    await heldOnce(h, 1);
    h.link.nextAsk().answer({ decision: 'allow' });
    await settle();
    h.link.push({ estop: true });
    h.call(2, 'write_note', { text: 'x' });
    expect(h.decision(2)).toMatchObject({ decidedBy: 'estop' });
    expect(h.forwardedCalls()).toHaveLength(0);
  });

  test('the client goes away: held tickets still open stay open at the broker, as the early answer promised', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    await heldOnce(h, 1);
    const askId = h.link.asked[0]!.callId;
    // the early answer told the broker to keep the ticket past this session
    expect(h.link.kept).toEqual([askId]);
    h.relay.clientClosed();
    expect(h.link.cancelled).toEqual([]);
    expect(h.relay.calls.heldTickets()).toEqual([]);
  });

  test('the client goes away while a call still waits (no early answer yet): its ticket is withdrawn', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    h.call(1, 'write_note', { text: 'x' });
    await settle();
    const askId = h.link.asked[0]!.callId;
    h.relay.clientClosed();
    expect(h.link.kept).toEqual([]);
    expect(h.link.cancelled).toEqual([askId]);
  });

  test('a cancelled repeat withdraws the ticket it was waiting on', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD }).start();
    await heldOnce(h, 1);
    h.call(2, 'write_note', { text: 'x' });
    await settle();
    h.client({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
    expect(h.link.cancelled).toEqual([h.link.asked[0]!.callId]);
    expect(h.relay.calls.heldTickets()).toEqual([]);
  });

  test('the hold time counts from when the call was read, not from when it was asked', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD, catalogWaitMs: 15_000 }).start();
    // the listing goes stale: the call first waits 5 s for a fresh one
    h.autoList = false;
    h.server({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    h.call(1, 'write_note');
    await h.advance(5_000);
    expect(h.link.asked).toHaveLength(0);
    h.answerListings();
    await settle();
    expect(h.link.asked).toHaveLength(1);
    await h.advance(HOLD - 5_000 - 1);
    expect(h.answers(1)).toHaveLength(0);
    await h.advance(1);
    expect(h.decision(1)).toMatchObject({ decidedBy: 'waiting' });
  });

  test('a hold time of 0 never answers early', async () => {
    const h = await new Harness({ holdAnswerMs: 0 }).start();
    h.call(1, 'write_note');
    await settle();
    await h.advance(10 * 60_000);
    expect(h.answers(1)).toHaveLength(0);
  });
});

describe('with a progressToken', () => {
  test('no early answer: the call stays held, progress keeps flowing, and the approval runs it', async () => {
    const h = await new Harness({ holdAnswerMs: HOLD, progressIntervalMs: 5000 }).start();
    h.call(1, 'write_note', { text: 'x' }, { progressToken: 'p1' });
    await settle();
    for (let i = 0; i < 14; i++) await h.advance(5000);
    expect(h.answers(1)).toHaveLength(0);
    const progress = h.toClient.filter((m) => m.method === 'notifications/progress');
    expect(progress).toHaveLength(14);
    expect(progress.at(-1)).toMatchObject({ params: { progressToken: 'p1', progress: 14, message: 'Waiting for your approval in Airlock (ticket t1)' } });
    h.link.nextAsk().answer({ decision: 'allow' });
    await settle();
    expect(h.forwardedCalls()).toHaveLength(1);
    await h.advance(20_000);
    expect(h.toClient.filter((m) => m.method === 'notifications/progress')).toHaveLength(14);
  });
});
