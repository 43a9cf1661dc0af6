/**
 * The tripwire's places in the wrapper, in memory: a changing call is forwarded only with a place the broker
 * gave; without one it is held before the server until the broker answers, and refused when E-Stop engages,
 * the broker is lost, or it gives none. Judged by what the server was sent. Also: the outcome of a call E-Stop
 * stopped whose result arrived after all is what the server did.
 */
import { describe, expect, test } from 'vitest';
import type { BudgetGrant } from '../../../proxy-core/src/wrap/call-budget.js';
import { Harness, settle } from '../../helpers/relay-harness.js';

const allowAll = { rules: [{ id: 'r1', action: 'allow' as const, server: '*', tool: '*', createdAt: 0 }], tripwire: true };

/** A broker with `places` left: gives what is asked while it lasts; a waiting call past it trips E-Stop. */
function limitedBroker(h: Harness, places: number): void {
  let left = places;
  h.link.grant = (a) => {
    const granted = Math.min(a.want, left);
    left -= granted;
    if (granted > 0 || !a.waiting) return { granted };
    queueMicrotask(() => h.link.push({ estop: true }));
    return { granted: 0, refused: 'estop' };
  };
}

function deferred(): { promise: Promise<BudgetGrant>; resolve(g: BudgetGrant): void } {
  let resolve!: (g: BudgetGrant) => void;
  const promise = new Promise<BudgetGrant>((r) => (resolve = r));
  return { promise, resolve };
}

describe('a changing call needs a place', () => {
  test('40 calls at once, 5 places left: 5 reach the server, the other 35 are refused by E-Stop before it', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    limitedBroker(h, 5);
    for (let i = 0; i < 40; i++) h.call(i, 'write_note', { text: `n${i}` });
    await settle();
    expect(h.forwardedCalls()).toHaveLength(5);
    const sent = new Set(h.forwardedCalls().map((m) => m.id));
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      if (sent.has(i)) continue; // running when E-Stop engaged: stopped there (E-Stop, hard)
      const d = h.decision(i);
      expect(d).toMatchObject({ decision: 'deny', decidedBy: 'estop' });
      expect(d!.sent).not.toBe(true);
      refused++;
    }
    expect(refused).toBe(35);
    expect(h.link.records().filter((r) => r.forwardedAt !== undefined)).toHaveLength(5);
  });

  test('held for a place when E-Stop engages: refused, and a place that comes afterwards does not send it', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    const answer = deferred();
    h.link.grant = () => answer.promise;
    h.call(1, 'write_note');
    await settle();
    expect(h.forwardedCalls()).toHaveLength(0);
    expect(h.link.budgetAsks).toEqual([{ used: 0, want: 17, waiting: true }]);
    h.link.push({ estop: true });
    expect(h.decision(1)).toMatchObject({ decidedBy: 'estop' });
    answer.resolve({ granted: 10 });
    await settle();
    h.link.push({ estop: false });
    await settle();
    expect(h.forwardedCalls()).toHaveLength(0);
  });

  test('places come in small shares: every call runs, in order, each with a place, and the uses are reported', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    h.link.grant = () => ({ granted: 3 });
    for (let i = 0; i < 10; i++) h.call(i, 'delete_all');
    await settle();
    expect(h.forwardedCalls().map((m) => m.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await h.advance(50);
    const asked = h.link.budgetAsks.reduce((n, a) => n + a.used, 0);
    const reported = h.link.budgetReports.reduce((n, r) => n + r.used, 0);
    expect(asked + reported).toBe(10);
    // 4 asks gave 12 places: 2 are left, and the next call takes one in the same tick, without asking
    const asks = h.link.budgetAsks.length;
    h.call('next', 'write_note');
    expect(h.forwardedCalls()).toHaveLength(11);
    expect(h.link.budgetAsks).toHaveLength(asks);
  });

  test('the broker wants its places back: the unused ones are given back, with the uses', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    h.link.grant = () => ({ granted: 5 });
    h.call(1, 'write_note');
    await settle();
    h.link.emit('budget-reclaim');
    expect(h.link.budgetReports.at(-1)).toEqual({ used: 1, returned: 4 });
    h.call(2, 'write_note');
    expect(h.forwardedCalls()).toHaveLength(1);
    await settle();
    expect(h.forwardedCalls()).toHaveLength(2);
  });

  test('the broker lost: a held call is refused, the places held are void, and none are forwarded on credit', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    const answer = deferred();
    h.link.grant = () => ({ granted: 3 });
    h.call(1, 'write_note');
    await settle();
    expect(h.forwardedCalls()).toHaveLength(1);
    h.link.grant = () => answer.promise;
    h.link.drop();
    h.link.state = 'up';
    h.link.push({ ...allowAll, estop: false });
    h.call(2, 'write_note');
    await settle();
    // the two places left from before the loss were not used: this call waits for a new one
    expect(h.forwardedCalls()).toHaveLength(1);
    answer.resolve({ granted: 1 });
    await settle();
    expect(h.forwardedCalls()).toHaveLength(2);
  });

  test('the ask fails (the broker went away): the held call is refused as such, never sent', async () => {
    const h = await new Harness({ policy: allowAll }).start();
    h.link.grant = () => Promise.reject(new Error('connection to Airlock lost'));
    h.call(1, 'write_note');
    await settle();
    expect(h.forwardedCalls()).toHaveLength(0);
    expect(h.decision(1)).toMatchObject({ decidedBy: 'broker-down' });
  });
});

