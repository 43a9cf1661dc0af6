/**
 * The broker's events as a typed union: each `type` with the shape of its `detail`. Every one is a row of the
 * events table (its `seq` orders the stream) and is what `airlock events --follow` prints and a UI subscribes to.
 */
import type { CallRecord, Remember, Rule, SessionInfo, Ticket } from './api.js';

/** What a `call` event says of a call (the arguments and the result stay in the journal). */
export type CallSummary = Pick<
  CallRecord,
  'id' | 'client' | 'server' | 'tool' | 'class' | 'decision' | 'decidedBy' | 'outcome' | 'ticketId' | 'startedAt' | 'finishedAt' | 'durationMs'
>;

/** A change a client config watcher saw (see clients/watch.ts). */
export interface ConfigEventDetail {
  client?: string;
  path?: string;
  server?: string;
  transport?: string;
  protected?: boolean;
  unprotectable?: string;
  error?: string;
}

export interface EventDetails {
  'ticket-created': { ticket: Ticket };
  'ticket-ended': { ticketId: string; resolution: string; reason: string | null; remember: Remember | null };
  call: CallSummary;
  'estop-on': Record<string, never>;
  'estop-off': Record<string, never>;
  'session-up': { session: SessionInfo };
  'session-down': { sessionId: string; client: string };
  classified: { tools: number; byClass: Record<string, number>; problems: string[] };
  'read-only-claim-withdrawn': { evidence: string; client: string };
  'output-schema-mismatch': { errors: string[]; client: string };
  'rule-added': Rule;
  'rule-removed': { id: string };
  'trust-on': Record<string, never>;
  'trust-off': Record<string, never>;
  'setting-changed': { key: string; value: string };
  'broker-restart': { orphanTickets: number };
  'journal-entry-refused': { error: string; client: string };
  'database-restored': Record<string, unknown>;
  'database-fresh': Record<string, unknown>;
  'database-backup-failed': { error: string };
  'config-watch-failed': { error: string };
  'retention-failed': { error: string };
  'server-added': ConfigEventDetail;
  'server-protected': ConfigEventDetail;
  'protect-failed': ConfigEventDetail;
  'server-unprotected': ConfigEventDetail;
  'config-error': ConfigEventDetail;
}

export type EventType = keyof EventDetails;

export type TypedBrokerEvent = {
  [K in EventType]: { seq: number; at: number; type: K; server: string | null; tool: string | null; detail: EventDetails[K] };
}[EventType];
