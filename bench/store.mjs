#!/usr/bin/env node
// `npm run bench:store`: the journal store alone (compiled), for figures behind the README's journal claims:
// write rate with the event rows and indexes, history queries and pruning at 100,000 entries.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../proxy-core/dist/broker/db/store.js';
import { journalRecord, seedJournal } from './journal-records.mjs';

const out = (line) => process.stdout.write(line + '\n');
const root = mkdtempSync(join(tmpdir(), 'al-store-bench-'));
let n = 0;
const dbPath = () => join(root, `bench-${n++}.db`);
const stores = [];
const open = (path = dbPath()) => {
  const s = new Store(path);
  stores.push(s);
  return s;
};

  const call = journalRecord;

  /** The record the pre-change benchmark wrote (no result, no hashes, no step times). */
  const lean = (i, final) => ({
    id: `call-${i.toString(36)}-abcdef`, sessionId: 's1', client: 'cursor', server: `srv${i % 7}`, tool: `tool_${i % 31}`,
    arguments: JSON.stringify({ path: `/home/me/notes/file-${i}.md`, content: 'x'.repeat(120), n: i }), argsTruncated: false,
    class: 'mutating', reasons: ['declares destructiveHint: false'], decision: 'allow', decidedBy: 'rule', detail: 'allowed by rule r1',
    outcome: final ? 'ok' : 'pending', startedAt: 1_700_000_000_000 + i, ...(final ? { durationMs: 3.5 } : {}),
  });

  for (const [shape, make] of [['lean records (as before)', lean], ['full records (result, hash, step times)', call]]) {
    {
      for (let run = 0; run < 3; run++) {
        const store = open();
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        for (let b = 0; b < 24; b++) {
          const ids = Array.from({ length: 1000 }, (_, k) => b * 1000 + k);
          store.writeJournal(ids.map((i) => make(i, false)));
          store.writeJournal(ids.map((i) => make(i, true)));
        }
        const ms = performance.now() - t0;
        const cpu = process.cpuUsage(c0);
        const cpuMs = (cpu.user + cpu.system) / 1000;
        out(`${shape}, run ${run}: ${ms.toFixed(0)} ms wall, ${cpuMs.toFixed(0)} ms CPU: ${(24000 / (ms / 1000)).toFixed(0)} records/s (${(48000 / (ms / 1000)).toFixed(0)} writes/s, ${store.headSeq()} events)`);
      }
    }
  }

{
    const path = dbPath();
    const store = open(path);
    const N = 100_000;
    let t0 = performance.now();
    seedJournal(store, N);
    const writeMs = performance.now() - t0;
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    out(`seeded ${N} in ${writeMs.toFixed(0)} ms; file ${(statSync(path).size / 1e6).toFixed(1)} MB, tracked ${(store.journalBytes() / 1e6).toFixed(1)} MB`);
    const deep = 1000; // a cursor 99% of the way down
    const cases = [
      ['first page', { limit: 50 }],
      ['first page, server', { limit: 50, server: 'srv3' }],
      ['deep cursor', { limit: 50, before: deep }],
      ['deep cursor, server', { limit: 50, server: 'srv3', before: deep }],
      ['deep cursor, tool + client', { limit: 50, tool: 'tool_7', client: 'cursor', before: deep }],
      ['deep cursor, decision deny', { limit: 50, decision: 'deny', before: deep }],
      ['deep cursor, outcome tool-error + server', { limit: 50, outcome: 'tool-error', server: 'srv2', before: deep }],
      ['deep cursor, time range', { limit: 50, from: 1_700_000_000_000, to: 1_700_000_000_000 + 5_000, before: deep }],
      ['time range deep in history, no cursor', { limit: 50, from: 1_700_000_000_000, to: 1_700_000_000_000 + 5_000 }],
      ['time range: the last few calls', { limit: 50, from: 1_700_000_000_000 + (N - 10) * 10 }],
      ['time range: everything', { limit: 50, from: 0 }],
      ['time range: the older half, cursor at 3/4', { limit: 50, to: 1_700_000_000_000 + (N / 2) * 10, before: (N * 3) / 4 }],
      ['text, common', { limit: 50, text: 'file-9' }],
      ['text, matches one row', { limit: 50, text: 'file-12345.md' }],
      ['text, matches nothing', { limit: 50, text: 'zzz%_' }],
      ['call(id)', { limit: 1 }],
    ];
    for (const [name, q] of cases) {
      const times = [];
      let n = 0;
      for (let r = 0; r < 5; r++) {
        t0 = performance.now();
        n = name === 'call(id)' ? (store.call('call-1234-abcdef') ? 1 : 0) : store.history(q).calls.length;
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      out(`${name}: ${times[2].toFixed(2)} ms median (${n} rows)`);
    }
    t0 = performance.now();
    const ev = store.eventsSince(store.headSeq() - 50_000, 1000);
    out(`eventsSince, 1000 rows: ${(performance.now() - t0).toFixed(2)} ms (${ev.length})`);
    for (const batch of [2000, 1000, 500]) {
      t0 = performance.now();
      const r = store.prune({ maxAgeMs: Infinity, maxBytes: store.journalBytes() - 1_000_000, now: Date.now(), batch });
      const sizeMs = performance.now() - t0;
      const oldest = store.history({ limit: 1, to: 1e15 }).calls[0];
      const firstStart = store.db.prepare('SELECT MIN(started_at) AS t FROM journal').get().t;
      t0 = performance.now();
      const r2 = store.prune({ maxAgeMs: 0, maxBytes: Infinity, now: firstStart + batch * 10, batch });
      const ageMs = performance.now() - t0;
      out(`prune, batch ${batch}: by size ${sizeMs.toFixed(1)} ms (${r.journal} calls, ${r.events} events); by age ${ageMs.toFixed(1)} ms (${r2.journal} calls, ${r2.events} events)${oldest ? '' : '!'}`);
    }
}

for (const s of stores) s.close();
rmSync(root, { recursive: true, force: true });