describe('which calls count', () => {
  test('a trusted read-only claim needs no place; an unchecked one does; one withdrawn on evidence does from then on', async () => {
    const h = await new Harness({ policy: { ...allowAll, trustReadOnlyHints: true } }).start();
    h.link.grant = () => ({ granted: 0, refused: 'estop' });
    h.call(1, 'echo');
    expect(h.forwardedCalls()).toHaveLength(1);
    h.link.push({ withdrawn: { echo: 'the server sent notifications/resources/updated while "echo" was running' } });
    h.call(2, 'echo');
    await settle();
    expect(h.forwardedCalls()).toHaveLength(1);
    expect(h.decision(2)).toMatchObject({ decidedBy: 'estop' });

    const unchecked = await new Harness({ policy: allowAll }).start();
    unchecked.link.grant = () => ({ granted: 0, refused: 'estop' });
    unchecked.call(1, 'echo');
    await settle();
    expect(unchecked.forwardedCalls()).toHaveLength(0);
  });

  test('with the tripwire off (or a broker that does not say), no place is asked for', async () => {
    const h = await new Harness({ policy: { ...allowAll, tripwire: false } }).start();
    for (let i = 0; i < 50; i++) h.call(i, 'write_note');
    expect(h.forwardedCalls()).toHaveLength(50);
    expect(h.link.budgetAsks).toHaveLength(0);
  });
});

describe('the outcome is what the server did', () => {
  test.each([
    ['a result', { result: { content: [] } }, 'ok'],
    ['a tool error', { result: { content: [], isError: true } }, 'tool-error'],
    ['an error answer', { error: { code: -32800, message: 'cancelled' } }, 'cancelled'],
  ])('stopped by E-Stop, then %s from the server: journaled %s', async (_what, answer, outcome) => {
    const h = await new Harness({ policy: { ...allowAll, tripwire: false } }).start();
    h.call(1, 'write_note');
    h.link.push({ estop: true });
    expect(h.decision(1)).toMatchObject({ decidedBy: 'estop', sent: true });
    expect(h.link.records()[0]).toMatchObject({ outcome: 'cancelled' });
    h.server({ jsonrpc: '2.0', id: 1, ...answer });
    const r = h.link.records()[0]!;
    expect(r.outcome).toBe(outcome);
    expect(r.detail).toMatch(/stopped by E-Stop.*the server answered afterwards/);
  });
});

describe('a read-only claim withdrawn on evidence', () => {
  test('the trusted read-only calls running when a resource changed are counted as changing calls, and later ones need a place', async () => {
    const h = await new Harness({ policy: { ...allowAll, trustReadOnlyHints: true } }).start();
    h.link.grant = () => ({ granted: 0, refused: 'estop' });
    h.call(1, 'echo');
    h.call(2, 'echo');
    expect(h.forwardedCalls()).toHaveLength(2);
    h.server({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///notes/a.md' } });
    await h.advance(50);
    expect(h.link.budgetReports.reduce((n, r) => n + r.used, 0)).toBe(2);
    expect(h.link.budgetAsks).toHaveLength(0);
    h.call(3, 'echo');
    await settle();
    expect(h.forwardedCalls()).toHaveLength(2);
    expect(h.decision(3)).toMatchObject({ decidedBy: 'estop' });
  });
});
