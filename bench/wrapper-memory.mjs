// The wrapper over time, against the plain byte relay (bench/byte-relay.mjs) in the same run: both sit in front of
// the fixture server, and each is sent the same pipelined load (32 calls in flight, allowed `echo`). After 3,000,
// 11,000 and 60,000 calls the proxy's RSS is read from /proc, and once more after 12 s idle; the wrapper's
// throughput and its CPU time per call (utime + stime of the proxy process alone) are taken over the whole load;
// one call at a time gives p50/p99; start-up is the time to the first tools/list answer. Imported by a runner that owns the broker
// (wrapperMemoryRows({ home, env })), or run on its own (`node bench/wrapper-memory.mjs [--quick]`), which starts a
// broker in a temporary home with an allow rule and the tripwire off. Not a test: nothing here passes or fails.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withOwnBroker } from './own-broker.mjs';
import { rawSession } from './raw-session.mjs';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { allowedCallsTo, settled } from './broker-state.mjs';
import { RELAY, FIXTURE, WRAP } from './paths.mjs';
import { quantile, median } from './stats.mjs';

const SERVER = 'bench-wrapper-memory';
const IN_FLIGHT = 32;
const CLK_TCK = 100;
/** How long both proxies are left idle after the load before their RSS is read again. */
const IDLE_MS = 12_000;

function session(mode, env) {
  const node = process.execPath;
  // AIRLOCK_WRAP_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the wrapper
  const extra = process.env.AIRLOCK_WRAP_NODE_ARGS ? process.env.AIRLOCK_WRAP_NODE_ARGS.split(' ') : [];
  const args = mode === 'relay' ? [RELAY, '--', node, FIXTURE] : [...extra, ...WRAP, '--name', SERVER, '--client', 'bench', '--', node, FIXTURE];
  return rawSession(node, args, env);
}

const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
/** CPU seconds the process used so far (user + system). */
const cpuSeconds = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
};

