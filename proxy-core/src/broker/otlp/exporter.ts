/**
 * The audit export: every finished call (from the journal writer, after its commit) and every other broker event
 * (as a subscriber of the event stream) is sent to the OpenTelemetry collector the `otlp-endpoint` setting names,
 * as OTLP/HTTP logs and spans (mapping.ts, encode.ts). Nothing of it runs in the gate's path: the writer and the
 * stream only hand over references; mapping, the queue's writes and the sending run on a timer, in batches.
 * What is taken waits in the queue on disk (queue.ts) until the collector acknowledged it, so a collector that
 * is down, or a broker that restarts, loses nothing up to the queue's bound; past it records are counted as
 * dropped. Delivery is at least once: a batch whose answer was lost is sent again (spans keep their ids).
 */
import type { BrokerEvent, CallRecord } from '../../protocol/api.js';
import type { RecordEvent } from '../events.js';
import type { OtlpProtocol, Origin } from './encode.js';
import { parseHeaders } from './headers.js';
import { callItems, eventItem, finished, type LogItem, type OtlpItem, type SpanItem } from './mapping.js';
import type { OtlpQueue } from './queue.js';

export interface OtlpExporterOptions {
  queue: OtlpQueue;
  /** The collector's base URL ('' : export off); read at each batch, so a changed setting holds at once. */
  endpoint(): string;
  /** Whether arguments and results are exported (the otlp-content setting). */
  content(): boolean;
  /** The daemon's environment: OTEL_EXPORTER_OTLP_HEADERS (and _TRACES_/_LOGS_), OTEL_EXPORTER_OTLP_PROTOCOL. */
  env: Record<string, string | undefined>;
  record: RecordEvent;
  origin: Origin;
  /** How long taken records wait before they are mapped and queued (one transaction per batch). */
  flushMs?: number;
  /** Records per request. */
  batch?: number;
  /** Waits after a failed send: the first, doubled up to the last. */
  retryMs?: { first: number; max: number };
  /** One request's limit. */
  timeoutMs?: number;
}

export interface OtlpStatus {
  endpoint: string;
  protocol: OtlpProtocol;
  queued: number;
  max: number;
  dropped: number;
  sent: number;
  lastError: string | null;
}

type Taken = { call: CallRecord } | { event: BrokerEvent };

