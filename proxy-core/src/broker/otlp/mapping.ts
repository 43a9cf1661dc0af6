/**
 * What the audit export sends, mapped from the broker's journal and events: a finished call is one span and one
 * log record, every other event one log record. Names follow the OpenTelemetry semantic conventions for MCP and
 * GenAI tool execution where they exist (`mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`,
 * `mcp.session.id`, `error.type`, opt-in `gen_ai.tool.call.arguments`/`.result`); what is Airlock's own (the
 * decision, who made it, the class) is under `airlock.*`.
 *
 * Ids are derived from the call's id, so a record sent twice (a retry after a lost answer) is the same span, and
 * a call whose request carried a W3C `traceparent` in `_meta` is a child of the client's span.
 */
import { createHash } from 'node:crypto';
import type { BrokerEvent, CallRecord } from '../../protocol/api.js';
import { parseTraceparent } from '../../protocol/trace-context.js';

export type Attr = string | number | boolean;

export interface SpanItem {
  s: 'span';
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  sampled: boolean;
  name: string;
  start: number;
  end: number;
  attributes: Record<string, Attr>;
  /** OTLP status: 1 ok, 2 error. */
  status: { code: 1 | 2; message?: string };
}

export interface LogItem {
  s: 'log';
  time: number;
  eventName: string;
  severity: number;
  severityText: string;
  body: string;
  attributes: Record<string, Attr>;
  traceId?: string;
  spanId?: string;
}

/** `skip`: a queued row that could not be read back (never sent, only acknowledged). */
export type OtlpItem = SpanItem | LogItem | { s: 'skip' };

/** OTLP severity numbers (logs data model). */
const INFO = 9;
const WARN = 13;

/** What an event's detail may carry as attribute text at most; the rest is cut (the journal keeps it whole). */
const DETAIL_MAX = 4096;
/** Arguments or a result sent as content (opt-in) are cut here too. */
const CONTENT_MAX = 16_384;

function hex(seed: string, chars: number): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, chars);
}

/** Whether a journal entry is the call's last: it ended (ran, was refused, was cancelled). */
export function finished(record: CallRecord): boolean {
  return record.outcome !== 'pending';
}

export function callItems(record: CallRecord, content: boolean): [SpanItem, LogItem] {
  const key = `${record.sessionId ?? ''}\u0000${record.id}`;
  const parent = record.traceparent ? parseTraceparent(record.traceparent) : null;
  const traceId = parent?.traceId ?? hex(`trace\u0000${key}`, 32);
  const spanId = hex(`span\u0000${key}`, 16);
  const attributes: Record<string, Attr> = {
    'mcp.method.name': 'tools/call',
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': record.tool,
    'network.transport': 'pipe',
    'airlock.call.id': record.id,
    'airlock.server': record.server,
    'airlock.client': record.client,
    'airlock.decision': record.decision,
    'airlock.decided_by': record.decidedBy,
    'airlock.outcome': record.outcome,
    'airlock.tool.class': record.class,
  };
  if (record.sessionId) attributes['mcp.session.id'] = record.sessionId;
  if (record.ticketId) attributes['airlock.ticket.id'] = record.ticketId;
  // the wrapper's hash (of the canonical JSON; what a held ticket matches on) exists only for calls that asked;
  // every call also gets the hash of its arguments' text as the journal holds it
  if (record.argsSha256) attributes['airlock.arguments.sha256'] = record.argsSha256;
  attributes['airlock.arguments.journal_sha256'] = createHash('sha256').update(record.arguments).digest('hex');
  if (record.argsBytes !== undefined) attributes['airlock.arguments.bytes'] = record.argsBytes;
  if (record.resultBytes !== undefined) attributes['airlock.result.bytes'] = record.resultBytes;
  if (record.durationMs !== undefined) attributes['airlock.server.duration_ms'] = record.durationMs;
  if (record.detail) attributes['airlock.detail'] = record.detail.slice(0, DETAIL_MAX);
  const error = errorType(record);
  if (error) attributes['error.type'] = error;
  if (content) {
    attributes['gen_ai.tool.call.arguments'] = record.arguments.slice(0, CONTENT_MAX);
    if (record.result !== undefined) attributes['gen_ai.tool.call.result'] = record.result.slice(0, CONTENT_MAX);
  }
  const end = record.finishedAt ?? record.decidedAt ?? record.startedAt;
  const span: SpanItem = {
    s: 'span',
    traceId,
    spanId,
    ...(parent ? { parentSpanId: parent.spanId } : {}),
    sampled: parent?.sampled ?? true,
    // the conventions' span name: "{mcp.method.name} {gen_ai.tool.name}"
    name: `tools/call ${record.tool}`,
    start: record.startedAt,
    end: Math.max(end, record.startedAt),
    attributes,
    status: error ? { code: 2, message: record.detail.slice(0, DETAIL_MAX) || error } : { code: 1 },
  };
  const log: LogItem = {
    s: 'log',
    time: end,
    eventName: 'airlock.call',
    severity: record.decision === 'deny' ? WARN : INFO,
    severityText: record.decision === 'deny' ? 'WARN' : 'INFO',
    body: `${record.decision} ${record.server}/${record.tool} (${record.decidedBy}): ${record.outcome}`,
    // the event's name also as an attribute: a collector on an OTLP version before LogRecord.event_name keeps it
    attributes: { ...attributes, 'airlock.event.type': 'call' },
    traceId,
    spanId,
  };
  return [span, log];
}

/** The conventions' `error.type` for a call that did not end well; none for one that ran and answered. */
function errorType(record: CallRecord): string | undefined {
  if (record.decision === 'deny') return 'airlock.denied';
  if (record.outcome === 'tool-error') return 'tool_error';
  if (record.outcome === 'rpc-error') return 'jsonrpc_error';
  if (record.outcome === 'cancelled' || record.outcome === 'unknown') return record.outcome;
  return undefined;
}

/** Events that are not calls (those come as spans from the journal): a person's decision, E-Stop, a rule, ... */
export function eventItem(event: BrokerEvent, content: boolean): LogItem | null {
  if (event.type === 'call') return null;
  const detail = content ? event.detail : withoutContent(event.detail);
  const attributes: Record<string, Attr> = { 'airlock.event.type': event.type, 'airlock.event.seq': event.seq };
  if (event.server !== null) attributes['airlock.server'] = event.server;
  if (event.tool !== null) attributes['gen_ai.tool.name'] = event.tool;
  const text = JSON.stringify(detail ?? null);
  attributes['airlock.event.detail'] = text.length > DETAIL_MAX ? `${text.slice(0, DETAIL_MAX)}…` : text;
  const warn = WARNING_EVENTS.has(event.type);
  return {
    s: 'log',
    time: event.at,
    eventName: `airlock.${event.type}`,
    severity: warn ? WARN : INFO,
    severityText: warn ? 'WARN' : 'INFO',
    body: event.type,
    attributes,
  };
}

const WARNING_EVENTS = new Set(['estop-on', 'presence-refused', 'disk-full', 'journal-lost', 'tool-changed', 'unsealed-rows', 'tightening-restored', 'journal-gap', 'events-gap', 'otlp-dropped', 'managed-policy-refused']);

/** A held call's arguments (a ticket's) and results are content: off by default, hashes and sizes stay. */
function withoutContent(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutContent);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'arguments' || k === 'result') out[k] = '(not exported)';
    else out[k] = withoutContent(v);
  }
  return out;
}
