/**
 * The tripwire as a cap, at the broker: places for changing calls handed to sessions, with a fake clock. Each
 * test plays wrappers that forward every place they get (as a pipelined burst does) and checks what could have
 * reached a server against the limit: never more than the limit in a window, and the call that would pass it
 * trips E-Stop instead of running.
 */
import { describe, expect, test } from 'vitest';
import { RECLAIM_WAIT_MS, TripwireBudget, type BudgetGrant } from '../../../proxy-core/src/broker/tripwire-budget.js';
import type { TripwireLimits } from '../../../proxy-core/src/broker/tripwire.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const DEFAULTS: TripwireLimits = { on: true, calls: 30, seconds: 10, long: { calls: 300, seconds: 600 } };

function ledger(limits: TripwireLimits = DEFAULTS, sessions = 1) {
  const clock = new FakeClock();
  let estop = false;
  const trips: string[] = [];
  const reclaims: string[] = [];
  let budget!: TripwireBudget;
  budget = new TripwireBudget({
    clock,
    limits: () => limits,
    estop: () => estop,
    sessions: () => sessions,
    reclaim: (id) => reclaims.push(id),
    trip: (reason) => {
      // as the broker does: E-Stop on, then the ledger starts afresh
      estop = true;
      trips.push(reason);
      budget.reset();
    },
  });
  return { clock, budget, trips, reclaims, release: () => (estop = false) };
}

/** A wrapper that forwards every place it gets at once and asks again, while its burst lasts. */
async function burst(budget: TripwireBudget, session: string, calls: number): Promise<{ ran: number; last: BudgetGrant }> {
  let ran = 0;
  let unreported = 0;
  let last: BudgetGrant = { granted: 0 };
  while (ran < calls) {
    last = await budget.ask(session, { used: unreported, want: calls - ran, waiting: true });
    unreported = 0;
    if (last.granted === 0) break;
    const n = Math.min(last.granted, calls - ran);
    ran += n;
    unreported += n;
  }
  if (unreported > 0) budget.report(session, unreported, 0);
  return { ran, last };
}

describe('one session', () => {
  test('a burst of 600: exactly the limit runs, the next call trips E-Stop and is refused', async () => {
    const { budget, trips } = ledger();
    const { ran, last } = await burst(budget, 's1', 600);
    expect(ran).toBe(30);
    expect(last).toEqual({ granted: 0, refused: 'estop' });
    expect(trips).toEqual(['31 changing calls in 10 s']);
  });

  test('a grant is a share, never more than is left; stocking up with nothing left gets nothing and trips nothing', async () => {
    const { budget, trips } = ledger();
    const first = (await budget.ask('s1', { used: 0, want: 1000, waiting: false })).granted;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(30);
    await burst(budget, 's1', 30 - first);
    budget.report('s1', first, 0);
    expect(budget.totals().forwarded[0]).toBe(30);
    expect(await budget.ask('s1', { used: 0, want: 5, waiting: false })).toEqual({ granted: 0 });
    expect(trips).toEqual([]);
  });

  test('the window slides: once the calls are older than the window, places are given again', async () => {
    const { budget, clock, trips } = ledger();
    expect((await burst(budget, 's1', 30)).ran).toBe(30);
    clock.advance(10_001);
    expect((await burst(budget, 's1', 30)).ran).toBe(30);
    expect(trips).toEqual([]);
  });

  test('the long window: 29 calls every 10 s, for ever, is stopped at 300', async () => {
    const { budget, clock, trips } = ledger();
    let total = 0;
    for (let round = 0; round < 30 && trips.length === 0; round++) {
      total += (await burst(budget, 's1', 29)).ran;
      clock.advance(10_001);
    }
    expect(total).toBe(300);
    expect(trips).toEqual(['301 changing calls in 600 s']);
  });

  test('off: every place asked for is given, and nothing trips', async () => {
    const { budget, trips } = ledger({ ...DEFAULTS, on: false });
    expect((await burst(budget, 's1', 600)).ran).toBe(600);
    expect(trips).toEqual([]);
  });

  test('E-Stop on: nothing is given; after release the windows start afresh', async () => {
    const l = ledger();
    await burst(l.budget, 's1', 31);
    expect(await l.budget.ask('s1', { used: 0, want: 1, waiting: true })).toEqual({ granted: 0, refused: 'estop' });
    l.release();
    expect((await burst(l.budget, 's1', 30)).ran).toBe(30);
  });
});

