// Snapshot cost: an allowed write_file of 100 KB through `airlock wrap`, with undo's snapshot of the file taken
// before the call (the filesystem server, whose write_file is a built-in file tool), against the same call
// without one (the same server started from a launcher Airlock does not recognise, so nothing is snapshotted).
// Each call overwrites a 100 KB file with new bytes, so every snapshot reads 100 KB and keeps a new copy.
// The two modes alternate call by call, so both see the disk in the same state (a write's latency here depends
// on what the filesystem is doing, more than on anything Airlock does). Imported by run.mjs, which owns the broker; not a test: nothing passes or fails.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rawSession } from './raw-session.mjs';
import { ROOT, CLI, WRAP } from './paths.mjs';
import { median } from './stats.mjs';
import { brokerAnswers } from './broker-state.mjs';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';

const FILESYSTEM = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const SIZE = 100 * 1024;

/** One wrapped filesystem server, spoken to in JSON lines. */
function session(env, name, command) {
  return rawSession(process.execPath, [...WRAP, '--name', name, '--client', 'bench', '--', ...command], env);
}

function cli(env, ...args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CLI, ...args], { env, stdio: 'ignore' });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`airlock ${args.join(' ')} failed`))));
  });
}

/** The bench's row: [measure, direct, byte relay, airlock wrap, vs baseline, target], as run.mjs prints them. */
export async function snapshotRows({ home, env, quick }) {
  const root = join(home, 'snapshot-bench');
  mkdirSync(root, { recursive: true });
  // the same server, started from a file whose path does not name it: Airlock gives it no built-in file tools
  const plainLauncher = join(home, 'plain-fs.mjs');
  writeFileSync(plainLauncher, `await import(${JSON.stringify(new URL(`file://${FILESYSTEM}`).href)});\n`);
  await cli(env, 'rules', 'add', 'allow', '--server', 'bench-fs-*', '--tool', 'write_file');
  // hundreds of writes a second is what the E-Stop tripwire is for: it is off while this measures their cost
  await cli(env, 'settings', 'tripwire', 'off');
  const modes = {
    snapshot: session(env, 'bench-fs-snapshot', [process.execPath, FILESYSTEM, root]),
    plain: session(env, 'bench-fs-plain', [process.execPath, plainLauncher, root]),
  };
  const times = { snapshot: [], plain: [] };
  const calls = quick ? 200 : 1000;
  let n = 0;
  const write = async (mode, record) => {
    const path = join(root, `${mode}.txt`);
    const content = `${++n} `.padEnd(SIZE, 'x');
    const t0 = performance.now();
    const r = await modes[mode].request('tools/call', { name: 'write_file', arguments: { path, content } });
    const ms = performance.now() - t0;
    if (r.error || r.result?.isError) throw new Error(`${mode}: write_file failed: ${JSON.stringify(r.error ?? r.result).slice(0, 300)}`);
    if (record) times[mode].push(ms);
  };
  // a front end asking the broker every 20 ms meanwhile: the journal files these calls' 64 KB of arguments each
  const broker = await BrokerClient.connect({ dir: home });
  let answers;
  try {
    for (const s of Object.values(modes)) await s.init();
    for (const mode of ['snapshot', 'plain']) for (let i = 0; i < 20; i++) await write(mode, false);
    answers = await brokerAnswers(
      broker,
      async () => {
        for (let i = 0; i < calls; i++) {
          for (const mode of i % 2 ? ['plain', 'snapshot'] : ['snapshot', 'plain']) await write(mode, true);
        }
      },
      20,
    );
  } finally {
    for (const s of Object.values(modes)) await s.close();
    broker.close();
    await cli(env, 'settings', 'tripwire', 'on');
  }
  const withSnap = median(times.snapshot);
  const without = median(times.plain);
  return [
    [
      `allowed write_file of 100 KB with its undo snapshot (ms, median of ${times.snapshot.length})`,
      '–',
      '–',
      withSnap.toFixed(3),
      `${(withSnap / without).toFixed(2)}× the same call without a snapshot (${without.toFixed(3)} ms)`,
      '≤ 1.3×',
    ],
    [
      `the broker's slowest answer to a front end while those ${2 * calls} writes of 100 KB run (ms)`,
      '–',
      '–',
      answers.worst.toFixed(1),
      `${answers.count} answers every 20 ms, median ${answers.median.toFixed(2)} ms; the journal files each call with 64 KB of its arguments`,
      '< 1,000 ms (a wrapper calls the broker dead)',
    ],
  ];
}
