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
import type { Outcome } from '../protocol/api.js';
import { type Clock, monotonic, systemClock } from '../util/clock.js';
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

/** The states in which a call has not been sent to the server yet. */
export const UNSENT: ReadonlySet<CallState> = new Set(['deciding', 'asking', 'preparing']);

/**
 * How a forwarded call's run ended: the server answered, the server went away before answering, or the task
 * the server made of it ended (tasks.ts).
 */
export interface RunEnd {
  by: 'server' | 'gone' | 'task';
  outcome: Outcome;
  /** Appended to the call's detail. */
  note?: string | undefined;
}

/**
 * When an outcome a call already has stands against the one its run ended with. What the server did is the
 * outcome (a result that arrived is ok or a tool error, whatever E-Stop or the client did meanwhile), except:
 * an error answer to a call ended or cancelled while running leaves it so; a server gone before answering
 * leaves a call already answered to its client as it was; a task's end fills in only what is still pending.
 */
const KEEPS: Record<RunEnd['by'], (call: Call, outcome: Outcome) => boolean> = {
  server: (call, outcome) => outcome === 'rpc-error' && (call.answered || call.cancelled),
  gone: (call) => call.answered,
  task: (call) => call.outcome !== 'pending',
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
  /** What its times are read from (the system's unless a test says otherwise). */
  clock?: Clock;
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
  private readonly clock: Clock;

  private current: CallState = 'deciding';
  verdict: Verdict | undefined;
  decision: 'allow' | 'deny' | undefined;
  decidedBy: DecidedBy | undefined;
  detail = '';
  ticketId: string | undefined;
  /** The counted grant the policy found for the call: its ask has the broker spend one of its calls. */
  grant: string | undefined;
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
  /** The round of a multi round-trip call that this request continues (rounds.ts): decided with the first. */
  round: Round | undefined;
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
    this.clock = init.clock ?? systemClock;
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

  /**
   * End a call that was not sent: denied (by policy, a person, E-Stop, an error), answered early while it
   * waited, or cancelled by its client. `decided` stamps the decision's time when none was (a denial is one; an
   * early answer or a cancellation is not a decision on the call).
   */
  end(decision: 'deny', by: DecidedBy, detail: string, outcome: Outcome, decided = true): void {
    if (!UNSENT.has(this.current)) throw new Error(`call ${this.callId} cannot end unsent: it is ${this.current}`);
    this.decision = decision;
    this.decidedBy = by;
    this.detail = detail;
    this.outcome = outcome;
    if (decided) this.decidedAt ??= this.clock.now();
    this.markFinished(this.clock.now(), monotonic(this.clock));
    this.to('done');
  }

  /** A forwarded call's run ended (see RunEnd and KEEPS): its outcome, its end time, done. */
  finish(result: RunEnd): void {
    this.markFinished(this.clock.now(), monotonic(this.clock));
    if (result.note) this.detail += result.note;
    if (!KEEPS[result.by](this, result.outcome)) this.outcome = result.outcome;
    if (this.current !== 'done') this.to('done');
  }

  /**
   * End a forwarded call for its client while the server still runs it (E-Stop, a front end): the client is
   * answered now, the call stays forwarded until the server lets go of it (its answer is journaled, not relayed).
   */
  endWhileRunning(by: DecidedBy, reason: string): void {
    this.answered = true;
    this.outcome = 'cancelled';
    this.detail += `; ended while running (${by}: ${reason})`;
  }

  /** Sent to the server now (allowed, every hook and check passed). */
  forward(): void {
    this.to('forwarded');
    this.markForwarded(this.clock.now(), monotonic(this.clock));
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

  /** A client's call the server was sent (not one of Airlock's own inverses): its answer is relayed unread. */
  get relayedUnread(): boolean {
    return this.state === 'forwarded' && this.internal === undefined;
  }

  /**
   * The arguments' hash, when it was computed: a call that asked has it (a held ticket matches on it); one that
   * never asked is not hashed just for the journal.
   */
  get knownArgsSha256(): string | undefined {
    return this.sha;
  }
}

/** What a retry of a multi round-trip call takes over from the round before it (rounds.ts). */
export interface Round {
  /** The call of the first round (its journal entry is every round's). */
  readonly first: Call;
  /** The call whose answer asked for input (the first, or a retry). */
  readonly last: Call;
  readonly decidedBy: DecidedBy;
  readonly requestState: string | undefined;
  /** Rounds so far (1: the first call was answered with input_required). */
  readonly n: number;
  /** When the server asked (a round the client does not come back to is forgotten). */
  readonly at: number;
}

