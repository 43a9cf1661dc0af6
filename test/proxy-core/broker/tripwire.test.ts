/**
 * The tripwire: changing calls counted from journal entries in a sliding window, with a fake clock; and the
 * broker engaging E-Stop on it, saying why.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Broker } from '../../../proxy-core/src/broker/broker.js';
import { Store } from '../../../proxy-core/src/broker/db/store.js';
import { Tripwire, tripwireLimits, type TripwireLimits } from '../../../proxy-core/src/broker/tripwire.js';
import { WrapperMethod } from '../../../proxy-core/src/protocol/names.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { channelPair } from '../../helpers/memory-channel.js';

const LIMITS: TripwireLimits = { on: true, calls: 30, seconds: 10, long: { calls: 300, seconds: 600 } };

/** A journal entry as a wrapper sends it: by default an allowed, forwarded, changing call. */
function entry(id: string, at: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    tool: 'write_note',
    arguments: '{}',
    argsTruncated: false,
    class: 'mutating',
    reasons: [],
    decision: 'allow',
    decidedBy: 'rule',
    detail: '',
    outcome: 'pending',
    startedAt: at,
    forwardedAt: at,
    ...over,
  };
}

function burst(clock: FakeClock, n: number, prefix = 'c'): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => entry(`${prefix}${i}`, clock.now()));
}

describe('counting', () => {
  test('more than N changing calls within M seconds trips, and says how many in how long', () => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    expect(t.observe('s1', burst(clock, 30), LIMITS)).toBeNull();
    clock.advance(9000);
    expect(t.observe('s1', [entry('one-more', clock.now())], LIMITS)).toBe('31 changing calls in 10 s');
  });

  test('calls from every session count together; the same call id in two sessions is two calls', () => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    expect(t.observe('s1', burst(clock, 20), LIMITS)).toBeNull();
    expect(t.observe('s2', burst(clock, 11), LIMITS)).toBe('31 changing calls in 10 s');
  });

  test('a call reported twice (forwarded, then finished) counts once', () => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    const calls = burst(clock, 30);
    expect(t.observe('s1', calls, LIMITS)).toBeNull();
    expect(t.observe('s1', calls.map((c) => ({ ...c, outcome: 'ok', finishedAt: clock.now() })), LIMITS)).toBeNull();
  });

  test.each([
    ['refused calls', { decision: 'deny', decidedBy: 'rule', outcome: 'not-run' }],
    ['calls that were never forwarded', { forwardedAt: undefined }],
    ['read-only calls (trusted)', { class: 'read-only-trusted' }],
  ])('%s never count', (_what, over) => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    const many = Array.from({ length: 100 }, (_, i) => entry(`x${i}`, clock.now(), over));
    expect(t.observe('s1', many, LIMITS)).toBeNull();
    expect(t.observe('s1', burst(clock, 30), LIMITS)).toBeNull();
  });

  test('destructive, unclassifiable, unchecked read-only claims, and calls whose class is not named all count', () => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    const mixed = [
      ...Array.from({ length: 5 }, (_, i) => entry(`d${i}`, clock.now(), { class: 'destructive' })),
      ...Array.from({ length: 5 }, (_, i) => entry(`r${i}`, clock.now(), { class: 'read-only-unchecked' })),
      ...Array.from({ length: 10 }, (_, i) => entry(`u${i}`, clock.now(), { class: 'unclassifiable' })),
      ...Array.from({ length: 11 }, (_, i) => entry(`n${i}`, clock.now(), { class: undefined })),
    ];
    expect(t.observe('s1', mixed, LIMITS)).toBe('31 changing calls in 10 s');
  });

  test('the window slides: calls older than M seconds no longer count', () => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    expect(t.observe('s1', burst(clock, 30, 'a'), LIMITS)).toBeNull();
    clock.advance(10_000);
    expect(t.observe('s1', burst(clock, 30, 'b'), LIMITS)).toBeNull();
    clock.advance(5000);
    expect(t.observe('s1', [entry('c', clock.now())], LIMITS)).toBe('31 changing calls in 10 s');
  });

  test('a batch held while the broker was away counts by when its calls ran, not when it arrived', () => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    const old = Array.from({ length: 50 }, (_, i) => entry(`old${i}`, clock.now() - 60_000));
    expect(t.observe('s1', old, LIMITS)).toBeNull();
    // a wrapper's clock ahead of the broker's does not keep its calls in the window longer
    const ahead = Array.from({ length: 30 }, (_, i) => entry(`ahead${i}`, clock.now() + 3_600_000));
    expect(t.observe('s1', ahead, LIMITS)).toBeNull();
    clock.advance(10_000);
    expect(t.observe('s1', [entry('now', clock.now())], LIMITS)).toBeNull();
  });

  test('after tripping it counts afresh: calls that ran before do not count again when their end is reported', () => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    const first = burst(clock, 31, 'a');
    expect(t.observe('s1', first, LIMITS)).not.toBeNull();
    clock.advance(1);
    expect(t.observe('s1', first.map((c) => ({ ...c, outcome: 'cancelled' })), LIMITS)).toBeNull();
    expect(t.observe('s1', burst(clock, 30, 'b'), LIMITS)).toBeNull();
    expect(t.observe('s1', burst(clock, 1, 'c'), LIMITS)).toBe('31 changing calls in 10 s');
  });

  test('reset() (E-Stop pressed by a person) forgets what ran before, including entries reported afterwards', () => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    const before = burst(clock, 30, 'a');
    expect(t.observe('s1', before.slice(0, 20), LIMITS)).toBeNull();
    clock.advance(1);
    t.reset();
    clock.advance(1);
    expect(t.observe('s1', before.slice(20), LIMITS)).toBeNull();
    expect(t.observe('s1', burst(clock, 30, 'b'), LIMITS)).toBeNull();
  });

  test('off, it never trips; other limits are honoured', () => {
    const clock = new FakeClock();
    expect(new Tripwire(clock).observe('s1', burst(clock, 1000), { ...LIMITS, on: false })).toBeNull();
    expect(new Tripwire(clock).observe('s1', burst(clock, 4), { ...LIMITS, calls: 3, seconds: 60 })).toBe('4 changing calls in 60 s');
  });

  test('the long window: a loop that stays under the short limit trips it', () => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    let tripped: string | null = null;
    for (let round = 0; round < 20 && !tripped; round++) {
      tripped = t.observe('s1', burst(clock, 29, `r${round}-`), LIMITS);
      clock.advance(10_001);
    }
    expect(tripped).toBe('319 changing calls in 600 s'); // the eleventh batch of 29
  });

  test('hostile entries are skipped, never thrown on', () => {
    const clock = new FakeClock();
    const t = new Tripwire(clock);
    const junk: unknown[] = [null, 7, 'x', [], { id: 3, decision: 'allow', forwardedAt: clock.now() }, entry('nan', NaN), entry('inf', Infinity), { ...entry('s', clock.now()), forwardedAt: '1' }];
    expect(t.observe('s1', junk, LIMITS)).toBeNull();
  });
});

