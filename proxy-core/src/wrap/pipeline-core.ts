/**
 * What the steps of a call's way through the wrapper (deciding.ts, asking.ts, forwarding.ts) share with the
 * pipeline that runs them (pipeline.ts): its context, its timings, and how a step ends a call. Apart from the
 * pipeline, so the steps and the pipeline do not import each other.
 */
import type { Verdict } from '../classify/classify.js';
import type { JsonRpcResponse } from '../jsonrpc/messages.js';
import type { DecidedBy } from '../policy/decide.js';
import type { Clock } from '../util/clock.js';
import type { BrokerLinkLike } from './broker-link.js';
import type { InputRequired } from './era.js';
import type { Call } from './call.js';
import type { Denial } from './denial.js';
import type { InFlight } from './in-flight.js';
import type { InternalEnd } from './internal-call.js';
import type { TaskHandle } from './tasks.js';
import type { ToolVerdicts } from './verdicts.js';

export interface PipelineTimings {
  /** How often to send progress while a ticket waits (when the call carried a progressToken). */
  progressIntervalMs: number;
  /** How long a call may wait for the broker connection before failing closed. */
  brokerWaitMs: number;
  /** How long a call may wait for the tool catalog before failing closed. */
  catalogWaitMs: number;
  /** When a call without a progressToken that still waits for a human is answered "still waiting" (0: never). */
  holdAnswerMs: number;
  /** How long the decision on a held ticket waits for the same call to be made again. */
  heldKeepMs: number;
}

/** Many clients give up on a request after 60 s (the MCP SDK's default): a held call is answered before. */
const HOLD_ANSWER_MS = 50_000;

/** The timings given, the defaults for the rest. */
export function pipelineTimings(o: Partial<PipelineTimings>): PipelineTimings {
  return {
    progressIntervalMs: o.progressIntervalMs ?? 5000,
    brokerWaitMs: o.brokerWaitMs ?? 1500,
    catalogWaitMs: o.catalogWaitMs ?? 15_000,
    holdAnswerMs: o.holdAnswerMs ?? HOLD_ANSWER_MS,
    heldKeepMs: o.heldKeepMs ?? 120_000,
  };
}

export interface PipelineContext {
  server: string;
  client: string;
  link: BrokerLinkLike;
  verdicts: ToolVerdicts;
  clock: Clock;
  timings: PipelineTimings;
  log(msg: string): void;
  /** Send the client a message of the wrapper's own (a reply, a progress notification). */
  toClient(message: unknown): void;
  /** Send the client the server's own bytes. */
  relayToClient(raw: Buffer): void;
  /** Send the server a message. */
  toUpstream(message: unknown): void;
  /** Has the client said `notifications/initialized`? (before that, the tools cannot be known) */
  initialized(): boolean;
  /** Why the server cannot take a call now (stopped by E-Stop, not restarted), or undefined when it can. */
  unavailable(): Denial | undefined;
  /** The server answered a call with a task handle: the call runs on as that task (tasks.ts follows it). */
  taskCreated?(call: Call, handle: TaskHandle): void;
  /** The ids the server owes an answer to: a forwarded call's is entered here, its answer routed back. */
  inFlight: InFlight;
  /** The server let go of a call (answered it): a release E-Stop waits on may go on. */
  serverLetGo?(): void;
}

/** What the steps (deciding.ts, asking.ts, forwarding.ts) use of the pipeline: its context and how calls end. */
export interface PipelineCore {
  readonly o: PipelineContext;
  allow(call: Call, decidedBy: DecidedBy, detail: string): void;
  ask(call: Call, reason: string): void;
  /** Refuse a call not yet sent. */
  deny(call: Call, decidedBy: DecidedBy, reason: string, detail?: string): void;
  /** Run a step; whatever it throws denies the call (never a forward, never a crash). */
  guarded(call: Call, step: () => void): void;
  /** A step threw: the call is denied (what `guarded` does with an error). */
  failed(call: Call, err: unknown): void;
  verdictOf(tool: string): Verdict;
  /** The call has its answer: its id is free again. */
  close(call: Call): void;
  /** The call was sent: the server's answer is routed back to it. */
  sent(call: Call): void;
  endInternal(call: Call, e: InternalEnd): void;
  reply(message: JsonRpcResponse): void;
  /** The server answered the call asking for input (2026-07-28): its retry continues it (rounds.ts). */
  roundOpened(call: Call, asked: InputRequired): void;
  journal(call: Call): void;
}
