/**
 * OTLP request bodies, encoded by OpenTelemetry's own serializers (@opentelemetry/otlp-transformer), protobuf or
 * JSON. They take the SDK's span and log record shapes; the export builds only the fields they read (the SDK
 * itself is not needed: these records were made by the broker, not by a tracer).
 */
import { JsonLogsSerializer, JsonTraceSerializer, ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { LogItem, SpanItem } from './mapping.js';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

type SpansIn = Parameters<typeof ProtobufTraceSerializer.serializeRequest>[0];
type LogsIn = Parameters<typeof ProtobufLogsSerializer.serializeRequest>[0];

export interface Origin {
  service: string;
  version: string;
}

/** ms since the epoch as the SDK's HrTime ([seconds, nanoseconds]). */
function hrTime(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** One resource and one scope object per batch: the serializers group records by identity. */
function origin(o: Origin) {
  return {
    resource: { attributes: { 'service.name': o.service, 'service.version': o.version }, schemaUrl: undefined },
    instrumentationScope: { name: 'airlock.broker', version: o.version },
  };
}

export function encodeSpans(spans: readonly SpanItem[], o: Origin, protocol: OtlpProtocol): Uint8Array {
  const { resource, instrumentationScope } = origin(o);
  const sdk = spans.map((s) => ({
    name: s.name,
    // SpanKind.SERVER (the API's 1): Airlock answers the client's call, as the MCP server conventions describe
    kind: 1,
    spanContext: () => ({ traceId: s.traceId, spanId: s.spanId, traceFlags: s.sampled ? 1 : 0 }),
    parentSpanContext: s.parentSpanId ? { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: s.sampled ? 1 : 0, isRemote: true } : undefined,
    startTime: hrTime(s.start),
    endTime: hrTime(s.end),
    status: s.status,
    attributes: s.attributes,
    links: [],
    events: [],
    duration: hrTime(s.end - s.start),
    ended: true,
    resource,
    instrumentationScope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  })) as unknown as SpansIn;
  const serializer = protocol === 'http/json' ? JsonTraceSerializer : ProtobufTraceSerializer;
  return serializer.serializeRequest(sdk) ?? new Uint8Array();
}

export function encodeLogs(logs: readonly LogItem[], o: Origin, protocol: OtlpProtocol): Uint8Array {
  const { resource, instrumentationScope } = origin(o);
  const sdk = logs.map((l) => ({
    hrTime: hrTime(l.time),
    hrTimeObserved: hrTime(l.time),
    severityNumber: l.severity,
    severityText: l.severityText,
    body: l.body,
    eventName: l.eventName,
    attributes: l.attributes,
    droppedAttributesCount: 0,
    spanContext: l.traceId && l.spanId ? { traceId: l.traceId, spanId: l.spanId, traceFlags: 1 } : undefined,
    resource,
    instrumentationScope,
  })) as unknown as LogsIn;
  const serializer = protocol === 'http/json' ? JsonLogsSerializer : ProtobufLogsSerializer;
  return serializer.serializeRequest(sdk) ?? new Uint8Array();
}
