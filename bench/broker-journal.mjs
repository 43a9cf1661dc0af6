#!/usr/bin/env node
// The broker's CPU per journaled call, end to end: 8 wrappers of the fixture echo server (as run.mjs's
// throughput row), 32 calls in flight each, allowed (`echo`, journaled when sent and when done, or once when the
// two merge in the wrapper) and denied (`delete_all`, once). The broker's user+system CPU over the run (from
// /proc, the counters its process.cpuUsage reads) divided by the calls the journal gained, beside the calls per
// second. Baseline, same run: the broker's store alone writing the same number of typical calls (each sent,
// then done, 1,000 a batch: bench/journal-million.mjs's records) in this process: what SQLite costs a call, the
// floor of the broker's share; and the broker's share of all the CPU the run took (this client, the wrappers,
// their servers, the broker). Runs its own broker in a fresh AIRLOCK_HOME. Not a test: nothing here passes or fails.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { pipelinedCalls, rawSession } from './raw-session.mjs';
import { typicalRecord } from './journal-million.mjs';
import { ROOT, CLI, FIXTURE, WRAP } from './paths.mjs';
import { startBroker } from './own-broker.mjs';

const WRAPPERS = 8;
const IN_FLIGHT = 32;

/** A process's [parent, user+system CPU in ms] from /proc (clock ticks of 10 ms); null once it is gone. */
function statOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return [Number(fields[1]), (Number(fields[11]) + Number(fields[12])) * 10];
  } catch {
    return null;
  }
}
const cpuMsOf = (pid) => statOf(pid)?.[1] ?? 0;

/** CPU ms of this process and every process under it (the broker, the wrappers, their servers), by pid. */
function treeCpu() {
  const stats = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = statOf(Number(name));
    if (st) stats.set(Number(name), st);
  }
  const out = new Map();
  for (const [pid, [, ms]] of stats) {
    for (let p = pid; p > 1; p = stats.get(p)?.[0] ?? 0) {
      if (p === process.pid) {
        out.set(pid, ms);
        break;
      }
    }
  }
  const self = process.cpuUsage();
  out.set(process.pid, (self.user + self.system) / 1000);
  return out;
}

function cli(env, ...args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CLI, ...args], { env, stdio: 'ignore' });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`airlock ${args.join(' ')} failed`))));
  });
}

async function run(env, home, pid, tool, calls) {
  const db = new Database(join(home, 'airlock.db'), { readonly: true });
  const count = () => db.prepare('SELECT COUNT(*) AS n FROM journal_calls').pluck().get();
  const sessions = [];
  for (let w = 0; w < WRAPPERS; w++) {
    const s = rawSession(process.execPath, [...WRAP, '--name', 'bench-fixture', '--client', 'bench', '--', process.execPath, FIXTURE], env);
    await s.init();
    sessions.push(s);
  }
  const before = count();
  const cpu0 = cpuMsOf(pid);
  const tree0 = treeCpu();
  const t0 = performance.now();
  await pipelinedCalls(sessions, tool, calls, IN_FLIGHT);
  const total = WRAPPERS * calls;
  while (count() - before < total) await new Promise((r) => setTimeout(r, 5));
  // the final copies of the last calls: wait until the broker has been idle for a moment
  for (let last = cpuMsOf(pid); ; ) {
    await new Promise((r) => setTimeout(r, 100));
    const now = cpuMsOf(pid);
    if (now - last <= 10) break;
    last = now;
  }
  const elapsed = (performance.now() - t0) / 1000;
  const cpuMs = cpuMsOf(pid) - cpu0;
  let all = 0;
  for (const [p, ms] of treeCpu()) if (tree0.has(p)) all += ms - tree0.get(p);
  db.close();
  for (const s of sessions) await s.close();
  return { rate: total / elapsed, usPerCall: (cpuMs * 1000) / total, share: cpuMs / all, allUsPerCall: (all * 1000) / total };
}

/** The store alone: CPU µs per call written twice (sent, then done), 1,000 a batch. */
async function storeAlone(root, calls) {
  const { Store } = await import(pathToFileURL(join(ROOT, 'proxy-core', 'dist', 'broker', 'db', 'store.js')).href);
  const store = new Store(join(root, 'alone.db'));
  const c0 = process.cpuUsage();
  for (let b = 0; b < calls / 1000; b++) {
    const ids = Array.from({ length: 1000 }, (_, k) => b * 1000 + k);
    store.writeJournal(ids.map((i) => typicalRecord(i, false)));
    store.writeJournal(ids.map((i) => typicalRecord(i, true)));
  }
  const c = process.cpuUsage(c0);
  store.close();
  return (c.user + c.system) / calls;
}

/** Rows: [measure, baseline, –, Airlock, comparison, target]. */
export async function brokerJournalRows({ quick = false } = {}) {
  const calls = quick ? 1000 : 3000;
  const home = mkdtempSync(join(tmpdir(), 'al-broker-journal-'));
  const env = { ...process.env, AIRLOCK_HOME: home };
  const broker = await startBroker(env);
  const rows = [];
  try {
    await cli(env, 'rules', 'add', 'allow', '--server', 'bench*', '--tool', '*');
    await cli(env, 'rules', 'add', 'deny', '--server', 'bench*', '--tool', 'delete_all');
    await cli(env, 'settings', 'tripwire', 'off');
    const alone = await storeAlone(home, WRAPPERS * calls);
    for (const [tool, what] of [['echo', 'allowed'], ['delete_all', 'denied']]) {
      const r = await run(env, home, broker.pid, tool, calls);
      rows.push([
        `broker CPU per journaled call, ${what} (8 wrappers, 32 in flight each), µs`,
        alone.toFixed(1),
        '–',
        r.usPerCall.toFixed(1),
        `baseline: the store alone writing a call twice (sent, then done); ${r.rate.toFixed(0)} calls/s end to end; the broker is ${(100 * r.share).toFixed(0)}% of the ${r.allUsPerCall.toFixed(0)} µs of CPU a call costs all the processes (client, wrappers, servers, broker)`,
        '–',
      ]);
    }
  } finally {
    await broker.stop();
    rmSync(home, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const row of await brokerJournalRows({ quick: process.argv.includes('--quick') })) process.stdout.write(`| ${row.join(' | ')} |\n`);
}
