/**
 * The broker's events as a typed union: each `type` with the shape of its `detail`. Every one is a row of the
 * events table (its `seq` orders the stream) and is what `airlock events --follow` prints and a UI subscribes to.
 */
import type { CallRecord, FileTool, LogGap, Remember, Rule, SessionInfo, Ticket, UnsealedRow } from './api.js';
import type { FrontEndKind, PeerInfo, Via } from './presence.js';
import type { DeclaredInverse, UndoInfo, UndoReport } from './undo-api.js';

/** What a `call` event says of a call (the arguments and the result stay in the journal). */
export type CallSummary = Pick<
  CallRecord,
  'id' | 'sessionId' | 'client' | 'server' | 'tool' | 'class' | 'decision' | 'decidedBy' | 'outcome' | 'ticketId' | 'startedAt' | 'finishedAt' | 'durationMs'
>;

/**
 * A call's summary exactly as the journal writes it into its `call` event (broker/store.ts): what the call does
 * not have (a ticket, an end, a server time) is null there rather than absent.
 */
export type StoredCallSummary = Omit<CallSummary, 'ticketId' | 'finishedAt' | 'durationMs'> & {
  ticketId: string | null;
  finishedAt: number | null;
  durationMs: number | null;
};

/** A change a client config watcher saw (see clients/watch.ts). */
export interface ConfigEventDetail {
  client?: string;
  path?: string;
  server?: string;
  transport?: string;
  protected?: boolean;
  unprotectable?: string;
  error?: string;
  /** Who made the change when it was not the config watcher: a front end through the broker's API. */
  via?: 'api';
  /** server-warning: what is wrong with the entry (another launcher, another data dir, loosening flags). */
  warning?: string;
  /** server-protected: wrapped again by auto-protect after someone unwrapped it. */
  again?: true;
  /** server-unprotected: by `airlock unprotect` (the person's choice, which auto-protect keeps). */
  kept?: true;
}

