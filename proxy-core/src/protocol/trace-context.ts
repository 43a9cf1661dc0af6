/**
 * W3C trace context as MCP carries it: a client that traces its calls puts `traceparent` in the request's
 * `params._meta` (the OpenTelemetry conventions for MCP). The wrapper passes it on with the call's journal entry,
 * so the broker's audit export (broker/otlp/) joins the client's trace instead of starting a new one.
 */

/** version 00, a 16-byte trace id, an 8-byte parent span id, flags; ids of zeros are invalid (W3C). */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

export function isTraceparent(value: unknown): value is string {
  return typeof value === 'string' && TRACEPARENT.test(value);
}

/** The traceparent in a request's params (`_meta.traceparent`), when there is a well-formed one. */
export function traceparentOf(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  const meta = (params as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const value = (meta as { traceparent?: unknown }).traceparent;
  return isTraceparent(value) ? value : undefined;
}

export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

export function parseTraceparent(value: string): TraceParent | null {
  if (!isTraceparent(value)) return null;
  const [, traceId, spanId, flags] = value.split('-') as [string, string, string, string];
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}
