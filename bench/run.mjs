#!/usr/bin/env node
// `npm run bench`: one run, modes alternating, so that the three are measured under the same conditions.
//   direct   the client starts the server itself
//   relay    a plain byte relay in between (bench/byte-relay.mjs): the floor of any stdio proxy
//   airlock  `airlock wrap` in between, with a broker running and an allow rule for the tool
// Prints a Markdown table (and writes it to bench/results.md). Not a test: nothing here passes or fails.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { pipelinedCalls, rawSession } from './raw-session.mjs';
import { acknowledged, settled } from './broker-state.mjs';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { uiRows, uiTable } from './ui.mjs';
import { estopRows } from './estop.mjs';
import { snapshotRows } from './snapshot.mjs';
import { estopTasksRows } from './estop-tasks.mjs';
import { brokerKillRows } from './broker-kills.mjs';
import { uiFloodRows } from './ui-flood.mjs';
import { processTreeRows } from './process-tree.mjs';
import { tripwireRows } from './tripwire.mjs';
import { pathResolveRows } from './path-resolve.mjs';
import { journalMillionRows } from './journal-million.mjs';
import { dispatchRows } from './dispatch.mjs';
import { catalogRows } from './catalog.mjs';
import { wrapperMemoryRows } from './wrapper-memory.mjs';
import { callPathRows } from './call-path.mjs';
import { passkeyRows } from './passkey.mjs';
import { presenceRows } from './presence.mjs';
import { activityRows } from './activity.mjs';
import { otlpRows } from './otlp.mjs';
import { grantRows } from './grants.mjs';
import { ROOT, CLI, RELAY, FIXTURE, EVERYTHING, WRAP } from './paths.mjs';
import { startBroker } from './own-broker.mjs';
import { quantile, median } from './stats.mjs';
import { chromiumPath } from '../test/helpers/chromium.mjs';

// the UI and passkey measures drive Chromium: without it the run would stop at them, minutes in; say so first
chromiumPath();

const QUICK = process.argv.includes('--quick');
const ROUNDS = QUICK ? 2 : 6;
const CALLS_PER_ROUND = QUICK ? 200 : 500;
const STARTUPS = QUICK ? 4 : 16;
const BIG_RUNS = QUICK ? 3 : 8;
const WRAPPERS = 8;
const THROUGHPUT_CALLS = QUICK ? 1000 : 3000;

const home = mkdtempSync(join(tmpdir(), 'al-bench-'));
const env = { ...process.env, AIRLOCK_HOME: home };
const node = process.execPath;

// Each server gets its own name: Airlock pins a server's tool definitions, and the fixture's `echo` under the
// name server-everything's was pinned with is a changed definition, held for approval (as it should be).
function commandFor(mode, server) {
  const name = server[0] === FIXTURE ? 'bench-fixture' : 'bench';
  if (mode === 'direct') return { command: node, args: server };
  if (mode === 'relay') return { command: node, args: [RELAY, '--', node, ...server] };
  // AIRLOCK_WRAP_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the wrappers
  const extra = process.env.AIRLOCK_WRAP_NODE_ARGS ? process.env.AIRLOCK_WRAP_NODE_ARGS.split(' ') : [];
  return { command: node, args: [...extra, ...WRAP, '--name', name, '--client', 'bench', '--', node, ...server] };
}

const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const hwmKb = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

async function connect(mode, server = [EVERYTHING, 'stdio']) {
  const { command, args } = commandFor(mode, server);
  const transport = new StdioClientTransport({ command, args, env, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

async function cli(...args) {
  await new Promise((resolve, reject) => {
    const p = spawn(node, [CLI, ...args], { env, stdio: 'ignore' });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`airlock ${args.join(' ')} failed`))));
  });
}

