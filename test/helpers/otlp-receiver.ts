/**
 * A local OTLP/HTTP receiver for tests: it takes /v1/traces and /v1/logs as a collector does (protobuf or JSON)
 * and decodes protobuf with OpenTelemetry's own generated definitions of the OTLP messages (the protobufjs
 * classes that @opentelemetry/otlp-transformer 0.57 shipped), so what the export encodes is read by another
 * implementation than the one that wrote it. `down()` answers 503 until `up()`.
 */
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-require-imports
const root = require('otlp-proto-0.57/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: Record<'trace' | 'logs', { v1: Record<string, { decode(b: Uint8Array): unknown; toObject(m: unknown, o: unknown): unknown }> }> } };
};

export interface KeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}
export interface ReceivedLog {
  eventName: string;
  body: string;
  severityNumber: number;
  traceId: string;
  spanId: string;
  attributes: Record<string, unknown>;
}

const OBJECT = { longs: String, enums: Number, bytes: String, defaults: true };

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = kv.value.stringValue ?? (kv.value.intValue !== undefined ? Number(kv.value.intValue) : (kv.value.boolValue ?? kv.value.doubleValue));
  return out;
}
const b64hex = (s: string): string => Buffer.from(s, 'base64').toString('hex');

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  logs: ReceivedLog[];
  resources: Record<string, unknown>[];
  requests: { path: string; headers: Record<string, string | string[] | undefined> }[];
  down(): void;
  up(): void;
  /** Resolves once `check` holds for what was received (polled as requests arrive). */
  until(check: (r: OtlpReceiver) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<OtlpReceiver> {
  let failing = false;
  const waiters = new Set<() => void>();
  const r = { spans: [], logs: [], resources: [], requests: [] } as unknown as OtlpReceiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.requests.push({ path: req.url ?? '', headers: req.headers });
      if (failing) {
        res.writeHead(503).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const json = req.headers['content-type'] === 'application/json';
      const signal = req.url === '/v1/traces' ? 'trace' : req.url === '/v1/logs' ? 'logs' : null;
      if (!signal) {
        res.writeHead(404).end();
        return;
      }
      const type = signal === 'trace' ? 'ExportTraceServiceRequest' : 'ExportLogsServiceRequest';
      const cls = root.opentelemetry.proto.collector[signal].v1[type]!;
      const msg = (json ? JSON.parse(body.toString('utf8')) : cls.toObject(cls.decode(body), OBJECT)) as Record<string, { resource: { attributes: KeyValue[] }; scopeSpans?: { spans: Record<string, unknown>[] }[]; scopeLogs?: { logRecords: Record<string, unknown>[] }[] }[]>;
      const id = (s: unknown): string => (typeof s !== 'string' || s === '' ? '' : json ? s : b64hex(s));
      for (const rs of msg.resourceSpans ?? msg.resourceLogs ?? []) {
        r.resources.push(attrs(rs.resource.attributes));
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans) r.spans.push({ traceId: id(s.traceId), spanId: id(s.spanId), parentSpanId: id(s.parentSpanId), name: s.name as string, kind: s.kind as number, attributes: attrs(s.attributes as KeyValue[]), status: s.status as ReceivedSpan['status'] });
        }
        for (const sl of rs.scopeLogs ?? []) {
          for (const l of sl.logRecords) {
            const a = attrs(l.attributes as KeyValue[]);
            // these definitions predate LogRecord.event_name: the export says it in an attribute too
            r.logs.push({ eventName: (l.eventName as string | undefined) ?? `airlock.${String(a['airlock.event.type'])}`, body: (l.body as { stringValue: string }).stringValue, severityNumber: l.severityNumber as number, traceId: id(l.traceId), spanId: id(l.spanId), attributes: attrs(l.attributes as KeyValue[]) });
          }
        }
      }
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf' }).end();
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  r.down = () => (failing = true);
  r.up = () => (failing = false);
  r.until = (check, timeoutMs = 15_000) =>
    new Promise<void>((resolve, reject) => {
      if (check(r)) return resolve();
      const timer = setTimeout(() => {
        waiters.delete(w);
        reject(new Error(`the receiver did not get what was awaited within ${timeoutMs} ms (${r.spans.length} spans, ${r.logs.length} logs)`));
      }, timeoutMs);
      const w = () => {
        if (!check(r)) return;
        clearTimeout(timer);
        waiters.delete(w);
        resolve();
      };
      waiters.add(w);
    });
  r.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return r;
}
