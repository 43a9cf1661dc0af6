/**
 * Grants in the broker: an approval that grants a time or a number of calls makes an allow rule that ends by
 * itself — at its instant (the fake clock), or when its last call is spent — and a count is never overspent by
 * wrappers asking at once. A grant's row cannot be stretched by editing it (its seal covers its end and count).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Broker } from '../../../proxy-core/src/broker/broker.js';
import { RuleBook } from '../../../proxy-core/src/broker/rule-book.js';
import type { RecordEvent } from '../../../proxy-core/src/broker/events.js';
import { Store } from '../../../proxy-core/src/broker/db/store.js';
import type { AskAnswer, Rule } from '../../../proxy-core/src/protocol/api.js';
import { WrapperMethod } from '../../../proxy-core/src/protocol/names.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { channelPair } from '../../helpers/memory-channel.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(dir = mkdtempSync(join(tmpdir(), 'al-grants-'))) {
  dirs.push(dir);
  const store = new Store(join(dir, 'airlock.db'));
  stores.push(store);
  const clock = new FakeClock();
  const broker = new Broker({ presence: { required: false }, store, dataDir: dir, ticketTimeoutSeconds: 120, ackTimeoutMs: 1500, clock });
  return { broker, clock, store, dir };
}

async function wrapper(broker: Broker) {
  const [end, peer] = channelPair();
  broker.attach(end, 'wrapper');
  const pushes: { rules: Rule[] }[] = [];
  peer.setHandlers({
    notify: (method, params) => {
      if (method === 'policy') {
        pushes.push(params as { rules: Rule[] });
        peer.notify('policy.ack', { version: (params as { version: number }).version });
      }
    },
    request: () => undefined,
  });
  await peer.request(WrapperMethod.sessionOpen, { client: 'c', server: 'fs', command: ['x'], pid: 1, trustFlag: false });
  return {
    pushes,
    ask: (tool: string, args: Record<string, unknown>, grant?: string) =>
      peer.request<AskAnswer>(WrapperMethod.ask, { callId: `call-${Math.random()}`, tool, arguments: args, class: 'mutating', reasons: ['r'], ...(grant ? { grant } : {}) }),
  };
}

const tick = () => new Promise((r) => setImmediate(r));
async function untilTicket(broker: Broker, n = 1) {
  for (let i = 0; i < 100 && broker.pending().length < n; i++) await tick();
  return broker.pending()[n - 1]!;
}

/** Hold one call, then approve it with `grant` (always, scoped to path under /notes when `scoped`). */
async function grantFrom(broker: Broker, w: Awaited<ReturnType<typeof wrapper>>, grant: { seconds?: number; calls?: number; until?: number }, scoped = false): Promise<Rule> {
  const held = w.ask('write', { path: '/notes/a.md' });
  const ticket = await untilTicket(broker);
  await broker.callUser('approve', { id: ticket.id, remember: 'always', grant, ...(scoped ? { args: [{ arg: 'path', kind: 'path', glob: '/notes/**' }] } : {}) });
  expect((await held).decision).toBe('allow');
  return broker.rules().at(-1)!;
}

describe('a grant for a time', () => {
  test('is an allow rule with its end; at the second it ends the broker removes it and pushes the policy without it', async () => {
    const { broker, clock } = setup();
    const w = await wrapper(broker);
    const rule = await grantFrom(broker, w, { seconds: 900 });
    expect(rule).toMatchObject({ action: 'allow', tool: 'write', expiresAt: clock.now() + 900_000 });
    expect(w.pushes.at(-1)!.rules.map((r) => r.id)).toContain(rule.id);
    clock.advance(899_999);
    expect(broker.rules().map((r) => r.id)).toContain(rule.id);
    clock.advance(1);
    await tick();
    expect(broker.rules().map((r) => r.id)).not.toContain(rule.id);
    expect(w.pushes.at(-1)!.rules.map((r) => r.id)).not.toContain(rule.id);
  });

  test('a time in the past or further off than a week is refused, saying why', async () => {
    const { broker, clock } = setup();
    const w = await wrapper(broker);
    void w.ask('write', {});
    const ticket = await untilTicket(broker);
    await expect(broker.callUser('approve', { id: ticket.id, remember: 'always', grant: { until: clock.now() - 1 } })).rejects.toThrow(/before it starts/);
    await expect(broker.callUser('approve', { id: ticket.id, remember: 'always', grant: { until: clock.now() + 8 * 24 * 3600_000 } })).rejects.toThrow(/a week at most/);
    await expect(broker.callUser('approve', { id: ticket.id, remember: 'once', grant: { seconds: 60 } })).rejects.toThrow(/remember "always"/);
  });
});

