/** The exporter against a local OTLP receiver: the bound and its event, retries, JSON, content left out. */
import { afterEach, describe, expect, test } from 'vitest';
import { OtlpExporter } from '../../../../proxy-core/src/broker/otlp/exporter.js';
import { OtlpQueue } from '../../../../proxy-core/src/broker/otlp/queue.js';
import type { CallRecord } from '../../../../proxy-core/src/protocol/api.js';
import { startReceiver, type OtlpReceiver } from '../../../helpers/otlp-receiver.js';
import { tempStores } from '../../../helpers/temp-store.js';

const stores = tempStores('al-otlpx-');
const receivers: OtlpReceiver[] = [];
const exporters: OtlpExporter[] = [];
afterEach(async () => {
  for (const e of exporters.splice(0)) e.stop();
  for (const r of receivers.splice(0)) await r.close();
});

const call = (i: number): CallRecord => ({
  id: `c-${i}`, sessionId: 's-1', client: 'cl', server: 'fs', tool: 'write_note', arguments: '{"text":"private"}', argsTruncated: false,
  class: 'mutating', reasons: [], decision: 'allow', decidedBy: 'rule', detail: '', outcome: 'ok', startedAt: 1000 + i, finishedAt: 1001 + i,
});

/** Until `check` holds (the exporter's state moves on its own timers), at most 5 s. */
async function until(check: () => boolean): Promise<void> {
  for (const end = Date.now() + 5000; !check(); ) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setImmediate(r));
  }
}

async function setup(o: { max?: number; env?: Record<string, string> } = {}) {
  const rx = await startReceiver();
  receivers.push(rx);
  const queue = new OtlpQueue(stores.open().db, o.max ?? 1000);
  const recorded: { type: string; detail: unknown }[] = [];
  let endpoint = rx.url;
  const exporter = new OtlpExporter({
    queue,
    endpoint: () => endpoint,
    content: () => false,
    env: o.env ?? {},
    record: ((type: string, _s: unknown, _t: unknown, detail: unknown) => (recorded.push({ type, detail }), {})) as never,
    origin: { service: 'airlock-broker', version: 'test' },
    flushMs: 1,
    retryMs: { first: 20, max: 40 },
  });
  exporters.push(exporter);
  return { rx, queue, exporter, recorded, setEndpoint: (u: string) => (endpoint = u) };
}

describe('the audit exporter', () => {
  test('past the bound records are dropped, counted, and said once by an event', async () => {
    const { exporter, queue, recorded, setEndpoint, rx } = await setup({ max: 4 });
    setEndpoint('http://127.0.0.1:1');
    exporter.calls([call(1), call(2), call(3)]);
    exporter.flush();
    exporter.calls([call(4)]);
    exporter.flush();
    expect(queue.size).toBe(4);
    expect(exporter.status()).toMatchObject({ queued: 4, max: 4, dropped: 4 });
    expect(recorded.filter((r) => r.type === 'otlp-dropped')).toEqual([{ type: 'otlp-dropped', detail: { dropped: 2, max: 4, total: 2 } }]);
    setEndpoint(rx.url);
    exporter.changed();
    await rx.until((r) => r.spans.length === 2 && r.logs.length === 2);
    expect(rx.spans.map((s) => s.name)).toEqual(['tools/call write_note', 'tools/call write_note']);
    expect(JSON.stringify(rx.spans)).not.toContain('private');
  });

  test('a collector that answers 503 is tried again until it takes the batch; nothing is lost', async () => {
    const { exporter, rx, queue } = await setup();
    rx.down();
    exporter.calls([call(1), call(2)]);
    await until(() => rx.requests.length >= 2 && exporter.status().lastError !== null);
    expect(exporter.status().lastError).toMatch(/503/);
    expect(queue.size).toBe(4);
    rx.up();
    await rx.until((r) => r.spans.length === 2 && r.logs.length === 2, 5000);
    await until(() => exporter.status().queued === 0);
    expect(exporter.status()).toMatchObject({ queued: 0, sent: 4, lastError: null });
  });

  test('OTLP/JSON when the environment asks for it, with its headers', async () => {
    const { exporter, rx } = await setup({ env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_HEADERS: 'api-key=k1', OTEL_EXPORTER_OTLP_LOGS_HEADERS: 'api-key=k2' } });
    exporter.calls([call(1)]);
    await rx.until((r) => r.spans.length === 1 && r.logs.length === 1);
    const byPath = Object.fromEntries(rx.requests.map((r) => [r.path, r.headers]));
    expect(byPath['/v1/traces']).toMatchObject({ 'content-type': 'application/json', 'api-key': 'k1' });
    expect(byPath['/v1/logs']).toMatchObject({ 'content-type': 'application/json', 'api-key': 'k2' });
    expect(rx.spans[0]!.attributes['gen_ai.tool.name']).toBe('write_note');
  });

  test('nothing is taken while no endpoint is set', async () => {
    const { exporter, queue, setEndpoint } = await setup();
    setEndpoint('');
    exporter.calls([call(1)]);
    exporter.flush();
    expect(queue.size).toBe(0);
  });
});
