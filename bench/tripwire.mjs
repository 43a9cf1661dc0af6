// The tripwire as a cap: a pipelined burst of 600 changing calls (the fixture's write_note, allowed by a rule)
// written to one `airlock wrap` at once, with the tripwire's default limits. What counts is what the fixture
// server itself logged as executed, against the limit; and what the journal calls `ok` against the same log.
// Then the cost of the budget to an allowed call: the same changing call, one at a time, with the tripwire on
// (limits raised so it never trips: every call takes a place, a counter decrement) and off, alternating in
// blocks in the same run. Imported by a runner that owns the broker (tripwireRows({ home, env })), or run on
// its own (`node bench/tripwire.mjs`), which starts a broker in a temporary home. Not a test: nothing passes.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawSession } from './raw-session.mjs';
import { EventEmitter } from 'node:events';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { CallBudget } from '../proxy-core/dist/wrap/call-budget.js';
import { systemClock } from '../proxy-core/dist/util/clock.js';
import { FIXTURE, WRAP } from './paths.mjs';
import { median } from './stats.mjs';
import { withOwnBroker } from './own-broker.mjs';

const SERVER = 'bench-tripwire';
const BURST = 600;

function session(home, env, name) {
  const log = join(home, `${name}-${process.pid}-${Date.now()}.log`);
  const raw = rawSession(process.execPath, [...WRAP, '--name', name, '--client', 'bench', '--', process.execPath, FIXTURE], { ...env, FIXTURE_LOG: log });
  const ran = (prefix) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('"tool":"write_note"') && l.includes(`"${prefix}`)).length : 0);
  return { ...raw, ran };
}

async function until(check, what, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`tripwire bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function settings(broker, values) {
  for (const [key, value] of Object.entries(values)) await broker.call('settings.set', { key, value });
}

/** The burst: how many write_notes the server ran, how the journal has them, and what E-Stop says. */
async function burst(broker, home, env) {
  await settings(broker, { tripwire: 'on', 'tripwire-calls': '30', 'tripwire-seconds': '10', 'tripwire-long-calls': '300', 'tripwire-long-seconds': '600' });
  await broker.call('estop', { on: false });
  const s = session(home, env, `${SERVER}-burst`);
  try {
    await s.init();
    const answers = [];
    for (let i = 0; i < BURST; i++) answers.push(s.request('tools/call', { name: 'write_note', arguments: { text: `burst${i}` } }));
    await Promise.all(answers);
    const status = await broker.call('status', {});
    const history = (q) => broker.call('history', { server: `${SERVER}-burst`, limit: 1000, ...q });
    await until(async () => (await history({})).calls.filter((c) => c.outcome !== 'pending').length >= BURST, 'the journal');
    // read once the journal is complete: a call E-Stop answered while it was on its way may run a little later
    const ran = s.ran('burst');
    const ok = (await history({ outcome: 'ok' })).calls.length;
    const cancelled = (await history({ outcome: 'cancelled' })).calls.length;
    return { ran, ok, cancelled, cause: status.estopCause?.reason ?? (status.estop ? 'E-Stop on' : 'E-Stop off') };
  } finally {
    await s.close();
    await broker.call('estop', { on: false });
  }
}

/** The same changing call one at a time, with the budget (tripwire on, never tripping) and without (off). */
async function cost(broker, home, env, quick) {
  await settings(broker, { 'tripwire-calls': '100000', 'tripwire-long-calls': '1000000' });
  const s = session(home, env, `${SERVER}-cost`);
  const times = { on: [], off: [] };
  const blocks = quick ? 6 : 20;
  const perBlock = quick ? 100 : 200;
  try {
    await s.init();
    let n = 0;
    for (let b = 0; b < blocks; b++) {
      const mode = b % 2 ? 'off' : 'on';
      await settings(broker, { tripwire: mode });
      for (let i = 0; i < perBlock; i++) {
        const t0 = performance.now();
        const r = await s.request('tools/call', { name: 'write_note', arguments: { text: `cost${++n}` } });
        const ms = performance.now() - t0;
        if (r.error || r.result?.isError) throw new Error(`tripwire bench: write_note failed: ${JSON.stringify(r.error ?? r.result).slice(0, 300)}`);
        // the first calls of a block wait for the policy push and the first place: not the steady state
        if (i >= 10) times[mode].push(ms);
      }
    }
  } finally {
    await s.close();
  }
  return { on: median(times.on), off: median(times.off), n: times.on.length };
}

/** The budget's check alone, in this process: what a changing call pays when its wrapper holds places (ns). */
async function check(quick) {
  const link = Object.assign(new EventEmitter(), { budget: async (a) => ({ granted: 10_000 * (a.want > 0 ? 1000 : 0) }), budgetReport() {} });
  const budget = new CallBudget(link, systemClock);
  link.emit('policy', { estop: false, tripwire: true });
  await new Promise((r) => setImmediate(r));
  const waiter = { live: () => true, go: () => true, refuse() {} };
  const n = quick ? 1_000_000 : 5_000_000;
  let taken = 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) if (budget.admit(waiter)) taken++;
  const ns = ((performance.now() - t0) * 1e6) / n;
  if (taken !== n) throw new Error(`tripwire bench: ${n - taken} of ${n} checks did not find a place`);
  link.emit('closing');
  return ns;
}

/** The bench's rows: [measure, direct, byte relay, airlock wrap, vs baseline, target]. */
export async function tripwireRows({ home, env, quick = false }) {
  const broker = await BrokerClient.connect({ dir: home });
  const rule = await broker.call('rules.add', { action: 'allow', server: `${SERVER}*`, tool: 'write_note' });
  const before = Object.fromEntries((await broker.call('settings.list', {})).filter((s) => s.key.startsWith('tripwire')).map((s) => [s.key, s.value]));
  try {
    const b = await burst(broker, home, env);
    const c = await cost(broker, home, env, quick);
    const ns = await check(quick);
    const f = (x) => x.toFixed(3);
    return [
      [
        `tripwire: changing calls the server ran of a ${BURST}-call pipelined burst (default limits)`,
        '–',
        '–',
        String(b.ran),
        `limit 30 in 10 s; E-Stop: ${b.cause}; journal: ${b.ok} ok of ${b.ran} run, ${b.cancelled} cancelled, the rest refused unsent`,
        '≤ 30',
      ],
      [
        `allowed changing call p50 with the tripwire's budget (ms, median of ${c.n})`,
        '–',
        '–',
        f(c.on),
        `${(c.on / c.off).toFixed(2)}× the same call with the tripwire off (${f(c.off)} ms)`,
        '≈ 1×',
      ],
      [
        "the budget's check on an allowed changing call, in process (ns per call)",
        '–',
        '–',
        ns.toFixed(1),
        `${((ns / 1e6 / c.off) * 100).toFixed(3)} % of the call's p50 with the tripwire off`,
        '(for information)',
      ],
    ];
  } finally {
    await settings(broker, before).catch(() => {});
    await broker.call('estop', { on: false }).catch(() => {});
    await broker.call('rules.remove', { id: rule.id }).catch(() => {});
    broker.close();
  }
}

// ---- on its own: a broker of its own in a temporary home -------------------------------------------------
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await withOwnBroker('al-bench-tripwire-', async ({ home, env }) => {
    const rows = await tripwireRows({ home, env, quick: process.argv.includes('--quick') });
    process.stdout.write(`| measure | direct | byte relay | airlock wrap | airlock vs baseline | target |\n|---|---|---|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
  });
}