/** `n` calls, IN_FLIGHT at a time; seconds taken. */
async function pipelined(s, n, tag) {
  let sent = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (sent < n) {
      sent++;
      const m = await s.request('tools/call', { name: 'echo', arguments: { text: `${tag}` } });
      if (m.result?.isError) throw new Error(`wrapper-memory bench: the call was refused: ${JSON.stringify(m.result).slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return (performance.now() - t0) / 1000;
}

/** Run the measure against the broker in `home` (an allow rule for the server is added and removed here). */
export async function wrapperMemoryRows({ home, env, quick = false }) {
  const marks = quick ? [3_000, 11_000, 20_000] : [3_000, 11_000, 60_000];
  const sequential = quick ? 1_000 : 3_000;
  const startups = quick ? 4 : 10;
  const broker = await BrokerClient.connect({ dir: home });
  const restore = await allowedCallsTo(broker, SERVER);
  try {
    // start-up, alternating
    const start = { relay: [], airlock: [] };
    for (let i = 0; i < startups; i++) {
      for (const mode of i % 2 ? ['airlock', 'relay'] : ['relay', 'airlock']) {
        const t0 = performance.now();
        const s = session(mode, env);
        await s.init();
        start[mode].push(performance.now() - t0);
        await s.close();
      }
    }
    const brokerPid = (await broker.call('status', {})).pid;
    const sessions = { relay: session('relay', env), airlock: session('airlock', env) };
    for (const s of Object.values(sessions)) await s.init();
    const pid = (mode) => sessions[mode].proc.pid;
    // warm both, then one call at a time, in alternating blocks
    for (const mode of ['relay', 'airlock']) await pipelined(sessions[mode], 300, 'warm');
    const lat = { relay: [], airlock: [] };
    const seqCpu = { relay: 0, airlock: 0 };
    for (let block = 0; block < 6; block++) {
      for (const mode of block % 2 ? ['airlock', 'relay'] : ['relay', 'airlock']) {
        const c0 = cpuSeconds(pid(mode));
        for (let i = 0; i < sequential / 6; i++) {
          const t0 = performance.now();
          await sessions[mode].request('tools/call', { name: 'echo', arguments: { text: `seq ${i}` } });
          lat[mode].push(performance.now() - t0);
        }
        seqCpu[mode] += cpuSeconds(pid(mode)) - c0;
        // the broker files what it took in once the calls stop: not while the relay is measured
        if (mode === 'airlock') await settled(broker);
      }
    }
    // pipelined, up to each mark in turn, the two modes taking turns at each step
    const rss = { relay: [], airlock: [] };
    const time = { relay: 0, airlock: 0 };
    const cpu = { relay: 0, airlock: 0 };
    /** The broker's CPU while it took the calls in, and while it filed them after; how long the filing took. */
    const brokerCpu = { taking: 0, filing: 0, filingMs: 0 };
    let done = 0;
    for (const mark of marks) {
      const step = mark - done;
      for (const mode of ['relay', 'airlock']) {
        const c0 = cpuSeconds(pid(mode));
        const b0 = cpuSeconds(brokerPid);
        time[mode] += await pipelined(sessions[mode], step, 'p');
        cpu[mode] += cpuSeconds(pid(mode)) - c0;
        if (mode === 'airlock') {
          const b1 = cpuSeconds(brokerPid);
          brokerCpu.taking += b1 - b0;
          brokerCpu.filingMs += await settled(broker);
          brokerCpu.filing += cpuSeconds(brokerPid) - b1;
        }
      }
      done = mark;
      // what is left after the load, not the peak inside it
      await new Promise((r) => setTimeout(r, 200));
      for (const mode of ['relay', 'airlock']) rss[mode].push(rssKb(pid(mode)));
    }
    // and left idle: V8's memory reducer gives back what the load left once the process has been quiet a while
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = { relay: rssKb(pid('relay')), airlock: rssKb(pid('airlock')) };
    for (const s of Object.values(sessions)) await s.close();
    const f = (x, d = 1) => x.toFixed(d);
    const ratio = (a, b) => `${f(a / b, 2)}× relay`;
    const rows = marks.map((mark, i) => [
      `wrapper RSS after ${mark.toLocaleString('en')} pipelined calls (MB)`,
      '–',
      f(rss.relay[i] / 1024),
      f(rss.airlock[i] / 1024),
      ratio(rss.airlock[i], rss.relay[i]),
      mark <= 3_000 ? '≤ 1.10× relay' : mark >= 60_000 ? '≤ 1.15× relay' : '(for information)',
    ]);
    rows.push([`wrapper RSS after the ${done.toLocaleString('en')} calls and ${IDLE_MS / 1000} s idle (MB)`, '–', f(idle.relay / 1024), f(idle.airlock / 1024), ratio(idle.airlock, idle.relay), '(for information)']);
    const rate = (mode) => done / time[mode];
    rows.push(
      [`pipelined calls/s (${IN_FLIGHT} in flight, one wrapper)`, '–', f(rate('relay'), 0), f(rate('airlock'), 0), `${f(rate('airlock') / rate('relay'), 2)}× relay`, '≥ 0.7× relay'],
      ['proxy CPU per pipelined call (µs)', '–', f((cpu.relay / done) * 1e6), f((cpu.airlock / done) * 1e6), ratio(cpu.airlock, cpu.relay), '(for information)'],
      ['broker CPU per pipelined call (µs): taking it in during the load / filing it once the load stops', '–', '–', `${f((brokerCpu.taking / done) * 1e6)} / ${f((brokerCpu.filing / done) * 1e6)}`, `filed in ${f(brokerCpu.filingMs, 0)} ms after the loads, in all`, '(for information)'],
      ['proxy CPU per sequential call (µs)', '–', f((seqCpu.relay / sequential) * 1e6), f((seqCpu.airlock / sequential) * 1e6), ratio(seqCpu.airlock, seqCpu.relay), '(for information)'],
      ['allowed call p50, one at a time (ms)', '–', f(quantile(lat.relay, 0.5), 3), f(quantile(lat.airlock, 0.5), 3), ratio(quantile(lat.airlock, 0.5), quantile(lat.relay, 0.5)), '≤ 1.15× relay'],
      ['allowed call p99, one at a time (ms)', '–', f(quantile(lat.relay, 0.99), 3), f(quantile(lat.airlock, 0.99), 3), ratio(quantile(lat.airlock, 0.99), quantile(lat.relay, 0.99)), '≤ 1.3× relay'],
      [`start-up to first tools/list, fixture server (ms, median of ${startups})`, '–', f(median(start.relay)), f(median(start.airlock)), `+${f(median(start.airlock) - median(start.relay))} ms over relay`, '≤ +30 ms'],
    );
    return rows;
  } finally {
    await restore();
    broker.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await withOwnBroker('al-bench-wrapmem-', async ({ home, env }) => {
      const broker = await BrokerClient.connect({ dir: home });
      // thousands of allowed calls a second is what the tripwire is there to stop: off while the proxy is measured
      await broker.call('settings.set', { key: 'tripwire', value: 'off' });
      broker.close();
      const rows = await wrapperMemoryRows({ home, env, quick: process.argv.includes('--quick') });
      process.stdout.write(`| measure | direct | byte relay | airlock wrap | airlock vs baseline | target |\n|---|---|---|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
  });
}
