// E-Stop, hard: from the command (the broker's `estop` method, as any front end sends it) to every in-flight call
// of 8 busy sessions answered. Each round, every session has 4 calls running at its server (the fixture's `sleep`,
// confirmed by the fixture's own log), then E-Stop is pressed and each call's answer time is taken against the
// moment the command was sent. The servers answer within the grace, so no server is terminated between rounds.
// Imported by run.mjs, which owns the broker; not a test: nothing here passes or fails.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rawSession } from './raw-session.mjs';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { FIXTURE, WRAP } from './paths.mjs';
import { quantile } from './stats.mjs';

const SESSIONS = 8;
const CALLS_PER_SESSION = 4;
const SERVER = 'bench-estop';

/** One `airlock wrap` around the fixture, spoken to in JSON lines; answers are timed as they are read. */
function session(home, env, i) {
  const log = join(home, `estop-${i}.log`);
  const raw = rawSession(process.execPath, [...WRAP, '--name', SERVER, '--client', 'bench', '--', process.execPath, FIXTURE], { ...env, FIXTURE_LOG: log });
  // the fixture logs each call it runs before answering it: how many sleeps it has started
  const started = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('"tool":"sleep"')).length : 0);
  return { ...raw, request: raw.timedRequest, started };
}

async function until(check, what, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`E-Stop bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Run the measure against the broker in `home`; returns the main table's row(s). */
export async function estopRows({ home, env, quick = false }) {
  const rounds = quick ? 5 : 20;
  const broker = await BrokerClient.connect({ dir: home });
  const rule = await broker.call('rules.add', { action: 'allow', server: SERVER, tool: 'sleep' });
  const sessions = [];
  try {
    for (let i = 0; i < SESSIONS; i++) {
      const s = session(home, env, i);
      await s.init();
      sessions.push(s);
    }
    const perCall = [];
    const allAnswered = [];
    const commandReturned = [];
    let notStopped = 0;
    for (let round = 0; round < rounds; round++) {
      const answers = [];
      for (const s of sessions) {
        const before = s.started();
        for (let c = 0; c < CALLS_PER_SESSION; c++) answers.push(s.request('tools/call', { name: 'sleep', arguments: { ms: 1500 } }));
        // busy for real: every call is running at its server
        await until(() => s.started() >= before + CALLS_PER_SESSION, 'the calls to reach the server');
      }
      const t0 = performance.now();
      await broker.call('estop', { on: true });
      commandReturned.push(performance.now() - t0);
      const got = await Promise.all(answers);
      const times = got.map(({ at }) => at - t0);
      perCall.push(...times);
      allAnswered.push(Math.max(...times));
      notStopped += got.filter(({ m }) => m.result?._meta?.['airlock/decision']?.decidedBy !== 'estop').length;
      await broker.call('estop', { on: false });
    }
    if (notStopped > 0) throw new Error(`E-Stop bench: ${notStopped} call(s) were not answered as stopped by E-Stop`);
    const f = (x) => x.toFixed(1);
    const n = perCall.length;
    return [
      [
        `E-Stop: command to every in-flight call of ${SESSIONS} busy sessions answered, p99 (ms)`,
        '–',
        '–',
        f(quantile(perCall, 0.99)),
        `${n} calls (${CALLS_PER_SESSION} per session, ${rounds} rounds); all answered: median ${f(quantile(allAnswered, 0.5))}, worst ${f(Math.max(...allAnswered))}; command returned: median ${f(quantile(commandReturned, 0.5))}`,
        '≤ 100 ms',
      ],
    ];
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
    await broker.call('rules.remove', { id: rule.id }).catch(() => {});
    broker.close();
  }
}
