#!/usr/bin/env node
// The journal at a million entries, in the broker's store alone (compiled): bytes on disk per entry, history's
// text search and each of its filters (newest page first, as `airlock history` and Activity ask for it), and
// the raw write rate. Baselines from the same run: the text search as the plain scan it was before the index
// (the same LIKE over every row, newest first), the bytes the entries' own texts take (arguments, result,
// detail), and the write rate of the same store without the search index and the indexes this schema added.
// Not a test: nothing here passes or fails.
//
// The entries are what a typical allowed call journals: server-everything's `echo` with a short message and its
// short result, under 4 clients, 12 servers and 60 tools, a deny every 53rd call, a tool error every 97th, and
// ten calls in the million (every 100,000th) from a rare client, server and tool, failed, decided by a timeout.
// AIRLOCK_BENCH_STORE=path/to/store.js measures another build's Store (an older one, say) with the same data.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const T0 = 1_700_000_000_000;
const CLIENTS = ['claude-code', 'cursor', 'codex', 'vscode'];
const SERVERS = ['everything', 'filesystem', 'git', 'github', 'postgres', 'slack', 'fetch', 'memory', 'puppeteer', 'sqlite', 'time', 'sentry'];
const VERBS = ['echo', 'add', 'read_file', 'write_file', 'list'];
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliett', 'kilo', 'lima'];
const SESSIONS = Array.from({ length: 40 }, (_, k) => `${(0x1a2b3c4d + k).toString(16)}-1111-4222-8333-${(0x444455556666 + k).toString(16)}`);

/** Call number i as the wrapper journals it when sent (`final` false) or when done. */
export function typicalRecord(i, final) {
  const server = SERVERS[i % SERVERS.length];
  const deny = i % 53 === 0;
  const message = `call ${i} ${WORDS[i % WORDS.length]}`;
  if (i % 100_000 === 7 && final) {
    return { ...typicalRecord(i, false), client: 'zed', server: 'rare-server', tool: 'rare_tool', outcome: 'rpc-error', decision: 'deny', decidedBy: 'timeout', detail: 'no answer in time' };
  }
  return {
    id: `${(0x5f3a9c1b2e + (i >> 16)).toString(36)}Qx-${i}`,
    sessionId: SESSIONS[(i >> 10) % SESSIONS.length],
    client: CLIENTS[i % CLIENTS.length],
    server,
    tool: VERBS[(i >> 2) % VERBS.length] + (i % 60 < 12 ? '' : `_${i % 5}`),
    arguments: JSON.stringify({ message }),
    argsTruncated: false,
    argsBytes: message.length + 14,
    // hashed only when the call asked (here: the denied ones, decided by a person)
    ...(deny ? { argsSha256: ((i * 2654435761) >>> 0).toString(16).padStart(8, '0').repeat(8) } : {}),
    class: deny ? 'mutating' : 'read-only',
    reasons: deny ? ['declares destructiveHint: true'] : ['declares readOnlyHint'],
    decision: deny ? 'deny' : 'allow',
    decidedBy: deny ? 'user' : 'rule',
    detail: deny ? 'denied by you' : 'allowed by rule r1',
    outcome: deny ? 'not-run' : final ? (i % 97 === 0 ? 'tool-error' : 'ok') : 'pending',
    startedAt: T0 + i * 10,
    // wall-clock times in whole ms (Date.now()), the server's time from the monotonic clock, to the µs
    decidedAt: T0 + i * 10,
    ...(!deny ? { forwardedAt: T0 + i * 10 + 1 } : {}),
    ...(final && !deny
      ? { result: JSON.stringify({ content: [{ type: 'text', text: `Echo: ${message}` }] }), resultTruncated: false, resultBytes: message.length + 45, finishedAt: T0 + i * 10 + 2, durationMs: 1.237 }
      : {}),
  };
}

const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuMs = (c) => (c.user + c.system) / 1000;

function timed(fn, reps = 3) {
  const times = [];
  let n = 0;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    n = fn();
    times.push(performance.now() - t0);
  }
  return { ms: p50(times), n };
}