// ---- latency and memory ------------------------------------------------------------------------------------
async function latency() {
  const modes = ['direct', 'relay', 'airlock'];
  const samples = { direct: [], relay: [], airlock: [] };
  const rss = { relay: [], airlock: [] };
  const sessions = {};
  for (const mode of modes) {
    sessions[mode] = await connect(mode);
    for (let i = 0; i < 300; i++) await sessions[mode].client.callTool({ name: 'echo', arguments: { message: 'warm' } });
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 ? [...modes].reverse() : modes) {
      const { client } = sessions[mode];
      for (let i = 0; i < CALLS_PER_ROUND; i++) {
        const t0 = performance.now();
        await client.callTool({ name: 'echo', arguments: { message: `call ${i}` } });
        samples[mode].push(performance.now() - t0);
      }
      // the broker files what it took in once the calls stop: not while the next mode is measured
      if (mode === 'airlock') await settled(brokerClient);
    }
  }
  for (const mode of ['relay', 'airlock']) rss[mode].push(rssKb(sessions[mode].transport.pid));
  const peak = { relay: hwmKb(sessions.relay.transport.pid), airlock: hwmKb(sessions.airlock.transport.pid) };
  for (const mode of modes) await sessions[mode].client.close();
  return { samples, rss, peak };
}

// ---- start-up to the first tools/list --------------------------------------------------------------------
async function startup() {
  const times = { direct: [], relay: [], airlock: [] };
  for (let i = 0; i < STARTUPS; i++) {
    for (const mode of i % 2 ? ['airlock', 'relay', 'direct'] : ['direct', 'relay', 'airlock']) {
      const t0 = performance.now();
      const { client } = await connect(mode);
      await client.listTools();
      times[mode].push(performance.now() - t0);
      await client.close();
    }
  }
  return times;
}

// ---- a 10 MB result, with a client whose framing is linear (the SDK's stdio buffer is quadratic) -------------
function fixtureSession(mode, extraEnv = {}) {
  const { command, args } = commandFor(mode, [FIXTURE]);
  return rawSession(command, args, { ...env, ...extraEnv });
}

/** WRAPPERS fixture sessions in `mode`, each initialized (and listed), one after the other. */
async function fixtureSessions(mode) {
  const sessions = [];
  for (let w = 0; w < WRAPPERS; w++) {
    const s = fixtureSession(mode);
    await s.init();
    sessions.push(s);
  }
  return sessions;
}

async function bigResult() {
  const times = { direct: [], relay: [], airlock: [] };
  const sessions = {};
  for (const mode of ['direct', 'relay', 'airlock']) {
    sessions[mode] = fixtureSession(mode);
    await sessions[mode].init();
    await sessions[mode].request('tools/call', { name: 'huge', arguments: { bytes: 1_000_000 } });
  }
  for (let i = 0; i < BIG_RUNS; i++) {
    for (const mode of i % 2 ? ['airlock', 'relay', 'direct'] : ['direct', 'relay', 'airlock']) {
      const t0 = performance.now();
      const r = await sessions[mode].request('tools/call', { name: 'huge', arguments: { bytes: 10 * 1024 * 1024 } });
      times[mode].push(performance.now() - t0);
      if (r.result?.content?.[0]?.text?.length !== 10 * 1024 * 1024) throw new Error(`${mode}: wrong 10 MB result`);
    }
  }
  for (const s of Object.values(sessions)) await s.close();
  return times;
}

// ---- broker throughput: 8 wrappers, pipelined calls, until every decision is in the journal --------------
async function throughput(tool, calls = THROUGHPUT_CALLS) {
  const db = new Database(join(home, 'airlock.db'), { readonly: true });
  const count = () => db.prepare('SELECT COUNT(*) AS n FROM journal').get().n;
  await settled(brokerClient);
  const sessions = await fixtureSessions('airlock');
  const before = count();
  const seqBefore = db.prepare('SELECT COALESCE(MAX(seq), 0) AS s FROM journal').get().s;
  const t0 = performance.now();
  await pipelinedCalls(sessions, tool, calls);
  const answered = (performance.now() - t0) / 1000;
  // journaled: every wrapper's entries acknowledged, that is on disk in the journal (its intake), where any read finds them
  await acknowledged(brokerClient, 'bench-fixture');
  const elapsed = (performance.now() - t0) / 1000;
  // filed: in the journal's own tables (its indexes, its search), which the broker does once the calls stop
  const total = WRAPPERS * calls;
  while (count() - before < total) await new Promise((r) => setTimeout(r, 5));
  const filed = (performance.now() - t0) / 1000;
  const outcomes = db.prepare('SELECT COUNT(*) AS n FROM journal WHERE tool = ? AND seq > ?').get(tool, seqBefore);
  db.close();
  for (const s of sessions) await s.close();
  return { total, elapsed, answered, filed, rate: total / elapsed, complete: outcomes.n };
}