describe('limits from the settings', () => {
  test('defaults: on, more than 30 in 10 s, or more than 300 in 10 minutes', () => {
    expect(tripwireLimits(() => undefined)).toEqual({ on: true, calls: 30, seconds: 10, long: { calls: 300, seconds: 600 } });
  });

  test('stored values are used; a value the setting does not take falls back to the default', () => {
    const stored: Record<string, string> = { tripwire: 'off', 'tripwire-calls': '5', 'tripwire-seconds': '0', 'tripwire-long-calls': '50', 'tripwire-long-seconds': 'x' };
    expect(tripwireLimits((k) => stored[k])).toEqual({ on: false, calls: 5, seconds: 10, long: { calls: 50, seconds: 600 } });
  });
});

describe('the broker engages E-Stop on it', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(() => {
    for (const s of stores.splice(0)) s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function brokerWithWrapper() {
    const dir = mkdtempSync(join(tmpdir(), 'al-trip-'));
    dirs.push(dir);
    const store = new Store(join(dir, 'airlock.db'));
    stores.push(store);
    const clock = new FakeClock();
    const broker = new Broker({ presence: { required: false }, store, dataDir: dir, ackTimeoutMs: 1500, clock });
    const [end, peer] = channelPair();
    broker.attach(end, 'wrapper');
    const pushes: { estop: boolean }[] = [];
    peer.setHandlers({
      notify: (method, params) => {
        if (method !== 'policy') return;
        const p = params as { version: number; estop: boolean };
        pushes.push(p);
        peer.notify('policy.ack', { version: p.version });
      },
    });
    await peer.request(WrapperMethod.sessionOpen, { client: 'c', server: 'fs', command: ['x'], pid: 1, trustFlag: false });
    const journal = (entries: unknown[]) => peer.request(WrapperMethod.journal, { entries });
    return { broker, clock, journal, pushes };
  }

  test('a burst of changing calls: E-Stop on, every wrapper told, and the event says it was the tripwire and why', async () => {
    const { broker, clock, journal, pushes } = await brokerWithWrapper();
    await broker.setSetting('tripwire-calls', '5');
    await journal(burst(clock, 5));
    expect(broker.status().estop).toBe(false);
    await journal([entry('sixth', clock.now())]);
    expect(broker.status().estop).toBe(true);
    for (let i = 0; i < 20 && !pushes.at(-1)?.estop; i++) await new Promise((r) => setImmediate(r));
    expect(pushes.at(-1)).toMatchObject({ estop: true });
    const on = broker.events({ limit: 50 }).events.find((e) => e.type === 'estop-on');
    expect(on?.detail).toEqual({ by: 'tripwire', reason: '6 changing calls in 10 s' });
    // the calls themselves are journaled as ever
    expect(broker.history({ limit: 50 }).calls).toHaveLength(6);
  });

  test('a person pressing E-Stop is recorded as such; with the tripwire off, a burst changes nothing', async () => {
    const { broker, clock, journal } = await brokerWithWrapper();
    await broker.setSetting('tripwire', 'off');
    await journal(burst(clock, 200));
    expect(broker.status().estop).toBe(false);
    await broker.setEstop(true);
    // the burst's calls are filed into the journal (and get their events) after the E-Stop's event: read past them
    expect(broker.events({ limit: 500 }).events.find((e) => e.type === 'estop-on')?.detail).toEqual({ by: 'user' });
  });
});

describe('the broker hands out places over the wrapper protocol', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(() => {
    for (const s of stores.splice(0)) s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  interface FakeWrapper {
    peer: ReturnType<typeof channelPair>[1];
    held: number;
    reclaims: number;
    policies: { tripwire?: boolean; estop: boolean }[];
  }

  /** A broker and `n` wrappers on memory channels; each wrapper answers a reclaim as a real one does. */
  async function brokerWithWrappers(n: number) {
    const dir = mkdtempSync(join(tmpdir(), 'al-trip-'));
    dirs.push(dir);
    const store = new Store(join(dir, 'airlock.db'));
    stores.push(store);
    const broker = new Broker({ presence: { required: false }, store, dataDir: dir, ackTimeoutMs: 1500, clock: new FakeClock() });
    const wrappers: FakeWrapper[] = [];
    for (let i = 0; i < n; i++) {
      const [end, peer] = channelPair();
      broker.attach(end, 'wrapper');
      const w: FakeWrapper = { peer, held: 0, reclaims: 0, policies: [] };
      peer.setHandlers({
        notify: (method, params) => {
          if (method === 'policy') {
            const p = params as { version: number; estop: boolean; tripwire?: boolean };
            w.policies.push(p);
            peer.notify('policy.ack', { version: p.version });
          } else if (method === 'tripwire.reclaim') {
            w.reclaims++;
            peer.notify('tripwire.report', { used: 0, returned: w.held });
            w.held = 0;
          }
        },
      });
      const opened = await peer.request<{ policy: { tripwire?: boolean; estop: boolean } }>(WrapperMethod.sessionOpen, { client: 'c', server: `s${i}`, command: ['x'], pid: i + 1, trustFlag: false });
      w.policies.push(opened.policy);
      wrappers.push(w);
    }
    const ask = async (w: FakeWrapper, a: { used: number; want: number; waiting: boolean }) => {
      const g = await w.peer.request<{ granted: number; refused?: string }>(WrapperMethod.budget, a);
      w.held += g.granted;
      return g;
    };
    return { broker, wrappers, ask };
  }

  test('the policy says the tripwire is on; places one wrapper holds idle are called back for another one\'s waiting call', async () => {
    const { broker, wrappers, ask } = await brokerWithWrappers(2);
    const [idle, busy] = wrappers as [FakeWrapper, FakeWrapper];
    expect(idle.policies[0]).toMatchObject({ tripwire: true });
    while ((await ask(idle, { used: 0, want: 100, waiting: false })).granted > 0);
    expect(idle.held).toBe(30);
    const g = await ask(busy, { used: 0, want: 5, waiting: true });
    expect(idle.reclaims).toBe(1);
    expect(g.granted).toBeGreaterThan(0);
    expect(broker.status().estop).toBe(false);
  });

  test('a wrapper that vanishes holding places has them counted as run: the next call past the limit trips', async () => {
    const { broker, wrappers, ask } = await brokerWithWrappers(2);
    const [gone, other] = wrappers as [FakeWrapper, FakeWrapper];
    while ((await ask(gone, { used: 0, want: 100, waiting: false })).granted > 0);
    gone.peer.destroy();
    for (let i = 0; i < 20 && broker.status().sessions.length > 1; i++) await new Promise((r) => setImmediate(r));
    expect(await ask(other, { used: 0, want: 1, waiting: true })).toEqual({ granted: 0, refused: 'estop' });
    expect(broker.status().estopCause).toMatchObject({ by: 'tripwire', reason: '31 changing calls in 10 s' });
    await new Promise((r) => setImmediate(r));
    expect(other.policies.at(-1)).toMatchObject({ estop: true });
  });

  test('turning the tripwire off reaches every wrapper (its changing calls then need no place)', async () => {
    const { broker, wrappers } = await brokerWithWrappers(1);
    await broker.setSetting('tripwire', 'off');
    expect(wrappers[0]!.policies.at(-1)).toMatchObject({ tripwire: false });
    await broker.setSetting('tripwire', 'on');
    expect(wrappers[0]!.policies.at(-1)).toMatchObject({ tripwire: true });
  });
});