/** p50 and worst over several queries (each the median of 3 runs), and the rows each found. */
function queries(store, list) {
  const per = list.map((q) => timed(() => store.history({ limit: 50, summary: true, ...q }).calls.length));
  return { ms: p50(per.map((p) => p.ms)), worst: Math.max(...per.map((p) => p.ms)), rows: per.map((p) => p.n) };
}

/** The text search as it was before the index: a LIKE over tool, arguments and detail, newest first (a page). */
function scanSearch(store, text) {
  const like = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const compact = store.db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'journal_calls'").get() !== undefined;
  const st = compact
    ? store.db.prepare("SELECT seq FROM journal_calls j WHERE (j.tool IN (SELECT id FROM names WHERE name LIKE ? ESCAPE '\\') OR j.arguments LIKE ? ESCAPE '\\' OR j.detail LIKE ? ESCAPE '\\') ORDER BY seq DESC LIMIT 51")
    : store.db.prepare("SELECT seq FROM journal WHERE (tool LIKE ? ESCAPE '\\' OR arguments LIKE ? ESCAPE '\\' OR detail LIKE ? ESCAPE '\\') ORDER BY seq DESC LIMIT 51");
  return st.all(like, like, like).length;
}

/** Write 24,000 calls as the wrapper journals them (each sent, then done); calls per second of CPU. */
function writeRate(Store, path, bare) {
  const store = new Store(path);
  // the floor: the same store without what this schema adds to each insert (the search index, two indexes)
  if (bare && store.db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'journal_search'").get()) {
    store.db.exec('DROP INDEX journal_decision; DROP INDEX journal_outcome; DROP TRIGGER journal_search_update; DROP TRIGGER journal_search_delete; DROP TABLE journal_search; CREATE TABLE journal_search (rowid INTEGER PRIMARY KEY, tool, arguments, detail)');
  }
  const c0 = process.cpuUsage();
  for (let b = 0; b < 24; b++) {
    const ids = Array.from({ length: 1000 }, (_, k) => b * 1000 + k);
    store.writeJournal(ids.map((i) => typicalRecord(i, false)));
    store.writeJournal(ids.map((i) => typicalRecord(i, true)));
  }
  const rate = 24_000 / (cpuMs(process.cpuUsage(c0)) / 1000);
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  store.close();
  return { rate, bytes: statSync(path).size / 24_000 };
}