export interface EventDetails {
  'ticket-created': { ticket: Ticket };
  'ticket-unwaited': { ticketId: string; at: number };
  'session-allow-revoked': { sessionId: string; client: string };
  'ticket-ended': { ticketId: string; resolution: string; reason: string | null; remember: Remember | null };
  call: CallSummary;
  /** Who engaged E-Stop: a person (any front end), or the tripwire, which says why (`31 changing calls in 10 s`). */
  'estop-on': { by: 'user' | 'tripwire'; reason?: string };
  'estop-off': Record<string, never>;
  'session-up': { session: SessionInfo };
  'session-down': { sessionId: string; client: string };
  classified: { tools: number; byClass: Record<string, number>; problems: string[] };
  'read-only-claim-withdrawn': { evidence: string; client: string };
  'output-schema-mismatch': { errors: string[]; client: string };
  'rule-added': Rule;
  'rule-removed': { id: string; ended?: string };
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
  /** A write the disk refused (full, failing): calls are refused until it takes writes again; E-Stop still holds. */
  'disk-full': { error: string };
  'disk-ok': Record<string, never>;
  /** Journal entries no copy of survived (`executed`: of calls that reached their server), and why. */
  'journal-lost': { executed: number; notRun: number; client?: string; reason: string };
  /** A spill file a wrapper that is gone left behind was taken into the journal (or set aside, with `error`). */
  'spill-taken': { file: string; entries: number; error?: string };
  'server-added': ConfigEventDetail;
  'server-protected': ConfigEventDetail;
  'protect-failed': ConfigEventDetail;
  'server-unprotected': ConfigEventDetail;
  'config-error': ConfigEventDetail;
  'server-warning': ConfigEventDetail;
  /** A wrapper asked for loosening flags the person has not chosen: its session runs without them. */
  'wrap-flags-ignored': { client: string; flags: string[]; reason: string };
  /** A user's declaration that a tool writes files (previews read the file it names). */
  'file-tool-set': FileTool;
  'file-tool-removed': { server: string; tool: string };
  /** An undo ran (or was refused on a conflict, or left residue): what it put back and what it could not. */
  undo: UndoReport;
  /** A session rolled back: how many of its calls were undone, failed, or could not be undone. */
  rollback: { sessionId: string; undone: number; failed: number; skipped: number };
  /** Snapshots of the oldest calls removed to keep snapshots under their cap (those calls can no longer be undone). */
  'snapshots-pruned': { records: number; callIds: string[]; blobs: number; bytes: number };
  /** What undo can do for a call that just ended is known (its snapshot kept, or its inverse planned): its history entry's `undo`. */
  'undo-known': { callId: string; undo: UndoInfo };
  /** A snapshot read before its call could not be stored: that call cannot be undone (the next one waits for its own). */
  'snapshot-failed': { callId: string; error: string };
  /** An inverse declared for a tool (`via`: a front end's `inverses.set`). */
  'inverse-declared': DeclaredInverse & { via: 'api' };
  'inverse-removed': { server: string; tool: string };
  /** A declared inverse refused (a wrapper's `--undo` that does not fit the server's tools, or cannot be meant). */
  'inverse-refused': { spec: string; problems: string[]; client: string };
  /** A tool listed after the server's first listing (pinned as it is; `returned`: it had been removed). */
  'tool-added': { client: string; fingerprint: string; returned?: true };
  /** A tool the server's last listing had and this one does not (its pin is kept). */
  'tool-removed': { client: string };
  /** A tool listed with a definition other than its pin: held until accepted (the diff cut to a few KB). */
  'tool-changed': { client: string; fields: string[]; pinned: string; current: string; diff: string };
  /** The user accepted a tool's new definition: it is the pin now. */
  'pin-accepted': { fingerprint: string; previous: string; fields: string[] };
  /** A loosening call went through: what it allowed, and the proof (or lease, or --no-presence) behind it. */
  loosened: { method: string; statement: string; via: Via };
  /** A loosening call refused for want of a proof (or with one that did not verify); reported once per 10 s per kind of front end, program and method. */
  'presence-refused': { method: string; statement: string; channel: FrontEndKind; reason: string; peer?: PeerInfo };
  /** The broker runs without presence proofs (`airlock daemon --no-presence`); `after`: proofs were in use before. */
  'presence-off': { after: boolean };
  /** Every presence lease ended (the screen locked, or a person asked). */
  'presence-leases-ended': { leases: number; channel: FrontEndKind };
  /** A person confirmed with a proof that the broker runs without presence proofs. */
  'presence-confirmed': { via: Via };
  'passkey-registered': { id: string; name: string; first: boolean; via: Via };
  'passkey-removed': { id: string; name: string; via: Via };
  /** A passkey row without a good seal (written in while the broker was stopped): not believed, said at start. */
  'passkey-ignored': { id: string; name: string };
  /** Rows found at start without a good seal: loosening ones ignored, tightening ones applied (reported once per start). */
  'unsealed-rows': { rows: UnsealedRow[] };
  /** Tightening rows that had gone from the database (or were changed), put back from their sealed record. */
  'tightening-restored': { rows: string[]; manifestMissing?: true };
  /** Journal rows gone that retention did not delete: `missing` in the middle, `backwards` at the top. */
  'journal-gap': LogGap;
  'events-gap': LogGap;
  /** The team policy file was read and is in force (broker/managed/). */
  'managed-policy-loaded': { path: string; rules: number; settings: string[]; deniedServers: number; forbiddenGrants: number };
  /** The team policy file was refused (`line`: where it is wrong); `kept`: the policy before it still holds. */
  'managed-policy-refused': { path: string; line: number | null; error: string; kept: boolean };
  /** The team policy file is gone: no team policy holds. */
  'managed-policy-ended': Record<string, never>;
  /** A server the team policy denies was started: every call it is sent is refused. */
  'managed-server-denied': { client: string; reason: string };
  /** The audit export's queue was full: records not kept for the collector (`total`: every one dropped so far). */
  'otlp-dropped': { dropped: number; max: number; total: number };
}

export type EventType = keyof EventDetails;

export type TypedBrokerEvent = {
  [K in EventType]: { seq: number; at: number; type: K; server: string | null; tool: string | null; detail: EventDetails[K] };
}[EventType];

/** A journaled call's `call` event, as the journal writes it (what broker/store.ts writeJournal returns). */
export type CallEvent = Omit<Extract<TypedBrokerEvent, { type: 'call' }>, 'detail'> & { detail: StoredCallSummary };
