// Broker kills under load: several wrapped fixture servers kept busy (a few calls in flight each, auto-allowed),
// the broker SIGKILLed and started again 10 times, then what the fixture servers logged as executed is compared
// with the journal on disk. Refused calls (while the broker is down every call fails closed) are not counted.
// Also: what one spill batch (the records written, fsync'd, while the broker is away) costs; while the broker is
// up nothing is spilled, so the allowed call pays nothing for it. Runs its own broker in its own data dir (it
// kills it); not a test: nothing here passes or fails. `node bench/broker-kills.mjs [--quick]` prints the rows.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { rawSession } from './raw-session.mjs';
import { SpillFile } from '../proxy-core/dist/ipc/spill-file.js';
import { CLI, FIXTURE, WRAP } from './paths.mjs';
import { startBroker } from './own-broker.mjs';

const SESSIONS = 4;
const IN_FLIGHT = 4;

function kill(proc) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.removeAllListeners('exit');
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

async function until(check, what, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`broker-kills bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ranTexts = (logs) => {
  const out = new Set();
  for (const log of logs) {
    if (!existsSync(log)) continue;
    for (const line of readFileSync(log, 'utf8').split('\n')) {
      if (!line) continue;
      const e = JSON.parse(line);
      if (e.tool === 'echo') out.add(String(e.arguments?.text));
    }
  }
  return out;
};

function journaledTexts(home) {
  const db = new Database(join(home, 'airlock.db'), { readonly: true, fileMustExist: true });
  try {
    return new Set(db.prepare("SELECT arguments FROM journal WHERE tool = 'echo'").all().map((r) => String(JSON.parse(r.arguments).text)));
  } finally {
    db.close();
  }
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};

/** One spill batch of `n` records like a call's, written and fsync'd: median and p99 over `rounds` (ms). */
function spillCost(dir, n, rounds) {
  const spill = new SpillFile(dir);
  const record = { id: 'x-1', client: 'bench', server: 'bench', tool: 'echo', arguments: JSON.stringify({ text: 'y'.repeat(200) }), argsTruncated: false, class: 'read-only-trusted', reasons: ['annotated read-only'], decision: 'allow', decidedBy: 'class', detail: '', outcome: 'ok', startedAt: Date.now(), forwardedAt: Date.now() };
  const times = [];
  for (let i = 0; i < rounds; i++) {
    const batch = Array.from({ length: n }, (_, j) => ({ ...record, id: `x-${i}-${j}` }));
    const t0 = performance.now();
    // as a wrapper's journal queue writes it: each entry's JSON text, a line each (its serialising timed too)
    spill.append(Buffer.from(batch.map((r) => `${JSON.stringify(r)}\n`).join('')));
    times.push(performance.now() - t0);
  }
  for (const f of spill.rotate()) spill.done(f);
  return times;
}

export async function brokerKillRows({ quick = false } = {}) {
  const kills = 10;
  const home = mkdtempSync(join(tmpdir(), 'airlock-kills-'));
  const env = { ...process.env, AIRLOCK_HOME: home };
  let daemon = await startBroker(env);
  const logs = [];
  const sessions = [];
  const allowedMs = [];
  let refused = 0;
  let stop = false;
  try {
    for (let i = 0; i < SESSIONS; i++) {
      const log = join(home, `kills-${i}.log`);
      logs.push(log);
      // echo is read-only: trusted by the person's setting, it runs unasked (a wrap flag alone would not do)
      const trusted = spawnSync(process.execPath, [CLI, 'trust', `bench-kills-${i}`, 'on'], { env, encoding: 'utf8' });
      if (trusted.status !== 0) throw new Error(`broker-kills bench: airlock trust failed: ${trusted.stderr}`);
      const s = rawSession(process.execPath, [...WRAP, '--name', `bench-kills-${i}`, '--client', 'bench', '--', process.execPath, FIXTURE], { ...env, FIXTURE_LOG: log });
      await s.init();
      sessions.push(s);
    }
    let n = 0;
    const worker = async (s, w) => {
      while (!stop) {
        const t0 = performance.now();
        const { m, at } = await s.timedRequest('tools/call', { name: 'echo', arguments: { text: `s${w}-${++n}` } });
        if (m.result?._meta?.['airlock/decision']?.decision === 'deny' || m.error) refused++;
        else allowedMs.push(at - t0);
      }
    };
    const workers = sessions.flatMap((s, i) => Array.from({ length: IN_FLIGHT }, () => worker(s, i)));
    for (let k = 0; k < kills; k++) {
      const before = ranTexts(logs).size;
      await until(() => ranTexts(logs).size >= before + (quick ? 100 : 400), 'calls to run between kills');
      await kill(daemon);
      // down for a moment: calls are refused meanwhile
      const refusedBefore = refused;
      await until(() => refused > refusedBefore, 'calls to be refused while the broker is down');
      daemon = await startBroker(env);
    }
    const before = ranTexts(logs).size;
    await until(() => ranTexts(logs).size >= before + 100, 'calls to run after the last restart');
    stop = true;
    await Promise.all(workers);
    await Promise.all(sessions.map((s) => s.close()));
    const ran = ranTexts(logs);
    let missing = Infinity;
    const end = Date.now() + 20_000;
    while (Date.now() < end) {
      const held = journaledTexts(home);
      missing = [...ran].filter((t) => !held.has(t)).length;
      if (missing === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const spill = spillCost(home, 100, quick ? 20 : 100);
    const f = (x) => x.toFixed(1);
    return [
      [
        `Broker kills: calls the servers ran missing from the journal after ${kills} SIGKILLs under load`,
        '–',
        '–',
        String(missing),
        `${ran.size} calls ran (${SESSIONS} sessions, ${IN_FLIGHT} in flight each), ${refused} refused while the broker was down; allowed call median ${f(quantile(allowedMs, 0.5))} ms, p99 ${f(quantile(allowedMs, 0.99))} ms`,
        '0',
      ],
      [
        'Journal spill: one batch of 100 records written and fsync\'d while the broker is down, median (ms)',
        '–',
        '–',
        f(quantile(spill, 0.5)),
        `p99 ${f(quantile(spill, 0.99))} ms; off the call's path, and nothing is spilled while the broker is up`,
        '–',
      ],
    ];
  } finally {
    stop = true;
    for (const s of sessions) s.proc.kill('SIGKILL');
    await kill(daemon);
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const row of await brokerKillRows({ quick: process.argv.includes('--quick') })) console.log(row.join(' | '));
}