/** Rows for bench/run.mjs's table: [measure, baseline, –, this store, comparison, target]. */
export async function journalMillionRows({ entries = 1_000_000, quick = false } = {}) {
  const n = quick ? Math.min(entries, 200_000) : entries;
  const M = `${(n / 1e6).toFixed(1)}M entries`;
  const modulePath = process.env.AIRLOCK_BENCH_STORE ?? new URL('../proxy-core/dist/broker/db/store.js', import.meta.url).pathname;
  const { Store } = await import(pathToFileURL(modulePath).href);
  const root = mkdtempSync(join(tmpdir(), 'al-journal-million-'));
  const f = (x, d = 2) => x.toFixed(d);
  const rows = [];
  try {
    // alternating, best of 5 each (the machine's other load only ever slows a run down)
    const full = [];
    const bare = [];
    let twoCopies = 0;
    for (let run = 0; run < 5; run++) {
      const r = writeRate(Store, join(root, `rate-${run}.db`), false);
      twoCopies = r.bytes;
      full.push(r.rate);
      bare.push(writeRate(Store, join(root, `bare-${run}.db`), true).rate);
    }
    const best = (xs) => Math.max(...xs);
    rows.push([
      'journal writes, calls/s of CPU (each sent, then done; 1,000 per batch; best of 5)',
      f(best(bare), 0),
      '–',
      f(best(full), 0),
      `baseline: the same store without the search index and the decision and outcome indexes (${f(best(full) / best(bare), 2)}×); median ${f(p50(full), 0)}`,
      '≥ 20,000/s',
    ]);

    // a million entries, done (one copy each), 10,000 per transaction
    const path = join(root, 'million.db');
    const store = new Store(path);
    const c0 = process.cpuUsage();
    let textBytes = 0;
    for (let b = 0; b < n / 10_000; b++) {
      const batch = Array.from({ length: 10_000 }, (_, k) => typicalRecord(b * 10_000 + k, true));
      for (const r of batch) textBytes += Buffer.byteLength(r.arguments) + Buffer.byteLength(r.detail) + (r.result ? Buffer.byteLength(r.result) : 0);
      store.writeJournal(batch);
    }
    const seedCpu = cpuMs(process.cpuUsage(c0));
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const size = statSync(path).size;
    rows.push([
      `journal bytes on disk per typical allowed call, ${M} (done: one copy, one event)`,
      f(textBytes / n, 0),
      '–',
      f(size / n, 0),
      `baseline: the call's own texts (arguments, result, detail); ${f(size / 1e6, 0)} MB; sent and done (two copies, two events): ${f(twoCopies, 0)} B; written at ${f(n / (seedCpu / 1000), 0)} calls/s of CPU`,
      '≤ 500 B',
    ]);

    const search = [
      ['text search, common (every 12th call)', [{ text: 'foxtrot' }, { text: 'MESSAGE":"call 9' }, { text: 'allowed by' }]],
      ['text search, rare (one call; ten)', [{ text: `call ${n - 12_345} ` }, { text: `call ${Math.floor(n / 2) + 7} ` }, { text: 'no answer in' }]],
      ['text search, no call', [{ text: 'zzz%_' }, { text: 'naïve ünïcode' }, { text: 'rule r2' }]],
    ];
    for (const [name, list] of search) {
      const r = queries(store, list);
      const base = list.map((q) => timed(() => scanSearch(store, q.text), 1).ms);
      rows.push([`${name}, ${M} (ms, p50 of 3 texts)`, f(p50(base), 1), '–', f(r.ms), `baseline: the LIKE scan over every row, newest first, as before the index; worst ${f(r.worst)} ms; rows ${r.rows.join('/')}`, '≤ 50 ms']);
    }
    // each filter with a common value, a rare one (10 calls, the last 100,000 calls back) and a deep cursor
    const deep = { before: Math.floor(n * 0.3) };
    const filters = [
      ['tool filter', [{ tool: 'read_file_3' }, { tool: 'rare_tool' }, { tool: 'echo', ...deep }]],
      ['server filter', [{ server: 'github' }, { server: 'rare-server' }, { server: 'time', ...deep }]],
      ['client filter', [{ client: 'cursor' }, { client: 'zed' }, { client: 'vscode', ...deep }]],
      ['decision filter (deny: every 53rd)', [{ decision: 'deny' }, { decision: 'allow' }, { decision: 'deny', ...deep }]],
      ['outcome filter', [{ outcome: 'tool-error' }, { outcome: 'rpc-error' }, { outcome: 'not-run', ...deep }]],
      ['decided-by filter (no index: not a filter of the CLI or Activity)', [{ decidedBy: 'user' }, { decidedBy: 'timeout' }, { decidedBy: 'rule', ...deep }]],
      ['denied, by tool', [{ decision: 'deny', tool: 'echo' }, { decision: 'deny', tool: 'add_1' }, { decision: 'deny', tool: 'rare_tool' }]],
      ['text under a rare tool', [{ text: 'call', tool: 'rare_tool' }, { text: 'lima', server: 'rare-server' }, { text: 'time', client: 'zed' }]],
    ];
    for (const [name, list] of filters) {
      const r = queries(store, list);
      rows.push([`${name}, ${M} (ms, p50 of common, rare, deep)`, '–', '–', f(r.ms), `worst ${f(r.worst, 1)} ms; rows ${r.rows.join('/')}`, '≤ 50 ms']);
    }
    store.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const row of await journalMillionRows({ quick: process.argv.includes('--quick') })) process.stdout.write(`| ${row.join(' | ')} |\n`);
}
