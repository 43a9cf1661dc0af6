// The wrapper's start-up against the plain byte relay (bench/byte-relay.mjs), in the same run, modes alternating:
// from the proxy's spawn to the first tools/list answered (initialize, initialized, tools/list, as a client
// sends them), in front of the fixture server. Three modes: the relay, `airlock wrap` as bin/airlock.js starts it
// (from the build's bundle when fresh), and the unbundled entry (proxy-core/dist/cli/main.js), which shows what
// the bundle is worth. Each process is preloaded with bench/stamp-start.mjs, which notes when it began, so the
// figure splits into the time until the proxy started its server and the rest; the proxy's CPU time is read from
// /proc when the server runs its first line and when the listing is answered. Imported by a runner that owns the
// broker (wrapStartupRows({ home, env })), or run on its own (`node bench/wrap-startup.mjs [--quick]`), which
// starts a broker in a temporary home. Not a test: nothing here passes or fails.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withOwnBroker } from './own-broker.mjs';
import { rawSession } from './raw-session.mjs';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { ROOT, CLI, RELAY, FIXTURE, WRAPPER_NODE_FLAGS } from './paths.mjs';
import { median } from './stats.mjs';

const STAMP = join(ROOT, 'bench', 'stamp-start.mjs');
const SERVER = 'bench-wrap-startup';
// the unbundled entry, as the launcher runs it when the bundle is missing or stale: the bundle's own effect
const UNBUNDLED = join(ROOT, 'proxy-core', 'dist', 'cli', 'main.js');
const MODES = ['relay', 'airlock', 'unbundled'];

/** CPU time of all the process's threads so far (ms; schedstat counts nanoseconds, /proc/PID/stat only ticks). */
const cpuMs = (pid) =>
  readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => sum + Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6, 0);
// (bench/stamp-start.mjs reads the proxy's the same way, when the server begins)

/** One start-up: milliseconds from the spawn to the listing, to the proxy's start, to the server's; proxy CPU. */
async function once(mode, env, stamps) {
  const node = process.execPath;
  const server = [node, '--import', STAMP, FIXTURE];
  // AIRLOCK_WRAP_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the wrapper
  const extra = process.env.AIRLOCK_WRAP_NODE_ARGS ? process.env.AIRLOCK_WRAP_NODE_ARGS.split(' ') : [];
  const wrap = ['wrap', '--name', SERVER, '--client', 'bench', '--', ...server];
  const args = mode === 'relay' ? ['--import', STAMP, RELAY, '--', ...server] : [...extra, ...WRAPPER_NODE_FLAGS, '--import', STAMP, mode === 'airlock' ? CLI : UNBUNDLED, ...wrap];
  writeFileSync(stamps, '');
  const t0 = performance.timeOrigin + performance.now();
  const s = rawSession(node, args, { ...env, BENCH_START_STAMPS: stamps });
  await s.init();
  const total = performance.timeOrigin + performance.now() - t0;
  const cpu = cpuMs(s.proc.pid);
  await s.close();
  const lines = readFileSync(stamps, 'utf8').trim().split('\n').map((l) => l.split(' '));
  const at = Object.fromEntries(lines.map(([role, t]) => [role, Number(t) - t0]));
  const cpuAtSpawn = Number(lines.find(([role]) => role === 'server')?.[2]);
  return { total, proxy: at.proxy, server: at.server, cpu, cpuAtSpawn };
}

/** Run the measure against the broker in `home` (an allow rule for the server is added and removed here). */
export async function wrapStartupRows({ home, env, quick = false }) {
  const runs = quick ? 6 : 24;
  const stamps = join(home, 'wrap-startup-stamps');
  const broker = await BrokerClient.connect({ dir: home });
  const rule = await broker.call('rules.add', { action: 'allow', server: SERVER, tool: '*' });
  try {
    // the first wrapper of this server pins its tools: a warm-up, not counted
    for (const mode of MODES) await once(mode, env, stamps);
    const m = { relay: [], airlock: [], unbundled: [] };
    for (let i = 0; i < runs; i++) for (const mode of i % 2 ? [...MODES].reverse() : MODES) m[mode].push(await once(mode, env, stamps));
    const med = (mode, key) => median(m[mode].map((r) => r[key]));
    const f = (x) => x.toFixed(1);
    const over = (mode, key) => `${med(mode, key) >= med('relay', key) ? '+' : ''}${f(med(mode, key) - med('relay', key))} ms`;
    const row = (what, key, target = '(for information)') => [what, '–', f(med('relay', key)), f(med('airlock', key)), `${over('airlock', key)} over relay (unbundled: ${over('unbundled', key)})`, target];
    return [
      row(`start-up to first tools/list, fixture server (ms, median of ${runs})`, 'total', '≤ +30 ms'),
      row('  spawn to the proxy process begun (ms, median)', 'proxy'),
      row('  spawn to the server process begun (ms, median)', 'server'),
      row('proxy CPU by the time its server runs its first line (ms, median)', 'cpuAtSpawn'),
      row('proxy CPU up to the first tools/list answered (ms, median)', 'cpu'),
    ];
  } finally {
    await broker.call('rules.remove', { id: rule.id }).catch(() => {});
    broker.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await withOwnBroker('al-bench-wrapstart-', async ({ home, env }) => {
      const rows = await wrapStartupRows({ home, env, quick: process.argv.includes('--quick') });
      process.stdout.write(`| measure | direct | byte relay | airlock wrap | airlock vs baseline | target |\n|---|---|---|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
  });
}
