#!/usr/bin/env node
// Activity's figures for `npm run bench` (also alone: `node bench/activity.mjs [--quick]`), over a real daemon
// whose journal holds 100,000 calls (bench/journal-records.mjs: a path, a content and a number each):
//   - Activity's first page as the UI asks for it (200 summaries, each with its argument summary), over the
//     broker's socket, against the same page asked in-process of the store without the summaries
//   - `airlock history --export jsonl|csv` of all 100,000: wall time, the CLI's peak memory, and how much the
//     daemon's resident memory grew meanwhile (the export streams page by page: neither holds the journal)
// Not a test: nothing here passes or fails.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Store } from '../proxy-core/dist/broker/db/store.js';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { databasePath } from '../proxy-core/dist/ipc/paths.js';
import { seedJournal } from './journal-records.mjs';
import { startBroker } from './own-broker.mjs';
import { ROOT, CLI } from './paths.mjs';
import { median } from './stats.mjs';

const HOOK = pathToFileURL(join(ROOT, 'bench', 'maxrss-hook.mjs')).href;
const ENTRIES = 100_000;

const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];
const mb = (kb) => (kb / 1024).toFixed(0);

/** Resident and peak resident memory of a process, in KB (Linux). */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** `airlock history --export FORMAT` into a file: wall ms, the CLI's peak KB, the file's bytes and lines. */
function exportOnce(home, format, out, extra = []) {
  const rssFile = `${out}.maxrss`;
  const fd = openSync(out, 'w');
  const t0 = performance.now();
  const proc = spawn(process.execPath, ['--import', HOOK, CLI, 'history', '--export', format, ...extra], {
    env: { ...process.env, AIRLOCK_HOME: home, AIRLOCK_BENCH_MAXRSS: rssFile },
    stdio: ['ignore', fd, 'pipe'],
  });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    proc.on('exit', (code) => {
      closeSync(fd);
      if (code !== 0) return reject(new Error(`export ${format} failed (${code}): ${err}`));
      const text = readFileSync(out, 'utf8');
      resolve({ ms: performance.now() - t0, cliKb: Number(readFileSync(rssFile, 'utf8')), bytes: statSync(out).size, lines: text.split('\n').length - 1 });
    });
  });
}

export async function activityRows({ quick = false } = {}) {
  const reps = quick ? 5 : 15;
  const home = mkdtempSync(join(tmpdir(), 'al-activity-bench-'));
  const rows = [];
  try {
    // a broker makes its data dir; the journal is then filled directly, as 100,000 calls would have
    await (await startBroker({ ...process.env, AIRLOCK_HOME: home })).stop();
    const store = new Store(databasePath(home));
    seedJournal(store, ENTRIES, Date.now() - ENTRIES * 10 - 60_000);
    const bare = [];
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      store.history({ limit: 200, summary: true });
      bare.push(performance.now() - t0);
    }
    store.close();

    const d = await startBroker({ ...process.env, AIRLOCK_HOME: home });
    try {
      const client = await BrokerClient.connect({ dir: home, role: 'cli' });
      const page = [];
      let first;
      try {
        for (let r = 0; r < reps + 1; r++) {
          const t0 = performance.now();
          first = await client.call('history', { limit: 200, summary: true });
          if (r > 0) page.push(performance.now() - t0);
        }
      } finally {
        client.close();
      }
      const summarized = first.calls.filter((c) => c.argSummary).length;
      rows.push([
        "Activity's first page at 100,000 entries (200 summaries with their argument summary, over the socket), p50 (ms)",
        median(bare).toFixed(1),
        '–',
        median(page).toFixed(1),
        `baseline: the same page in-process on the store, without argument summaries; p90 ${p90(page).toFixed(1)}; ${summarized} of ${first.calls.length} rows summarized`,
        '≤ 100 ms',
      ]);
      for (const format of ['jsonl', 'csv']) {
        // the baseline: the oldest 10,000 entries alone (the seqs below 10,001), by the same command
        const small = await exportOnce(home, format, join(home, `small.${format}`), ['--before', '10001']);
        const before = memoryOf(d.pid);
        const r = await exportOnce(home, format, join(home, `export.${format}`));
        const after = memoryOf(d.pid);
        rows.push([
          `\`airlock history --export ${format}\` of 100,000 entries: wall time (s) / the CLI's peak memory (MB) / the daemon's growth (MB)`,
          `${(small.ms / 1000).toFixed(1)} / ${mb(small.cliKb)} / –`,
          '–',
          `${(r.ms / 1000).toFixed(1)} / ${mb(r.cliKb)} / ${mb(after.rss - before.rss)}`,
          `baseline: the same export of 10,000 entries; ${r.lines.toLocaleString('en-US')} lines, ${(r.bytes / 1e6).toFixed(1)} MB, ${Math.round(ENTRIES / (r.ms / 1000)).toLocaleString('en-US')} entries/s; daemon resident ${mb(after.rss)} MB after`,
          'memory flat in the entries (streamed)',
        ]);
      }
    } finally {
      await d.stop();
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const r of await activityRows({ quick: process.argv.includes('--quick') })) process.stdout.write(`| ${r.join(' | ')} |\n`);
}
