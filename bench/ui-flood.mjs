// The broker's socket while the UI port is flooded: an allowed wrapped call (the fixture's echo, through one
// `airlock wrap`) and an E-Stop command from a fresh front-end connection (what the CLI does), timed with nothing
// on the UI port (the baseline, same run) and then with 5,000 raw TCP connections opened to it and held. On Linux
// the broker is held to 1,024 file handles (prlimit), a small but common limit. Also: how many file handles the
// broker holds while the connections are held. Owns its own `airlock daemon --ui`; not a test.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { rawSession } from './raw-session.mjs';
import { CLI, FIXTURE, WRAP } from './paths.mjs';
import { quantile } from './stats.mjs';
import { startBroker } from './own-broker.mjs';

const FLOOD = 5000;
const HANDLES = 1024;

async function flood(port, n) {
  const sockets = [];
  await Promise.all(
    Array.from({ length: n }, () => new Promise((resolve) => {
      const s = connect(port, '127.0.0.1');
      sockets.push(s);
      s.on('connect', resolve);
      s.on('error', resolve);
      s.on('close', resolve);
      s.setTimeout(20_000, resolve);
    })),
  );
  return sockets;
}

export async function uiFloodRows({ quick = false } = {}) {
  const rounds = quick ? 10 : 40;
  const home = mkdtempSync(join(tmpdir(), 'al-floodbench-'));
  const d = await startBroker({ ...process.env, AIRLOCK_HOME: home }, ['--no-presence', '--ui', '--port', '0']);
  let limited = false;
  if (process.platform === 'linux') {
    try {
      execFileSync('prlimit', ['--pid', String(d.pid), `--nofile=${HANDLES}:${HANDLES}`]);
      limited = true;
    } catch {
      // no prlimit: the broker keeps its own limit, and the note says so
    }
  }
  const env = { ...process.env, AIRLOCK_HOME: home };
  const admin = await BrokerClient.connect({ dir: home });
  await admin.call('rules.add', { action: 'allow', server: 'bench-flood', tool: 'echo' });
  const wrap = rawSession(process.execPath, [...WRAP, '--name', 'bench-flood', '--client', 'bench', '--', process.execPath, FIXTURE], env);
  await wrap.init();
  const measure = async () => {
    const call = [];
    const estop = [];
    let failed = 0;
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      const { m, at } = await wrap.timedRequest('tools/call', { name: 'echo', arguments: { text: `r${i}` } });
      if (m.result?.isError || !m.result) failed++;
      call.push(at - t0);
      const t1 = performance.now();
      try {
        const c = await BrokerClient.connect({ dir: home, role: 'cli' });
        await c.call('estop', { on: true });
        c.close();
      } catch {
        failed++;
      }
      estop.push(performance.now() - t1);
      await admin.call('estop', { on: false });
    }
    return { call, estop, failed };
  };
  try {
    const base = await measure();
    const held = await flood(Number(d.url.port), FLOOD);
    await new Promise((r) => setTimeout(r, 1000));
    // what the broker holds (the rest wait in the kernel's listen queue, which costs the broker no handle)
    const fds = () => (process.platform === 'linux' ? readdirSync(`/proc/${d.pid}/fd`).length : NaN);
    const inUse = fds();
    const under = await measure();
    for (const s of held) s.destroy();
    const f = (x) => x.toFixed(1);
    const lim = limited ? `broker held to ${HANDLES} file handles` : 'broker at its own file limit';
    return [
      [
        `allowed wrapped call, ${FLOOD} TCP connections held on the UI port (ms, median)`,
        '–',
        '–',
        f(quantile(under.call, 0.5)),
        `none held: ${f(quantile(base.call, 0.5))}; p90 ${f(quantile(under.call, 0.9))} vs ${f(quantile(base.call, 0.9))}; ${rounds} calls, ${under.failed} failed; ${lim}; broker file handles in use while held: ${inUse}`,
        'works; ≤ 2× none held',
      ],
      [
        `E-Stop from a new CLI connection, ${FLOOD} TCP connections held on the UI port (ms, median)`,
        '–',
        '–',
        f(quantile(under.estop, 0.5)),
        `none held: ${f(quantile(base.estop, 0.5))}; p90 ${f(quantile(under.estop, 0.9))} vs ${f(quantile(base.estop, 0.9))}`,
        'works; ≤ 2× none held',
      ],
    ];
  } finally {
    await wrap.close();
    admin.close();
    await d.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await uiFloodRows({ quick: process.argv.includes('--quick') })) process.stdout.write(`| ${row.join(' | ')} |\n`);
}
