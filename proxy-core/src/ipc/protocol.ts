/**
 * What the wrapper, the CLI and the broker say to each other after the handshake. One place, so both ends
 * agree on shapes; the broker still checks every field it receives (a peer can be buggy or old).
 */
import type { ToolClass } from '../classify/classify.js';
import type { DecidedBy, PolicySnapshot } from '../policy/decide.js';
import type { Rule } from '../policy/rules.js';

export interface SessionOpen {
  client: string;
  server: string;
  command: string[];
  pid: number;
  trustFlag: boolean;
}

export interface SessionOpened {
  sessionId: string;
  policy: PolicySnapshot;
  /** How long the broker lets a ticket wait; the wrapper gives up on an ask a little after that. */
  ticketTimeoutSeconds?: number;
}

/**
 * The most of a call's arguments that a journal entry or a ticket keeps and shows (JSON text, in UTF-16 code
 * units). Past it the text is cut and marked; a ticket still carries the hash of the whole arguments.
 */
export const ARGS_SHOWN_MAX = 64 * 1024;

export type Outcome = 'pending' | 'ok' | 'tool-error' | 'rpc-error' | 'cancelled' | 'unknown' | 'not-run';

/** One tools/call as the journal keeps it. The wrapper sends it at decision time and again with the outcome. */
export interface JournalEntry {
  id: string;
  sessionId?: string;
  client: string;
  server: string;
  tool: string;
  /** JSON text of the arguments, cut at a size limit. */
  arguments: string;
  argsTruncated: boolean;
  class: ToolClass;
  reasons: string[];
  decision: 'allow' | 'deny';
  decidedBy: DecidedBy;
  detail: string;
  ticketId?: string;
  outcome: Outcome;
  startedAt: number;
  durationMs?: number;
}

export interface AskRequest {
  callId: string;
  tool: string;
  /** The arguments, or (when `argsTruncated`) the first ARGS_SHOWN_MAX characters of their JSON text. */
  arguments: unknown;
  argsTruncated?: boolean;
  /** Length of the whole arguments' JSON text. */
  argsBytes?: number;
  /** sha256 of the whole arguments' canonical JSON: what a decision about "this same call" matches on. */
  argsSha256?: string;
  class: ToolClass;
  reasons: string[];
}

export type Remember = 'once' | 'session' | 'always';

export interface AskAnswer {
  decision: 'allow' | 'deny';
  decidedBy: DecidedBy;
  ticketId: string;
  reason: string;
  remember?: Remember;
}

export interface Ticket {
  id: string;
  sessionId: string;
  client: string;
  server: string;
  tool: string;
  /** The arguments, or their JSON text cut at ARGS_SHOWN_MAX when `argsTruncated`. */
  arguments: unknown;
  argsTruncated: boolean;
  /** Length of the whole arguments' JSON text. */
  argsBytes: number;
  argsSha256: string;
  class: ToolClass;
  reasons: string[];
  createdAt: number;
}

export interface ObservedContradiction {
  tool: string;
  evidence: string;
}

export interface SessionInfo {
  id: string;
  client: string;
  server: string;
  command: string[];
  pid: number;
  since: number;
}

export interface BrokerStatus {
  estop: boolean;
  pending: number;
  sessions: SessionInfo[];
  dataDir: string;
  pid: number;
  ticketTimeoutSeconds: number;
}

export interface HistoryItem extends JournalEntry {
  kind: 'call';
}

export interface EventItem {
  kind: 'event';
  at: number;
  event: string;
  server: string | null;
  tool: string | null;
  detail: unknown;
}

export type { Rule, PolicySnapshot };