describe('several sessions', () => {
  test('what is handed out plus what ran never exceeds the limit, however the sessions interleave', async () => {
    const { budget, trips } = ledger(DEFAULTS, 3);
    const held = new Map<string, number>();
    let ran = 0;
    for (let step = 0; step < 200 && trips.length === 0; step++) {
      const s = `s${step % 3}`;
      const used = held.get(s) ?? 0;
      ran += used;
      const grant = budget.ask(s, { used, want: 50, waiting: false });
      held.set(s, (grant as BudgetGrant).granted);
      const { forwarded, outstanding } = budget.totals();
      expect(forwarded[0]! + outstanding).toBeLessThanOrEqual(30);
      if ((grant as BudgetGrant).granted === 0) {
        // a call waits: the others are asked to give back, and do (having forwarded what they held)
        const waiting = budget.ask(s, { used: 0, want: 1, waiting: true });
        for (const other of ['s0', 's1', 's2']) {
          if (other === s) continue;
          ran += held.get(other) ?? 0;
          budget.report(other, held.get(other) ?? 0, 0);
          held.set(other, 0);
        }
        const g = await waiting;
        ran += g.granted;
        budget.report(s, g.granted, 0);
      }
    }
    expect(ran).toBe(30);
    expect(trips).toEqual(['31 changing calls in 10 s']);
  });

  test('places another session holds and never used are called back for a waiting call: no trip', async () => {
    const { budget, reclaims, trips } = ledger(DEFAULTS, 2);
    // the first takes what it can, a little at a time, then goes idle holding it
    let idle = 0;
    for (let g = budget.ask('idle', { used: 0, want: 30, waiting: false }) as BudgetGrant; g.granted > 0; g = budget.ask('idle', { used: 0, want: 30, waiting: false }) as BudgetGrant) idle += g.granted;
    expect(idle).toBe(30);
    const waiting = budget.ask('busy', { used: 0, want: 5, waiting: true });
    expect(reclaims).toEqual(['idle']);
    budget.report('idle', 0, idle);
    expect((await waiting).granted).toBeGreaterThan(0);
    expect(trips).toEqual([]);
  });

  test('a holder that never gives back: the waiting call is refused as busy, nothing trips', async () => {
    const { budget, clock, trips } = ledger(DEFAULTS, 2);
    while ((budget.ask('mute', { used: 0, want: 30, waiting: false }) as BudgetGrant).granted > 0);
    const waiting = budget.ask('busy', { used: 0, want: 1, waiting: true });
    clock.advance(RECLAIM_WAIT_MS);
    expect(await waiting).toEqual({ granted: 0, refused: 'busy' });
    expect(trips).toEqual([]);
  });

  test('a session that closes cleanly gives its places back; one that vanishes has them counted as run', async () => {
    const { budget } = ledger(DEFAULTS, 2);
    const a = (budget.ask('a', { used: 0, want: 100, waiting: false }) as BudgetGrant).granted;
    budget.report('a', 0, a);
    budget.closed('a');
    expect(budget.totals()).toEqual({ forwarded: [0, 0], outstanding: 0 });
    const b = (budget.ask('b', { used: 0, want: 100, waiting: false }) as BudgetGrant).granted;
    budget.closed('b');
    expect(budget.totals()).toEqual({ forwarded: [b, b], outstanding: 0 });
  });

  test('three sessions, 29 calls every 10 s between them: the long window stops the loop at 300', async () => {
    const { budget, clock, trips } = ledger(DEFAULTS, 3);
    let total = 0;
    for (let round = 0; round < 30 && trips.length === 0; round++) {
      for (let i = 0; i < 29 && trips.length === 0; i++) total += (await burst(budget, `s${i % 3}`, 1)).ran;
      clock.advance(10_001);
    }
    expect(total).toBe(300);
    expect(trips).toEqual(['301 changing calls in 600 s']);
  });
});
