// Big catalogs: a server listing N tools (bench/catalog-server.mjs; N = 10, 1,000, 10,000), through the plain
// byte relay and through `airlock wrap`, in the same run, modes alternating. Measured: start-up (spawn to the
// first tools/list answered, after initialize), a repeat tools/list of the unchanged catalog (wall time, and the
// proxy process's own CPU time, which the others' load does not inflate as much), and the proxy's RSS once it
// has listed. Start-up is measured against pins the broker already holds (the first wrapper, which pins every
// tool, is a warm-up; the broker's answers to a front end's requests while it pins them are timed), and the
// proxy's CPU up to its first answer is given beside it (Node's own start included). The first call right behind the
// first listing is timed too (spawn to its answer, under an allow rule): the wrapper decides it on its own listing.
// Then one tool's nested schema description is changed, unannounced, among the N: the client's next listing must
// show it to the broker as a changed definition (a pin that differs), on that very listing.
// Imported by a runner that owns the broker (catalogRows({ home, env })), or run on its own
// (`node bench/catalog.mjs`), which starts a broker in a temporary home. Not a test: nothing here passes or fails.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawSession } from './raw-session.mjs';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { ROOT, RELAY, WRAP } from './paths.mjs';
import { median } from './stats.mjs';
import { brokerAnswers } from './broker-state.mjs';
import { withOwnBroker } from './own-broker.mjs';

const SERVER = join(ROOT, 'bench', 'catalog-server.mjs');
const TICKS_PER_MS = 100 / 1000; // USER_HZ is 100 on Linux

const f = (x, d = 1) => x.toFixed(d);
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
/** User + system CPU of one process so far, in ms. */
const cpuMs = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_MS;
};

function session(mode, n, env) {
  const server = [process.execPath, SERVER, '--tools', String(n)];
  // AIRLOCK_WRAP_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the wrappers (as in run.mjs)
  const extra = process.env.AIRLOCK_WRAP_NODE_ARGS ? process.env.AIRLOCK_WRAP_NODE_ARGS.split(' ') : [];
  const args = mode === 'relay' ? [RELAY, '--', ...server] : [...extra, ...WRAP, '--name', `bench-catalog-${n}`, '--client', 'bench', '--', ...server];
  return rawSession(process.execPath, args, env);
}