/**
 * The baselines of the 8-wrapper rows: the same load through 8 fixture servers connected directly, and through 8
 * byte relays, each a fresh process as the wrappers are (so the servers' own warm-up is in all three): calls
 * answered per second, the ceiling of this machine for that many processes.
 */
async function baselineThroughput(mode, calls = THROUGHPUT_CALLS) {
  const sessions = await fixtureSessions(mode);
  const t0 = performance.now();
  await pipelinedCalls(sessions, 'echo', calls);
  const seconds = (performance.now() - t0) / 1000;
  for (const s of sessions) await s.close();
  return (WRAPPERS * calls) / seconds;
}

// ---- a wrapper killed outright: how much of the journal it takes with it ----------------------------------
// Allowed calls run flat out through one wrapper; it is SIGKILLed mid-stream. The fixture's own log says what
// ran; whatever ran but is not in the journal was lost. Divided by the call rate, that is the window lost.
async function killLoss(runs = QUICK ? 3 : 8) {
  const db = new Database(join(home, 'airlock.db'), { readonly: true });
  const results = [];
  for (let i = 0; i < runs; i++) {
    const log = join(home, `kill-${i}.log`);
    const session = fixtureSession('airlock', { FIXTURE_LOG: log });
    const { proc, request } = session;
    let answered = 0;
    proc.stdin.on('error', () => {});
    await session.init();
    let running = true;
    const lane = async () => {
      while (running) {
        await request('tools/call', { name: 'echo', arguments: { text: `k${i}` } });
        answered++;
      }
    };
    for (let l = 0; l < 16; l++) void lane();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 400 + 100 * i));
    proc.kill('SIGKILL');
    const seconds = (performance.now() - t0) / 1000;
    running = false;
    session.abandon();
    await new Promise((r) => proc.on('exit', r));
    const ran = readFileSync(log, 'utf8').split('\n').filter((l) => l.includes(`"k${i}"`)).length;
    // lost is what never reaches the journal: the count is read until the broker has committed whatever reached
    // it (unchanged for 600 ms; a broker busy with a big batch may take longer than a fixed wait)
    const countNow = () => db.prepare('SELECT COUNT(*) AS n FROM journal WHERE arguments = ?').get(JSON.stringify({ text: `k${i}` })).n;
    let journaled = countNow();
    for (let still = 0, waited = 0; still < 3 && waited < 10_000; waited += 200) {
      await new Promise((r) => setTimeout(r, 200));
      const n = countNow();
      still = n === journaled ? still + 1 : 0;
      journaled = n;
    }
    const rate = answered / seconds;
    results.push({ ran, journaled, lost: Math.max(0, ran - journaled), rate, ms: (Math.max(0, ran - journaled) / rate) * 1000 });
  }
  db.close();
  return results;
}