describe('a grant of N calls', () => {
  test('allows exactly N calls across two wrappers asking at once, then ends; the next call is held', async () => {
    const { broker } = setup();
    const a = await wrapper(broker);
    const b = await wrapper(broker);
    const rule = await grantFrom(broker, a, { calls: 3 }, true);
    expect(rule).toMatchObject({ calls: 3, callsGranted: 3 });
    const answers = await Promise.all([a.ask('write', { path: '/notes/1' }, rule.id), b.ask('write', { path: '/notes/2' }, rule.id), a.ask('write', { path: '/notes/3' }, rule.id), b.ask('write', { path: '/notes/4' }, rule.id).then((x) => x, () => null)].map((p, i) => (i < 3 ? p : Promise.race([p, tick().then(() => tick()).then(() => 'held' as const)]))));
    expect(answers.slice(0, 3).map((x) => (x as AskAnswer).decision)).toEqual(['allow', 'allow', 'allow']);
    expect(answers.slice(0, 3).map((x) => (x as AskAnswer).decidedBy)).toEqual(['rule', 'rule', 'rule']);
    expect((answers[0] as AskAnswer).reason).toMatch(/grant of 3 calls .*2 of 3 calls left/);
    // the fourth found no call left: held as a ticket for a person
    expect(answers[3]).toBe('held');
    expect(broker.pending()).toHaveLength(1);
    expect(broker.rules().map((r) => r.id)).not.toContain(rule.id);
  });

  test("a call outside the grant's conditions spends nothing and is held", async () => {
    const { broker } = setup();
    const w = await wrapper(broker);
    const rule = await grantFrom(broker, w, { calls: 2 }, true);
    void w.ask('write', { path: '/etc/passwd' }, rule.id);
    await untilTicket(broker);
    expect(broker.rules().find((r) => r.id === rule.id)?.calls).toBe(2);
  });

  test('editing its row to give it more calls breaks its seal: the grant is no longer applied', async () => {
    const { broker, store, dir } = setup();
    const w = await wrapper(broker);
    const rule = await grantFrom(broker, w, { calls: 2 });
    store.db.prepare('UPDATE rules SET calls_left = 50 WHERE id = ?').run(rule.id);
    broker.shutdown();
    store.close();
    const again = setup(dir);
    expect(again.broker.rules().map((r) => r.id)).not.toContain(rule.id);
  });
});

describe('a rule book of very many rules', () => {
  test('200,000 rules (a database someone filled): the book opens, and the one grant among them still ends at its time', () => {
    const clock = new FakeClock();
    const grant = { id: 'r-grant', action: 'allow', server: 's', tool: 't', createdAt: 0, expiresAt: clock.now() + 60_000 } as Rule;
    let rules: Rule[] = [...Array.from({ length: 200_000 }, (_, i) => ({ id: `r${i}`, action: 'deny', server: `s${i}`, tool: '*', createdAt: 0 }) as Rule), grant];
    const removed: string[] = [];
    const store = {
      rules: () => rules,
      removeRule: (id: string) => {
        removed.push(id);
        rules = rules.filter((r) => r.id !== id);
        return true;
      },
    } as unknown as Store;
    const book = new RuleBook({ store, clock, record: (() => ({})) as unknown as RecordEvent });
    expect(book.list()).toHaveLength(200_001);
    clock.advance(60_000);
    expect(removed).toEqual(['r-grant']);
    book.close();
  });
});