async function until(check, what, timeoutMs = 20_000, everyMs = 10) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`catalog bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function listed(s, n) {
  const r = await s.request('tools/list', {});
  if (r.result?.tools?.length !== n) throw new Error(`catalog bench: a listing of ${r.result?.tools?.length} tools, not ${n}`);
  return r;
}


/** One catalog size: start-ups, repeat listings, RSS, and a changed tool caught. */
async function measure(n, { env, broker, quick }) {
  const startups = quick ? 3 : n >= 10_000 ? 6 : 10;
  const repeats = quick ? 5 : n >= 10_000 ? 20 : 60;
  const start = { relay: [], airlock: [] };
  const startCpu = { relay: [], airlock: [] };
  // the first wrapper of this server pins its tools: a warm-up, not counted (start-up is measured against pins),
  // but the broker's answers to a front end meanwhile are
  const idle = await brokerAnswers(broker, () => new Promise((r) => setTimeout(r, 500)));
  const pinning = await brokerAnswers(broker, async () => {
    const warm = session('airlock', n, env);
    await warm.init();
    // its report reaches the broker after the listing it answered; the broker pins while the wrapper stays
    await new Promise((r) => setTimeout(r, n >= 10_000 ? 3000 : 1000));
    await warm.close();
  });
  for (let i = 0; i < startups; i++) {
    for (const mode of i % 2 ? ['airlock', 'relay'] : ['relay', 'airlock']) {
      const t0 = performance.now();
      const s = session(mode, n, env);
      await s.init();
      start[mode].push(performance.now() - t0);
      // the proxy's own CPU up to its first listing answered (Node's start-up included, in both modes)
      startCpu[mode].push(cpuMs(s.proc.pid));
      await s.close();
    }
  }
  // a client's first call right behind its first listing: answered once the wrapper has its own listing (taken
  // from the page the client got when the server wrote the same bytes) and has decided it; an allow rule, so that
  // nothing waits for a person
  const firstCall = { relay: [], airlock: [] };
  const rule = await broker.call('rules.add', { action: 'allow', server: `bench-catalog-${n}`, tool: '*' });
  try {
    for (let i = 0; i < startups; i++) {
      for (const mode of i % 2 ? ['airlock', 'relay'] : ['relay', 'airlock']) {
        const t0 = performance.now();
        const s = session(mode, n, env);
        await s.init();
        const r = await s.request('tools/call', { name: 'tool_00001', arguments: { id: 'x' } });
        if (!r.result) throw new Error(`catalog bench: the first call was not answered with a result: ${JSON.stringify(r).slice(0, 300)}`);
        firstCall[mode].push(performance.now() - t0);
        await s.close();
      }
    }
  } finally {
    await broker.call('rules.remove', { id: rule.id }).catch(() => {});
  }
  const sessions = { relay: session('relay', n, env), airlock: session('airlock', n, env) };
  for (const s of Object.values(sessions)) {
    await s.init();
    for (let i = 0; i < 3; i++) await listed(s, n);
  }
  const wall = { relay: [], airlock: [] };
  const cpu = { relay: 0, airlock: 0 };
  for (let i = 0; i < repeats; i++) {
    for (const mode of i % 2 ? ['airlock', 'relay'] : ['relay', 'airlock']) {
      const s = sessions[mode];
      const c0 = cpuMs(s.proc.pid);
      const t0 = performance.now();
      await listed(s, n);
      wall[mode].push(performance.now() - t0);
      cpu[mode] += cpuMs(s.proc.pid) - c0;
    }
  }
  const rss = { relay: rssKb(sessions.relay.proc.pid), airlock: rssKb(sessions.airlock.proc.pid) };

  // one tool changed among n, unannounced: the next listing the client fetches is the one that must catch it
  const server = `bench-catalog-${n}`;
  const changed = `tool_${String(Math.floor(n / 2)).padStart(5, '0')}`;
  const s = sessions.airlock;
  await s.request('catalog/change', { index: Math.floor(n / 2) });
  const t0 = performance.now();
  await listed(s, n);
  const isChanged = async () => (await broker.call('pins.list', { server })).some((p) => p.tool === changed && p.status === 'changed');
  // pins.list answers with every pin of the server: asked now and then, not in a busy loop
  await until(isChanged, `the changed definition of ${changed} to reach the broker`, 20_000, 25);
  const caught = performance.now() - t0;
  await broker.call('pins.accept', { server, tool: changed }).catch(() => {});
  for (const x of Object.values(sessions)) await x.close();
  return { n, start, startCpu, firstCall, wall, cpu, repeats, rss, caught, idle, pinning };
}

/** Run the measure against the broker in `home`; returns the main table's rows. */
export async function catalogRows({ home, env, quick = false, sizes = [10, 1000, 10_000] }) {
  const broker = await BrokerClient.connect({ dir: home });
  const rows = [];
  try {
    for (const n of sizes) {
      const m = await measure(n, { env, broker, quick });
      const w = { relay: median(m.wall.relay), airlock: median(m.wall.airlock) };
      const st = { relay: median(m.start.relay), airlock: median(m.start.airlock) };
      const count = n.toLocaleString('en-US');
      rows.push(
        [`repeat tools/list of ${count} unchanged tools (ms, median)`, '–', f(w.relay, 2), f(w.airlock, 2), `${f(w.airlock / w.relay, 2)}× relay; proxy CPU ${f(m.cpu.airlock / m.repeats)} vs ${f(m.cpu.relay / m.repeats)} ms per listing`, n >= 10_000 ? '≤ 2× relay' : '(for information)'],
        [`start-up to first tools/list, ${count} tools (ms, median)`, '–', f(st.relay), f(st.airlock), `+${f(st.airlock - st.relay)} ms over relay; proxy CPU ${f(median(m.startCpu.airlock), 0)} vs ${f(median(m.startCpu.relay), 0)} ms`, n >= 10_000 ? '≤ +150 ms' : '(for information)'],
        [`start-up to the first call answered, right behind the first tools/list, ${count} tools (ms, median)`, '–', f(median(m.firstCall.relay)), f(median(m.firstCall.airlock)), `+${f(median(m.firstCall.airlock) - median(m.firstCall.relay))} ms over relay; allowed by a rule`, '(for information)'],
        [`proxy RSS after listing ${count} tools (MB)`, '–', f(m.rss.relay / 1024), f(m.rss.airlock / 1024), `${f(m.rss.airlock / m.rss.relay, 2)}× relay`, '(for information)'],
        [`the broker's slowest answer to a front end while the first wrapper of ${count} tools starts and pins them (ms)`, '–', '–', f(m.pinning.worst), `${m.pinning.count} answers, median ${f(m.pinning.median, 2)} ms; idle: worst ${f(m.idle.worst)}, median ${f(m.idle.median, 2)} ms`, n >= 10_000 ? '< 1,000 ms (a wrapper calls the broker dead)' : '(for information)'],
        [`one changed definition among ${count} tools: at the broker after the listing that shows it (ms)`, '–', '–', f(m.caught), 'caught on that listing', '(for information)'],
      );
    }
  } finally {
    broker.close();
  }
  return rows;
}

// ---- on its own: a broker of its own in a temporary home -------------------------------------------------
// (AIRLOCK_DAEMON_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the broker, as in run.mjs)
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await withOwnBroker('al-bench-catalog-', async ({ home, env }) => {
    const sizes = process.argv.includes('--sizes') ? process.argv[process.argv.indexOf('--sizes') + 1].split(',').map(Number) : undefined;
    const rows = await catalogRows({ home, env, quick: process.argv.includes('--quick'), sizes });
    process.stdout.write(`| measure | direct | byte relay | airlock wrap | airlock vs baseline | target |\n|---|---|---|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
  });
}