// ---- run -------------------------------------------------------------------------------------------------
const broker = await startBroker(env);
const brokerClient = await BrokerClient.connect({ dir: home });
try {
  await cli('rules', 'add', 'allow', '--server', 'bench*', '--tool', '*');
  await cli('rules', 'add', 'deny', '--server', 'bench*', '--tool', 'delete_all');
  // thousands of allowed calls a second is what the tripwire is there to stop: off while the proxy is measured
  await cli('settings', 'tripwire', 'off');
  if (process.argv.includes('--throughput-only')) {
    // just the broker's journal throughput (for profiling the broker: AIRLOCK_DAEMON_NODE_ARGS="--cpu-prof")
    for (const [tool, calls] of [['echo', THROUGHPUT_CALLS], ['delete_all', THROUGHPUT_CALLS], ['echo', THROUGHPUT_CALLS * 4]]) {
      const tp = await throughput(tool, calls);
      process.stdout.write(`${tool}: ${tp.rate.toFixed(0)}/s (${tp.total} calls answered in ${tp.answered.toFixed(2)} s, acknowledged in ${tp.elapsed.toFixed(2)} s, ${tp.complete} filed at ${tp.filed.toFixed(2)} s)\n`);
    }
    brokerClient.close();
    await broker.stop();
    rmSync(home, { recursive: true, force: true });
    process.exit(0);
  }
  if (process.argv.includes('--kill-only')) {
    // just the journal-loss measure (a minute instead of several)
    for (const k of await killLoss()) process.stdout.write(`${k.lost} of ${k.ran} lost at ${k.rate.toFixed(0)} calls/s: ${k.ms.toFixed(1)} ms\n`);
    await broker.stop();
    rmSync(home, { recursive: true, force: true });
    process.exit(0);
  }
  process.stderr.write('latency and memory…\n');
  const lat = await latency();
  process.stderr.write('start-up…\n');
  const start = await startup();
  process.stderr.write('10 MB results…\n');
  const big = await bigResult();
  process.stderr.write('broker throughput…\n');
  const tpBase = { direct: await baselineThroughput('direct'), relay: await baselineThroughput('relay') };
  const tp = await throughput('echo');
  const tpDeny = await throughput('delete_all');
  process.stderr.write('wrapper killed outright…\n');
  const kills = await killLoss();
  const worst = kills.reduce((a, b) => (b.ms > a.ms ? b : a));
  // a wrapper's first few thousand calls run while V8 still compiles its hot path (several times the CPU of a
  // warm call): the same load with four times the calls per wrapper shows the rate past that warm-up (after the
  // kill rows, whose loss follows how long the broker takes to acknowledge, so 96,000 more rows do not weigh on it)
  const tpWarm = await throughput('echo', THROUGHPUT_CALLS * 4);
  const tpWarmBase = { direct: await baselineThroughput('direct', THROUGHPUT_CALLS * 4), relay: await baselineThroughput('relay', THROUGHPUT_CALLS * 4) };
  process.stderr.write('E-Stop on busy sessions…\n');
  const estop = await estopRows({ home, env, quick: QUICK });
  process.stderr.write('undo snapshot cost…\n');
  const snapshot = await snapshotRows({ home, env, quick: QUICK });
  process.stderr.write('E-Stop on running tasks…\n');
  const estopTasks = await estopTasksRows({ home, env, quick: QUICK });
  process.stderr.write('process tree sampling…\n');
  const tree = await processTreeRows({ quick: QUICK });
  process.stderr.write('tripwire: a pipelined burst, and what the cap costs…\n');
  const trip = await tripwireRows({ home, env, quick: QUICK });
  process.stderr.write('path rules resolved as the kernel does…\n');
  const paths = await pathResolveRows({ quick: QUICK });
  process.stderr.write('wrapper memory over 60,000 pipelined calls, and throughput…\n');
  const memory = await wrapperMemoryRows({ home, env, quick: QUICK });
  process.stderr.write('one call at a time, part by part…\n');
  const callPath = await callPathRows({ home, env, quick: QUICK });
  process.stderr.write('big catalogs: 10 to 10,000 tools…\n');
  const catalog = await catalogRows({ home, env, quick: QUICK });

  const f = (x, d = 3) => x.toFixed(d);
  const throughputDetail = (t) =>
    `${t.total} calls answered in ${f(t.answered, 2)} s and acknowledged (on disk) in ${f(t.elapsed, 2)} s; all ${t.complete} filed into the journal's tables at ${f(t.filed, 2)} s (${f(t.total / t.filed, 0)}/s)`;
  const p50 = (m) => quantile(lat.samples[m], 0.5);
  const p99 = (m) => quantile(lat.samples[m], 0.99);
  const rows = [
    ['allowed call p50 (ms)', f(p50('direct')), f(p50('relay')), f(p50('airlock')), `${f(p50('airlock') / p50('relay'), 2)}× relay`, '≤ 1.15× relay'],
    ['allowed call p99 (ms)', f(p99('direct')), f(p99('relay')), f(p99('airlock')), `${f(p99('airlock') / p99('relay'), 2)}× relay`, '≤ 1.3× relay'],
    ['proxy RSS after calls (MB)', '–', f(median(lat.rss.relay) / 1024, 1), f(median(lat.rss.airlock) / 1024, 1), `${f(median(lat.rss.airlock) / median(lat.rss.relay), 2)}× relay`, '≤ 1.10× relay'],
    ['proxy peak RSS (MB)', '–', f(lat.peak.relay / 1024, 1), f(lat.peak.airlock / 1024, 1), `${f(lat.peak.airlock / lat.peak.relay, 2)}× relay`, '(for information)'],
    ['start-up to first tools/list (ms, median)', f(median(start.direct), 1), f(median(start.relay), 1), f(median(start.airlock), 1), `+${f(median(start.airlock) - median(start.relay), 1)} ms over relay`, '≤ +30 ms'],
    ['10 MB result (ms, median)', f(median(big.direct), 1), f(median(big.relay), 1), f(median(big.airlock), 1), `${f(median(big.airlock) / median(big.relay), 2)}× relay`, '≤ 1.5× relay'],
    [`journaled decisions/s, allowed calls end to end (${WRAPPERS} wrappers)`, f(tpBase.direct, 0), f(tpBase.relay, 0), f(tp.rate, 0), `${throughputDetail(tp)}; baselines: calls answered/s of ${WRAPPERS} servers direct and through ${WRAPPERS} byte relays, the same load`, '≥ 20,000/s'],
    [`journaled decisions/s, allowed calls, ${WRAPPERS} wrappers of ${(THROUGHPUT_CALLS * 4).toLocaleString('en')} calls each (past the JIT's warm-up)`, f(tpWarmBase.direct, 0), f(tpWarmBase.relay, 0), f(tpWarm.rate, 0), throughputDetail(tpWarm), '(for information)'],
    [`journaled decisions/s, denied calls (${WRAPPERS} wrappers)`, '–', '–', f(tpDeny.rate, 0), throughputDetail(tpDeny), '≥ 5,000/s'],
    [`journal lost when a wrapper is SIGKILLed (worst of ${kills.length}, ms of calls)`, '–', '–', f(worst.ms, 1), `${worst.lost} of ${worst.ran} calls at ${f(worst.rate, 0)} calls/s`, '(README figure)'],
    ...estop,
    ...estopTasks,
    ...snapshot,
    ...trip,
    ...memory,
    ...callPath,
    ...catalog,
    ...paths,
    ...tree,
  ];
  // the measures that run brokers of their own (killed, flooded) and the UI's run last, with the proxy's broker
  // stopped, so none of them shares the machine with it
  brokerClient.close();
  await broker.stop();
  process.stderr.write('broker killed under load…\n');
  rows.push(...(await brokerKillRows({ quick: QUICK })));
  process.stderr.write('UI port flooded…\n');
  rows.push(...(await uiFloodRows({ quick: QUICK })));
  process.stderr.write('method dispatch in the broker…\n');
  rows.push(...(await dispatchRows({ quick: QUICK })));
  process.stderr.write('the journal at a million entries…\n');
  rows.push(...(await journalMillionRows({ quick: QUICK })));
  process.stderr.write('approving with a passkey in the browser…\n');
  rows.push(...(await passkeyRows({ quick: QUICK })));
  process.stderr.write('approving with the app\'s proof, and within a lease…\n');
  rows.push(...(await presenceRows({ quick: QUICK })));
  process.stderr.write('Activity\'s first page and the export of 100,000 entries…\n');
  rows.push(...(await activityRows({ quick: QUICK })));
  process.stderr.write('the audit export to an OTLP collector…\n');
  rows.push(...(await otlpRows({ quick: QUICK })));
  process.stderr.write('grants: decided in the wrapper, and the card…\n');
  // a grant row's baseline is a plain allow rule (or the event), in the byte-relay column
  rows.push(...(await grantRows({ quick: QUICK })).map(([m, base, a, c, t]) => [m, '–', base, a, c, t]));
  const table = [
    `| measure | direct | byte relay | airlock wrap | airlock vs baseline | target |`,
    `|---|---|---|---|---|---|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
  process.stderr.write('UI: card latency, Activity at 100,000 entries, bundle size…\n');
  const ui = uiTable(await uiRows(QUICK));
  const meta = `Node ${process.version}, ${lat.samples.direct.length} calls per mode (server-everything \`echo\`), ${STARTUPS} start-ups per mode, ${BIG_RUNS} × 10 MB per mode, ${new Date().toISOString().slice(0, 10)}.`;
  writeFileSync(join(ROOT, 'bench', 'results.md'), `${table}\n\n${ui}\n\n${meta}\n`);
  process.stdout.write(`${table}\n\n${ui}\n\n${meta}\n`);
} finally {
  await broker.stop();
  rmSync(home, { recursive: true, force: true });
}
