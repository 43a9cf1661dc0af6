// The cost of finding a server's process tree on Linux beyond its process group (util/tree-watch.ts): the
// wrapper's once-a-second sample (down the tree's own children lists) and the stop-time scan (also every process's environment,
// for the tree's marker), against the process-group check that was all there was before (kill(-pid, 0)), with a
// server of 4 detached workers running. Runnable on its own: `node bench/process-tree.mjs`.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { TreeWatch } from '../proxy-core/dist/util/tree-watch.js';
import { median } from './stats.mjs';

function timed(fn, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return out;
}

/** Rows for the main table; empty where there is no /proc. */
export async function processTreeRows({ quick = false } = {}) {
  if (process.platform !== 'linux') return [];
  const n = quick ? 50 : 300;
  const watch = new TreeWatch();
  const server = `for (let i = 0; i < 4; i++) require('child_process').spawn('sleep', ['60'], { stdio: 'ignore', detached: true }).unref(); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', server], { stdio: 'ignore', detached: true, env: watch.env(process.env) });
  try {
    watch.start(child.pid);
    const until = Date.now() + 5000;
    while (watch.members().length < 5 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const found = watch.members().length;
    if (found < 5) throw new Error(`process-tree bench: found ${found} of the 5 processes of the tree`);
    const processes = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).length;
    const group = median(
      timed(() => {
        try {
          process.kill(-child.pid, 0);
        } catch {
          // gone
        }
      }, n),
    );
    // (TypeScript's `private`: still callable from here)
    const sample = median(timed(() => watch.sample(), n));
    const scan = median(timed(() => watch.members(), n));
    const f = (x) => x.toFixed(3);
    const note = `${processes} processes on the machine, a tree of ${found}; baseline: the process-group check (kill(-pid, 0))`;
    return [
      ['process tree sample, the tree\'s children lists (ms, median; once a second per server)', f(group), '–', f(sample), note, '(for information)'],
      ['process tree scan at stop, with the environment marker (ms, median)', f(group), '–', f(scan), note, '(for information)'],
    ];
  } finally {
    watch.close();
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
    watch.kill();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await processTreeRows({ quick: process.argv.includes('--quick') })) console.log(row.join(' | '));
}
