// E-Stop and tool calls running as MCP tasks: from the command (the broker's `estop` method) to tasks/cancel at
// the server for every running task of 4 sessions (2 tasks each, working one step every 100 ms), and how many
// steps the servers ran after the command returned. Times are the servers' own log (ground truth: when the
// server read tasks/cancel, and each step it ran), against the wall clock the command was sent at. The task
// server obeys the cancellation, so no server is terminated between rounds. Not a test: nothing passes or fails.
//
// Standalone: `node bench/estop-tasks.mjs [--quick]` starts its own broker and prints the rows.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withOwnBroker } from './own-broker.mjs';
import { rawSession } from './raw-session.mjs';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { ROOT, WRAP } from './paths.mjs';
import { quantile } from './stats.mjs';

const TASKS = join(ROOT, 'test', 'fixtures', 'servers', 'task-server.mjs');
const SESSIONS = 4;
const TASKS_PER_SESSION = 2;
const SERVER = 'bench-tasks';

const logOf = (path) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

async function until(check, what, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`E-Stop tasks bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Run the measure against the broker in `home`; returns the rows [measure, direct, byte relay, airlock wrap, comparison, target]. */
export async function estopTasksRows({ home, env, quick = false }) {
  const rounds = quick ? 3 : 10;
  const broker = await BrokerClient.connect({ dir: home });
  const rule = await broker.call('rules.add', { action: 'allow', server: SERVER, tool: 'job' });
  const sessions = [];
  try {
    for (let i = 0; i < SESSIONS; i++) {
      const log = join(home, `tasks-${i}.log`);
      const s = rawSession(process.execPath, [...WRAP, '--name', SERVER, '--client', 'bench', '--', process.execPath, TASKS], { ...env, FIXTURE_LOG: log });
      await s.init();
      sessions.push({ s, log });
    }
    const toCancel = [];
    let stepsAfter = 0;
    let notCancelled = 0;
    for (let round = 0; round < rounds; round++) {
      const ids = [];
      for (const { s, log } of sessions) {
        for (let t = 0; t < TASKS_PER_SESSION; t++) {
          const r = await s.request('tools/call', { name: 'job', arguments: {}, task: { ttl: 60_000 } });
          const taskId = r.result?.task?.taskId;
          if (typeof taskId !== 'string') throw new Error(`E-Stop tasks bench: no task handle: ${JSON.stringify(r).slice(0, 300)}`);
          ids.push({ log, taskId });
        }
      }
      // working for real: every task has run a step at its server
      await until(() => ids.every(({ log, taskId }) => logOf(log).some((e) => e.taskId === taskId && e.step >= 1)), 'the tasks to run');
      const sentAt = Date.now();
      await broker.call('estop', { on: true });
      const returnedAt = Date.now();
      await until(() => ids.every(({ log, taskId }) => logOf(log).some((e) => e.taskId === taskId && e.status === 'cancelled')), 'every task cancelled', 15_000);
      for (const { log, taskId } of ids) {
        const entries = logOf(log);
        const cancel = entries.find((e) => e.method === 'tasks/cancel' && e.params?.taskId === taskId);
        if (!cancel) notCancelled++;
        else toCancel.push(cancel.at - sentAt);
        stepsAfter += entries.filter((e) => e.taskId === taskId && typeof e.step === 'number' && e.at > returnedAt).length;
      }
      await broker.call('estop', { on: false });
    }
    if (notCancelled > 0) throw new Error(`E-Stop tasks bench: ${notCancelled} task(s) ended without tasks/cancel from Airlock`);
    const n = toCancel.length;
    return [
      [
        `E-Stop: command to tasks/cancel at the server for every running task of ${SESSIONS} sessions, p99 (ms)`,
        '–',
        '–',
        String(quantile(toCancel, 0.99)),
        `${n} tasks (${TASKS_PER_SESSION} per session, ${rounds} rounds), median ${quantile(toCancel, 0.5)}; task steps run after the command returned: ${stepsAfter} in all (a step every 100 ms)`,
        '≤ 100 ms',
      ],
    ];
  } finally {
    await Promise.all(sessions.map(({ s }) => s.close()));
    await broker.call('rules.remove', { id: rule.id }).catch(() => {});
    broker.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await withOwnBroker('al-bench-tasks-', async ({ home, env }) => {
      for (const row of await estopTasksRows({ home, env, quick: process.argv.includes('--quick') })) process.stdout.write(`| ${row.join(' | ')} |\n`);
  });
}
