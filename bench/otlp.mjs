// The audit export (proxy-core/src/broker/otlp/): how many records a second it maps, queues on disk and delivers
// to a local OTLP/HTTP receiver (protobuf), and whether a broker exporting slows the gate: p50 of an allowed
// call through a real wrapper with the export off and on (collector up). Not a test: nothing here passes or
// fails. Run alone with `node bench/otlp.mjs` (after `npm run build`), or from run.mjs.
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawSession } from './raw-session.mjs';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { Store } from '../proxy-core/dist/broker/db/store.js';
import { OtlpQueue } from '../proxy-core/dist/broker/otlp/queue.js';
import { OtlpExporter } from '../proxy-core/dist/broker/otlp/exporter.js';
import { startBroker } from './own-broker.mjs';
import { FIXTURE, WRAP } from './paths.mjs';

/** A receiver that takes every request and answers 200 (counting bytes): the collector's cost left out. */
async function receiver() {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (c) => (bytes += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, bytes: () => bytes, close: () => new Promise((r) => server.close(r)) };
}

const record = (i) => ({
  id: `c-${i}`, sessionId: 's-bench', client: 'bench', server: 'fs', tool: 'write_file', arguments: `{"path":"/tmp/f${i}","content":"x"}`,
  argsTruncated: false, argsBytes: 30, class: 'mutating', reasons: [], decision: 'allow', decidedBy: 'rule', detail: 'allowed by rule r1',
  outcome: 'ok', startedAt: Date.now(), finishedAt: Date.now() + 1, durationMs: 1, resultBytes: 20,
});

/** `calls` finished calls (a span and a log each) handed over in journal-sized batches; records/s until all acknowledged. */
async function throughput(calls) {
  const dir = mkdtempSync(join(tmpdir(), 'al-bench-otlp-'));
  const rx = await receiver();
  const store = new Store(join(dir, 'airlock.db'));
  const queue = new OtlpQueue(store.db, 1_000_000);
  const exporter = new OtlpExporter({ queue, endpoint: () => rx.url, content: () => false, env: {}, record: () => ({}), origin: { service: 'airlock', version: 'bench' } });
  const start = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < calls; i += 200) {
    exporter.calls(Array.from({ length: Math.min(200, calls - i) }, (_, k) => record(i + k)));
    await new Promise((r) => setImmediate(r));
  }
  while (queue.counts().sent < calls * 2) await new Promise((r) => setTimeout(r, 5));
  const seconds = (performance.now() - start) / 1000;
  // CPU time too: on a shared machine the wall clock measures the neighbours as much as the export
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  exporter.stop();
  store.close();
  await rx.close();
  rmSync(dir, { recursive: true, force: true });
  return { records: calls * 2, perSecond: Math.round((calls * 2) / seconds), perCpuSecond: Math.round((calls * 2) / cpuSeconds), mb: rx.bytes() / 1e6 };
}

/** p50 and p99 (ms) of `calls` allowed calls through a wrapper, the export off or on. */
async function gate(exportOn, calls) {
  const home = mkdtempSync(join(tmpdir(), `al-bench-otlp-gate-`));
  const env = { ...process.env, AIRLOCK_HOME: home };
  const rx = await receiver();
  const d = await startBroker(env);
  const client = await BrokerClient.connect({ dir: home, role: 'cli' });
  await client.call('rules.add', { action: 'allow', server: 'bench-otlp', tool: '*' });
  if (exportOn) await client.call('settings.set', { key: 'otlp-endpoint', value: rx.url });
  const wrap = rawSession(process.execPath, [...WRAP, '--name', 'bench-otlp', '--client', 'bench', '--', process.execPath, FIXTURE], { ...env, FIXTURE_LOG: join(home, 'fixture.log') });
  await wrap.init();
  const times = [];
  for (let i = 0; i < calls + 50; i++) {
    const start = performance.now();
    await wrap.request('tools/call', { name: 'echo', arguments: { text: `n${i}` } });
    if (i >= 50) times.push(performance.now() - start);
  }
  const status = await client.call('status', {});
  // the wrapper gone before its home is removed (one leaving without its broker writes its spill there)
  await wrap.close();
  client.close();
  await d.stop();
  await rx.close();
  rmSync(home, { recursive: true, force: true });
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)], p99: times[Math.floor(times.length * 0.99)], sent: status.otlp?.sent ?? 0 };
}

export async function otlpRows({ quick = false } = {}) {
  const t = await throughput(quick ? 10_000 : 50_000);
  const off = await gate(false, quick ? 300 : 1000);
  const on = await gate(true, quick ? 300 : 1000);
  return [
    [`OTLP export: ${t.records} records (spans + logs) mapped, queued on disk, sent as protobuf`, '—', '—', `${t.perSecond} records/s (${t.perCpuSecond} per CPU-second)`, `${t.mb.toFixed(1)} MB sent`, '≥ 10,000 records/s'],
    ['gate p50 / p99, allowed call, export off', '—', '—', `${off.p50.toFixed(2)} / ${off.p99.toFixed(2)} ms`, '', ''],
    ['gate p50 / p99, allowed call, export on (collector up)', '—', '—', `${on.p50.toFixed(2)} / ${on.p99.toFixed(2)} ms`, `${on.sent} records sent`, 'no slower than off'],
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await otlpRows({ quick: process.argv.includes('--quick') })) process.stdout.write(`${row.join(' | ')}\n`);
  process.exit(0);
}
