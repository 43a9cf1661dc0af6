import { describe, expect, test } from 'vitest';
import { callItems, eventItem, finished } from '../../../../proxy-core/src/broker/otlp/mapping.js';
import type { CallRecord } from '../../../../proxy-core/src/protocol/api.js';

const record = (over: Partial<CallRecord> = {}): CallRecord => ({
  id: 'c-1',
  sessionId: 's-1',
  client: 'claude',
  server: 'fs',
  tool: 'write_file',
  arguments: '{"path":"/tmp/x","content":"secret"}',
  argsTruncated: false,
  argsBytes: 36,
  argsSha256: 'a'.repeat(64),
  class: 'mutating',
  reasons: [],
  decision: 'allow',
  decidedBy: 'rule',
  detail: '',
  outcome: 'ok',
  result: '{"content":[]}',
  resultBytes: 14,
  startedAt: 1_000,
  finishedAt: 1_250,
  ...over,
});

describe('mapping a call to OTLP', () => {
  test('a span named and attributed after the MCP conventions, without content by default', () => {
    const [span, log] = callItems(record(), false);
    expect(span.name).toBe('tools/call write_file');
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'write_file',
      'gen_ai.operation.name': 'execute_tool',
      'mcp.session.id': 's-1',
      'airlock.decision': 'allow',
      'airlock.decided_by': 'rule',
      'airlock.arguments.sha256': 'a'.repeat(64),
      'airlock.arguments.bytes': 36,
      'airlock.result.bytes': 14,
    });
    expect(span.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(span.attributes['gen_ai.tool.call.result']).toBeUndefined();
    expect(JSON.stringify([span, log])).not.toContain('secret');
    expect([span.start, span.end]).toEqual([1_000, 1_250]);
    expect(span.status.code).toBe(1);
    expect(log).toMatchObject({ eventName: 'airlock.call', traceId: span.traceId, spanId: span.spanId, severity: 9 });
  });

  test('content is sent only when asked for', () => {
    const [span] = callItems(record(), true);
    expect(span.attributes['gen_ai.tool.call.arguments']).toContain('secret');
    expect(span.attributes['gen_ai.tool.call.result']).toBe('{"content":[]}');
  });

  test("a call carrying the client's traceparent is a child of the client's span", () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const [span] = callItems(record({ traceparent: tp }), false);
    expect(span.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(span.parentSpanId).toBe('b7ad6b7169203331');
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span.spanId).not.toBe('b7ad6b7169203331');
  });

  test('the same call mapped twice is the same span (a resent batch does not make a second one)', () => {
    const [a] = callItems(record(), false);
    const [b] = callItems(record(), false);
    const [c] = callItems(record({ id: 'c-2' }), false);
    expect([a.traceId, a.spanId]).toEqual([b.traceId, b.spanId]);
    expect(c.spanId).not.toBe(a.spanId);
  });

  test('a refused call is an error span with the reason, and a warning log', () => {
    const [span, log] = callItems(record({ decision: 'deny', decidedBy: 'estop', outcome: 'not-run', detail: 'E-Stop is on' }), false);
    expect(span.status).toEqual({ code: 2, message: 'E-Stop is on' });
    expect(span.attributes['error.type']).toBe('airlock.denied');
    expect(log.severityText).toBe('WARN');
  });

  test('only a call that ended is exported', () => {
    expect(finished(record({ outcome: 'pending' }))).toBe(false);
    expect(finished(record())).toBe(true);
  });
});

describe('mapping an event to OTLP', () => {
  test("a held call's arguments stay out of the export unless content is on", () => {
    const event = { seq: 7, at: 5, type: 'ticket-created', server: 'fs', tool: 'write_file', detail: { ticket: { id: 't-1', arguments: { content: 'secret' }, argsSha256: 'b'.repeat(64) } } };
    const off = eventItem(event, false)!;
    expect(off.eventName).toBe('airlock.ticket-created');
    expect(off.attributes['airlock.event.detail']).not.toContain('secret');
    expect(off.attributes['airlock.event.detail']).toContain('b'.repeat(64));
    expect(eventItem(event, true)!.attributes['airlock.event.detail']).toContain('secret');
  });

  test('call events are left to the journal feed', () => {
    expect(eventItem({ seq: 1, at: 1, type: 'call', server: 'fs', tool: 't', detail: {} }, false)).toBeNull();
  });
});
