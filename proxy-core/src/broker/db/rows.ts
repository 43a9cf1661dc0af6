/**
 * Rows of journal_calls and event_log (migration 10) read back as what they stood for: name ids as their
 * text, the arguments' hash as hex, times kept after the start (migration 11, times.ts) as whole times, and a
 * call's event (its summary kept as columns) as the CallSummary it was written from, keys in the order
 * JSON.stringify gave them before.
 */
import type { BrokerEvent } from '../../protocol/api.js';
import type { Names } from './names.js';
import { brokerEvent, type Row } from './queries.js';
import { fromStart } from './times.js';

/** Whether `s` is 64 lowercase hex digits (a loop: a regex here cost several per cent of a journal write). */
function isHexHash(s: string): boolean {
  if (s.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** A SHA-256 in hex as its 32 bytes; anything else (never written by Airlock, but possible) as it is. */
export function hashBytes(hex: string | undefined): Buffer | string | null {
  if (hex === undefined) return null;
  return isHexHash(hex) ? Buffer.from(hex, 'hex') : hex;
}

function hashText(v: unknown): unknown {
  return Buffer.isBuffer(v) ? v.toString('hex') : v;
}

/** A journal_calls row in the journal's old shape (as queries.ts historyItem reads it); changes `r`. */
export function callRow(r: Row, names: Names): Row {
  r.session_id = names.name(r.session);
  r.client = names.name(r.client);
  r.server = names.name(r.server);
  r.tool = names.name(r.tool);
  r.class = names.name(r.class);
  r.reasons = names.name(r.reasons);
  r.decision = names.name(r.decision);
  r.decided_by = names.name(r.decided_by);
  r.outcome = names.name(r.outcome);
  r.args_sha256 = hashText(r.args_sha256);
  r.asked_at = fromStart(r.started_at, r.asked_after);
  r.decided_at = fromStart(r.started_at, r.decided_after);
  r.forwarded_at = fromStart(r.started_at, r.forwarded_after);
  r.finished_at = fromStart(r.started_at, r.finished_after);
  return r;
}

/** An event_log row as the BrokerEvent it was stored from. */
export function eventFromRow(r: Row, names: Names): BrokerEvent {
  const server = names.name(r.server);
  const tool = names.name(r.tool);
  const kind = names.name(r.kind);
  if (r.detail !== null || r.call_id === null) return brokerEvent({ seq: r.seq, at: r.at, kind, server, tool, detail: r.detail });
  const sessionId = names.name(r.session);
  const detail = {
    id: r.call_id,
    ...(sessionId !== null ? { sessionId } : {}),
    client: names.name(r.client),
    server,
    tool,
    class: names.name(r.class),
    decision: names.name(r.decision),
    decidedBy: names.name(r.decided_by),
    outcome: names.name(r.outcome),
    ticketId: r.ticket_id ?? null,
    startedAt: r.started_at ?? null,
    finishedAt: fromStart(r.started_at, r.finished_after),
    durationMs: r.duration_ms ?? null,
  };
  return { seq: Number(r.seq), at: Number(r.at), type: String(kind), server, tool, detail };
}
