/**
 * One tools/call, as one record from the moment the wrapper read it to its journal entry: what was asked,
 * the verdict, the decision and what made it, the ticket, the outcome and when each step happened. Every
 * stage of the pipeline marks the same object, and every view (hooks, E-Stop, the journal) reads it.
 *
 * Its life is an explicit state machine; a transition that is not in the table is a bug and throws (the
 * pipeline turns that into a denial, never a forwarded call).
 */
import type { Verdict } from '../classify/classify.js';
import { argumentsHash } from '../jsonrpc/canonical.js';
import type { JsonRpcId, Message } from '../jsonrpc/messages.js';
import type { DecidedBy } from '../policy/decide.js';
import type { CallRecord, Outcome } from '../protocol/api.js';
import { LIMITS } from '../protocol/limits.js';
import { type Shown, shownArguments } from './capture.js';
import type { InternalSink } from './internal-call.js';

/**
 * deciding: classify and policy (may wait for the tool list or the broker) · asking: a ticket waits for a
 * human · preparing: allowed, the pre-forward hooks run · forwarded: the server has it · done: ended.
 */
export type CallState = 'deciding' | 'asking' | 'preparing' | 'forwarded' | 'done';

const NEXT: Record<CallState, readonly CallState[]> = {
  deciding: ['asking', 'preparing', 'done'],
  asking: ['preparing', 'done'],
  preparing: ['forwarded', 'done'],
  forwarded: ['done'],
  done: [],
};

/** What hooks and front ends may read of a call (the pipeline alone changes it). */
export interface CallView {
  /** The wrapper's id for the call (the journal entry's id). */
  readonly callId: string;
  /** The client's JSON-RPC id. */
  readonly id: JsonRpcId;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly state: CallState;
  readonly verdict: Verdict | undefined;
  readonly decidedBy: DecidedBy | undefined;
  readonly ticketId: string | undefined;
  readonly startedAt: number;
  /** Aborted when the call ends before it was forwarded (cancelled, denied, E-Stop): a slow hook can stop early. */
  readonly signal: AbortSignal;
}

export interface CallInit {
  id: JsonRpcId;
  key: string;
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  message: Message;
  progressToken: string | number | undefined;
  startedAt: number;
  startedMono: number;
  /** A call of Airlock's own (an undo's inverse): its answer goes here, not to the client. */
  internal?: InternalSink;
}

export class Call implements CallView {
  readonly id: JsonRpcId;
  /** The id as a map key (1 and "1" differ). */
  readonly key: string;
  readonly callId: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The parsed request: what the gate judged is what the server is sent (re-serialised, never the client's bytes). */
  readonly message: Message;
  readonly progressToken: string | number | undefined;
  readonly startedAt: number;
  readonly startedMono: number;
  readonly internal: InternalSink | undefined;

  private current: CallState = 'deciding';
  verdict: Verdict | undefined;
  decision: 'allow' | 'deny' | undefined;
  decidedBy: DecidedBy | undefined;
  detail = '';
  ticketId: string | undefined;
  outcome: Outcome = 'pending';
  askedAt: number | undefined;
  decidedAt: number | undefined;
  forwardedAt: number | undefined;
  finishedAt: number | undefined;
  durationMs: number | undefined;
  result: Shown | undefined;
  /** Forwarded as a read-only class: a resource change while it runs is evidence against the claim. */
  readOnly = false;
  /** The broker was waited for once already (a second time it is down). */
  waitedBroker = false;
  /** The client cancelled it after it was forwarded. */
  cancelled = false;
  /** The client already has its answer (ended while running); the server's late one is journaled, not relayed. */
  answered = false;
  private forwardedMono: number | undefined;
  private shown: Shown | undefined;
  private sha: string | undefined;
  private abort: AbortController | undefined;

  constructor(init: CallInit) {
    this.id = init.id;
    this.key = init.key;
    this.callId = init.callId;
    this.tool = init.tool;
    this.args = init.args;
    this.message = init.message;
    this.progressToken = init.progressToken;
    this.startedAt = init.startedAt;
    this.startedMono = init.startedMono;
    this.internal = init.internal;
  }

  get state(): CallState {
    return this.current;
  }

  /** Move to `next`; throws on a transition the table does not allow. */
  to(next: CallState): void {
    if (!NEXT[this.current].includes(next)) throw new Error(`call ${this.callId} cannot go from ${this.current} to ${next}`);
    this.current = next;
    if (next === 'done' && this.forwardedAt === undefined) this.abort?.abort(this.endReason());
  }

  /** Made lazily: most calls have no hook that would listen. */
  get signal(): AbortSignal {
    if (!this.abort) {
      this.abort = new AbortController();
      if (this.current === 'done' && this.forwardedAt === undefined) this.abort.abort(this.endReason());
    }
    return this.abort.signal;
  }

  private endReason(): Error {
    return new Error(this.detail || 'the call ended before it was sent to the server');
  }

  markForwarded(at: number, mono: number): void {
    this.forwardedAt = at;
    this.forwardedMono = mono;
  }

  markFinished(at: number, mono: number): void {
    this.finishedAt = at;
    if (this.forwardedMono !== undefined) this.durationMs = Math.round((mono - this.forwardedMono) * 1000) / 1000;
  }

  /** The arguments as shown and journaled (cut at the limit), computed once. */
  argsShown(): Shown {
    this.shown ??= shownArguments(this.args);
    return this.shown;
  }

  /** sha256 of the arguments' canonical JSON: what "the same call" means for a held ticket. */
  argsSha256(): string {
    this.sha ??= argumentsHash(this.args);
    return this.sha;
  }

  /** The journal entry for this call as it stands now. */
  toRecord(client: string, server: string): CallRecord {
    const shown = this.argsShown();
    const record: CallRecord = {
      id: this.callId,
      client,
      server,
      tool: this.tool.slice(0, LIMITS.toolName),
      arguments: shown.text,
      argsTruncated: shown.truncated,
      argsBytes: shown.bytes,
      // the hash is what a held ticket matches on; a call that never asked is not hashed just for the journal
      ...(this.sha !== undefined ? { argsSha256: this.sha } : {}),
      class: this.verdict?.class ?? 'unclassifiable',
      // a call of Airlock's own says first what it is and who asked for it
      reasons: this.internal ? [this.internal.note, ...(this.verdict?.reasons ?? [])] : (this.verdict?.reasons ?? []),
      decision: this.decision ?? 'deny',
      decidedBy: this.decidedBy ?? 'error',
      detail: this.detail.slice(0, LIMITS.detail),
      outcome: this.outcome,
      startedAt: this.startedAt,
    };
    if (this.ticketId !== undefined) record.ticketId = this.ticketId;
    if (this.result) {
      record.result = this.result.text;
      record.resultTruncated = this.result.truncated;
      record.resultBytes = this.result.bytes;
    }
    if (this.askedAt !== undefined) record.askedAt = this.askedAt;
    if (this.decidedAt !== undefined) record.decidedAt = this.decidedAt;
    if (this.forwardedAt !== undefined) record.forwardedAt = this.forwardedAt;
    if (this.finishedAt !== undefined) record.finishedAt = this.finishedAt;
    if (this.durationMs !== undefined) record.durationMs = this.durationMs;
    return record;
  }
}