export class OtlpExporter {
  private taken: Taken[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private sending = false;
  private stopped = false;
  private full = false;
  private retryWait: number;
  private lastError: string | null = null;
  readonly protocol: OtlpProtocol;
  private readonly headers: { traces: Record<string, string>; logs: Record<string, string> };

  constructor(private readonly o: OtlpExporterOptions) {
    this.protocol = o.env.OTEL_EXPORTER_OTLP_PROTOCOL === 'http/json' ? 'http/json' : 'http/protobuf';
    const common = parseHeaders(o.env.OTEL_EXPORTER_OTLP_HEADERS);
    this.headers = {
      traces: { ...common, ...parseHeaders(o.env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
      logs: { ...common, ...parseHeaders(o.env.OTEL_EXPORTER_OTLP_LOGS_HEADERS) },
    };
    this.retryWait = o.retryMs?.first ?? 500;
    // what a previous run queued and did not deliver goes first
    if (o.queue.size > 0) setImmediate(() => this.send());
  }

  /** Journal entries just committed: the finished ones are exported. */
  calls(records: readonly CallRecord[]): void {
    if (this.stopped || this.o.endpoint() === '') return;
    for (const call of records) if (finished(call)) this.taken.push({ call });
    this.schedule();
  }

  /** Events just committed (the export's subscription to the event stream). */
  events(events: readonly BrokerEvent[]): void {
    if (this.stopped || this.o.endpoint() === '') return;
    for (const event of events) if (event.type !== 'call') this.taken.push({ event });
    this.schedule();
  }

  /** A setting of the export changed: a new endpoint is tried now rather than after the last wait. */
  changed(): void {
    this.retryWait = this.o.retryMs?.first ?? 500;
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    void this.send();
  }

  status(): OtlpStatus {
    const counts = this.o.queue.counts();
    return { endpoint: this.o.endpoint(), protocol: this.protocol, queued: this.o.queue.size + this.taken.length, max: this.o.queue.max, dropped: counts.dropped, sent: counts.sent, lastError: this.lastError };
  }

  /** Queue what was taken (the broker is stopping: it is sent at the next start). */
  stop(): void {
    this.flush();
    this.stopped = true;
    for (const t of [this.flushTimer, this.retryTimer]) if (t) clearTimeout(t);
  }

  private schedule(): void {
    if (this.flushTimer || this.taken.length === 0) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flush();
      void this.send();
    }, this.o.flushMs ?? 50);
    this.flushTimer.unref();
  }

  /** Map what was taken and keep it in the queue, in one transaction. */
  flush(): void {
    if (this.taken.length === 0) return;
    const taken = this.taken;
    this.taken = [];
    const content = this.o.content();
    const items: OtlpItem[] = [];
    for (const t of taken) {
      if ('call' in t) items.push(...callItems(t.call, content));
      else {
        const log = eventItem(t.event, content);
        if (log) items.push(log);
      }
    }
    let dropped: number;
    try {
      dropped = this.o.queue.push(items);
    } catch (err) {
      // the database refused (a full disk): these are lost to the export, and counted as such
      dropped = items.length;
      this.lastError = `queue write failed: ${(err as Error).message}`;
    }
    if (dropped > 0 && !this.full) {
      this.full = true;
      this.o.record('otlp-dropped', null, null, { dropped, max: this.o.queue.max, total: this.o.queue.counts().dropped });
    } else if (dropped === 0 && this.full && this.o.queue.size < this.o.queue.max) this.full = false;
  }

  /** Send the queue's oldest batches until it is empty or the collector fails; one send at a time. */
  private async send(): Promise<void> {
    if (this.sending || this.stopped || this.retryTimer) return;
    const endpoint = this.o.endpoint().replace(/\/+$/, '');
    if (endpoint === '') return;
    this.sending = true;
    try {
      for (;;) {
        const batch = this.o.queue.peek(this.o.batch ?? 4000);
        if (!batch) break;
        const spans = batch.items.filter((item): item is SpanItem => item.s === 'span');
        const logs = batch.items.filter((item): item is LogItem => item.s === 'log');
        await this.post(endpoint, spans, logs);
        this.o.queue.ack(batch.seq, spans.length + logs.length);
        this.lastError = null;
        this.retryWait = this.o.retryMs?.first ?? 500;
        if (this.full && this.o.queue.size < this.o.queue.max) this.full = false;
      }
    } catch (err) {
      const cause = (err as Error & { cause?: { message?: string } }).cause?.message;
      this.lastError = cause ? `${(err as Error).message}: ${cause}` : (err as Error).message;
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        void this.send();
      }, this.retryWait);
      this.retryTimer.unref();
      this.retryWait = Math.min(this.retryWait * 2, this.o.retryMs?.max ?? 30_000);
    } finally {
      this.sending = false;
    }
  }

  private async post(endpoint: string, spans: SpanItem[], logs: LogItem[]): Promise<void> {
    const type = this.protocol === 'http/json' ? 'application/json' : 'application/x-protobuf';
    // loaded on the first send: a broker that exports nothing does not pay for the serializers at its start
    const { encodeLogs, encodeSpans } = await import('./encode.js');
    const one = async (path: string, body: Uint8Array, headers: Record<string, string>) => {
      const res = await fetch(`${endpoint}${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': type },
        body: new Uint8Array(body),
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) throw new Error(`${path}: the collector answered ${res.status}`);
    };
    // the two signals at once: a batch is acknowledged when both were taken
    await Promise.all([
      spans.length ? one('/v1/traces', encodeSpans(spans, this.o.origin, this.protocol), this.headers.traces) : undefined,
      logs.length ? one('/v1/logs', encodeLogs(logs, this.o.origin, this.protocol), this.headers.logs) : undefined,
    ]);
  }
}
