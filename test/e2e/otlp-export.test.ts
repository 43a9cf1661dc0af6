/**
 * The audit export end to end: a daemon with the fixture server wrapped, a local OTLP receiver (decoding with
 * OpenTelemetry's protobuf definitions) as the collector. Calls arrive as spans and logs with the MCP attributes,
 * joined to the client's trace; while the collector is down they wait in the queue, and all of them arrive once
 * it is back.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, cliJson, onCleanup, waitFor } from '../helpers/airlock.js';
import { startBroker, wrapFixture } from '../helpers/e2e.js';
import { startReceiver } from '../helpers/otlp-receiver.js';
import type { BrokerStatus } from '../../proxy-core/src/protocol/api.js';

afterEach(cleanup);

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('the audit export to an OpenTelemetry collector', () => {
  test("calls arrive as spans and logs in the client's trace; with the collector down they are queued, then all delivered", async () => {
    const rx = await startReceiver();
    onCleanup(() => rx.close());
    const { home } = await startBroker({ allow: ['fixture'], env: { OTEL_EXPORTER_OTLP_HEADERS: 'x-audit-team=platform%20sec' }, settings: { 'otlp-endpoint': rx.url } });
    const { w } = await wrapFixture(home);

    const result = await w.client.callTool({ name: 'echo', arguments: { text: 'secret words' }, _meta: { traceparent: `00-${TRACE}-${PARENT}-01` } });
    expect(result.isError).toBeFalsy();
    await rx.until((r) => r.spans.some((s) => s.name === "tools/call echo") && r.logs.some((l) => l.eventName === "airlock.call")).catch((e: Error) => { throw new Error(`${e.message} ${JSON.stringify([rx.spans, rx.logs.map((l) => l.eventName)])}`); });
    const span = rx.spans.find((s) => s.name === 'tools/call echo')!;
    expect(span.traceId).toBe(TRACE);
    expect(span.parentSpanId).toBe(PARENT);
    expect(span.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo', 'airlock.server': 'fixture', 'airlock.client': 'test-client', 'airlock.decision': 'allow', 'airlock.decided_by': 'rule', 'airlock.outcome': 'ok' });
    expect(span.attributes['airlock.arguments.journal_sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rx.spans) + JSON.stringify(rx.logs)).not.toContain('secret words');
    const log = rx.logs.find((l) => l.eventName === 'airlock.call')!;
    expect([log.traceId, log.spanId]).toEqual([TRACE, span.spanId]);
    expect(rx.resources[0]).toMatchObject({ 'service.name': 'airlock-broker' });
    expect(rx.requests[0]!.headers['x-audit-team']).toBe('platform sec');
    expect(rx.requests.every((r) => r.headers['content-type'] === 'application/x-protobuf')).toBe(true);

    rx.down();
    for (let i = 0; i < 20; i++) expect((await w.client.callTool({ name: 'echo', arguments: { text: `n${i}` } })).isError).toBeFalsy();
    await waitFor(async () => {
      const s = await cliJson<BrokerStatus>(home, ['status', '--json']);
      return (s.otlp?.queued ?? 0) >= 40 && s.otlp?.lastError !== null;
    }, 15_000, 'the records queued while the collector is down');
    const before = rx.spans.length;
    rx.up();
    await rx.until((r) => new Set(r.spans.filter((s) => s.name === 'tools/call echo').map((s) => s.spanId)).size === 21, 30_000);
    expect(rx.spans.length).toBeGreaterThanOrEqual(before + 20);
    await waitFor(async () => (await cliJson<BrokerStatus>(home, ['status', '--json'])).otlp?.queued === 0, 10_000, 'an empty queue');
    const status = await cliJson<BrokerStatus>(home, ['status', '--json']);
    expect(status.otlp).toMatchObject({ endpoint: rx.url, dropped: 0, lastError: null });
  }, 90_000);

  test('clearing the endpoint is a loosening that needs a presence proof; setting it from none does not', async () => {
    const rx = await startReceiver();
    onCleanup(() => rx.close());
    const { broker } = await startBroker({ presence: true });
    await broker.call('settings.set', { key: 'otlp-endpoint', value: rx.url });
    await expect(broker.call('settings.set', { key: 'otlp-endpoint', value: '' })).rejects.toThrow(/presence|proof/i);
    await expect(broker.call('settings.set', { key: 'otlp-endpoint', value: 'http://127.0.0.1:1' })).rejects.toThrow(/presence|proof/i);
    await expect(broker.call('settings.set', { key: 'otlp-content', value: 'on' })).rejects.toThrow(/presence|proof/i);
    expect((await broker.call('settings.get', { key: 'otlp-endpoint' })).value).toBe(rx.url);
  }, 60_000);
});
