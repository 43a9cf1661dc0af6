/**
 * The shapes wrappers, front ends and the broker exchange. They are defined once, as schemas, in
 * `protocol/api.ts`; this module only names them for the code that imported them from here.
 */
import type { CallRecord, WrapperResultOf } from '../protocol/api.js';
import { LIMITS } from '../protocol/limits.js';

export type {
  AskAnswer,
  AskRequest,
  BrokerEvent,
  BrokerStatus,
  CallRecord,
  HistoryItem,
  Outcome,
  Remember,
  Rule,
  SessionInfo,
  SessionOpen,
  Ticket,
} from '../protocol/api.js';
export type { PolicySnapshot } from '../policy/decide.js';

export type SessionOpened = WrapperResultOf<'session.open'>;

/** One tools/call as the journal keeps it: the wrapper sends it at decision time and again with the outcome. */
export type JournalEntry = CallRecord;

export interface ObservedContradiction {
  tool: string;
  evidence: string;
}

/** The most of a call's arguments that a journal entry or a ticket keeps and shows. */
export const ARGS_SHOWN_MAX = LIMITS.argsShown;
