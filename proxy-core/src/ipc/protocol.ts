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
}

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
  arguments: unknown;
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
  arguments: unknown;
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
