/**
 * A tools/call's way through the wrapper, as one ordered list of stages:
 *
 *   classify ▸ policy ▸ ticket ▸ pre-forward hooks ▸ forward ▸ post-result hooks ▸ journal
 *
 * Each call is one `Call` record with an explicit state (deciding → asking → preparing → forwarded → done).
 * An allowed call is decided and forwarded in the tick it was read, from the policy the broker pushed; the
 * ticket stage is the one place that waits for a human. Every continuation that arrives later (a listing, the
 * broker, an answer, a hook) first checks that the call is still in the state it left it in, so a late event
 * can never forward a call that something else has ended. Whatever fails on the way is a denial.
 *
 * A call that waits for a human longer than its client is likely to wait (60 s in the MCP SDK) is answered
 * before that with a "still waiting" result; its ticket stays open and the same call made again picks up the
 * decision. With a progressToken the call stays held and progress keeps the client waiting instead.
 */
import { randomBytes } from 'node:crypto';
import { isReadOnlyClass, type Verdict } from '../classify/classify.js';
import { errorResponse, idKey, INTERNAL_ERROR, isObject, type JsonRpcId, type JsonRpcResponse, type Message } from '../jsonrpc/messages.js';
import { type DecidedBy, decide, type PolicySnapshot } from '../policy/decide.js';
import type { AskAnswer, AskRequest, Outcome } from '../protocol/api.js';
import type { BrokerLinkLike } from './broker-link.js';
import { Call, type CallState, type CallView } from './call.js';
import { CallBudget } from './call-budget.js';
import { capturedResult } from './capture.js';
import { type Clock, every, monotonic, type Timer } from '../util/clock.js';
import { denialResult, waitingResult } from './denial.js';
import type { InternalEnd, InternalSink } from './internal-call.js';
import { type CallStage, runAfterResult, runBeforeForward } from './stages.js';
import { type TaskHandle, taskHandle } from './tasks.js';
import { TicketBook, type TicketOutcome, type WrapperTicket } from './tickets.js';
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
}

/** How an E-Stop (or any front end) ends a call: who decided, and why. */
export interface Denial {
  decidedBy: DecidedBy;
  reason: string;
}

/** The states in which a call has not been sent to the server yet. */
const UNSENT: ReadonlySet<CallState> = new Set(['deciding', 'asking', 'preparing']);
const STRUCTURED_CHECK_MAX_BYTES = 1024 * 1024;

/** What a call waits with while it is asking: its ticket and its timers. */
interface Asking {
  ticket: WrapperTicket | undefined;
  stopProgress: (() => void) | undefined;
  hold: Timer | undefined;
}

export class CallPipeline {
  private readonly calls = new Map<string, Call>();
  private readonly asking = new Map<Call, Asking>();
  private readonly tickets: TicketBook;
  private readonly stages: CallStage[] = [];
  private readonly prefix = randomBytes(9).toString('base64url');
  private counter = 0;
  /** Progress tokens of calls ended while running: what the server still says about them is not relayed. */
  private readonly silenced = new Set<string | number>();
  /** Places for changing calls the broker handed this wrapper (the tripwire's cap). */
  private readonly budget: CallBudget;

  constructor(private readonly o: PipelineContext) {
    this.tickets = new TicketBook(o.clock);
    this.budget = new CallBudget(o.link, o.clock);
  }

  /** Add a stage at the end of the list (hooks run in the order they were added). */
  use(stage: CallStage): this {
    this.stages.push(stage);
    return this;
  }

  // ---- what the relay asks -------------------------------------------------------------------------------

  /** Is a call with this id key in flight (not answered, or forwarded and not answered by the server)? */
  has(key: string): boolean {
    return this.calls.has(key);
  }

  /** Every call in flight, oldest first: what an E-Stop acts on. */
  inFlight(): CallView[] {
    return [...this.calls.values()];
  }

  /** Calls forwarded under a read-only class and not answered yet (suspects when a resource changes). */
  runningReadOnly(): CallView[] {
    return [...this.calls.values()].filter((c) => c.state === 'forwarded' && c.readOnly);
  }

  /** Calls that ran without a tripwire place turned out to change something: the broker counts them now. */
  countAsChanging(n: number): void {
    if (this.o.link.policy?.tripwire === true) this.budget.charge(n);
  }

  /** Tickets held for a call to be made again. */
  heldTickets(): { askId: string; tool: string; ticketId: string | undefined; decided: boolean }[] {
    return this.tickets.held().map((t) => ({ askId: t.askId, tool: t.tool, ticketId: t.ticketId, decided: t.outcome !== undefined }));
  }

  /** The call waiting on the ticket the broker knows by this call id (that of its first asker), if one waits now. */
  waitingOn(askId: string): Call | undefined {
    return this.tickets.get(askId)?.owner ?? undefined;
  }

  // ---- the stages ----------------------------------------------------------------------------------------

  /** A checked tools/call from the client: starts its way through the stages. */
  start(message: Message & { id: JsonRpcId }, key: string, tool: string, args: Record<string, unknown>, progressToken: string | number | undefined): void {
    const call = new Call({
      id: message.id,
      key,
      callId: `${this.prefix}-${++this.counter}`,
      tool,
      args,
      message,
      progressToken,
      startedAt: this.o.clock.now(),
      startedMono: monotonic(this.o.clock),
    });
    this.calls.set(key, call);
    // a token the client uses again belongs to its new call (the stopped one no longer exists for the client)
    if (progressToken !== undefined) this.silenced.delete(progressToken);
    this.decide(call);
  }

  /**
   * A call of Airlock's own (an undo's inverse, internal-call.ts), with an id of the reserved namespace: the same
   * stages as a client's call; its end goes to `sink`, never to the client.
   */
  startInternal(init: { id: string; callId: string; tool: string; args: Record<string, unknown>; sink: InternalSink }): void {
    const message: Message = { jsonrpc: '2.0', id: init.id, method: 'tools/call', params: { name: init.tool, arguments: init.args } };
    const key = idKey(init.id);
    const call = new Call({ ...init, key, message, progressToken: undefined, internal: init.sink, startedAt: this.o.clock.now(), startedMono: monotonic(this.o.clock) });
    this.calls.set(key, call);
    this.decide(call);
  }

  /** classify ▸ policy, synchronously when everything is at hand; waits only for what is missing. */
  private decide(call: Call): void {
    if (call.state !== 'deciding') return;
    try {
      const down = this.o.unavailable();
      if (down) return this.deny(call, down.decidedBy, down.reason);
      const listing = this.o.verdicts.listing;
      if (!listing.ready) {
        if (!listing.canList && !this.o.initialized()) {
          return this.deny(call, 'error', 'the server has not been initialized yet, so its tools are unknown');
        }
        void listing.whenReady(this.o.timings.catalogWaitMs).then((ok) =>
          this.guarded(call, () => {
            if (ok) this.decide(call);
            else this.deny(call, 'error', "the server's tool list could not be read, so the call cannot be classified");
          }),
        );
        return;
      }
      const link = this.o.link;
      const policy = link.policy;
      if (link.state !== 'up' || !policy) {
        if (call.waitedBroker) return this.deny(call, 'broker-down', 'Airlock is not running');
        call.waitedBroker = true;
        void link.ensureUp(this.o.timings.brokerWaitMs).then(() => this.decide(call));
        return;
      }
      const verdict = this.o.verdicts.verdict(call.tool);
      call.verdict = verdict;
      const definition = this.o.verdicts.definition(call.tool);
      const decision = decide({ server: this.o.server, client: this.o.client, tool: call.tool, toolClass: verdict.class, args: call.args, definition }, policy);
      if (decision.action === 'allow') this.allow(call, decision.decidedBy, decision.reason);
      else if (decision.action === 'deny') this.deny(call, decision.decidedBy, decision.reason);
      else this.ask(call, decision.reason);
    } catch (err) {
      // a stage that throws is a denial, never a forwarded call
      this.deny(call, 'error', `internal error: ${(err as Error).message}`);
    }
  }

  /** The ticket stage: pick up a held ticket for this same call, or ask the broker for a new one. */
  private ask(call: Call, reason: string): void {
    call.to('asking');
    call.askedAt = this.o.clock.now();
    const sha = call.argsSha256();
    const waiting: Asking = { ticket: undefined, stopProgress: undefined, hold: undefined };
    this.asking.set(call, waiting);
    // Airlock's own call never takes the decision of a client's held ticket, nor leaves one to be picked up
    const held = call.internal ? undefined : this.tickets.heldFor(call.tool, sha);
    if (held) {
      call.ticketId = held.ticketId;
      if (held.outcome) {
        // decided while nobody waited: this call takes the decision (an approval is used once)
        this.tickets.remove(held);
        return this.deliver(call, held.outcome, held);
      }
      held.owner = call;
      waiting.ticket = held;
      return this.wait(call, waiting);
    }
    const verdict = call.verdict!;
    const shown = call.argsShown();
    const request: AskRequest = {
      callId: call.callId,
      tool: call.tool,
      // a held call's arguments can be huge: the broker gets what it may show, and the hash of the whole
      arguments: shown.truncated ? shown.text : call.args,
      argsTruncated: shown.truncated,
      argsBytes: shown.bytes,
      argsSha256: sha,
      class: verdict.class,
      reasons: [...verdict.reasons, reason],
    };
    const ticket = this.tickets.open(call.callId, call.tool, sha, call);
    waiting.ticket = ticket;
    let answer: Promise<AskAnswer>;
    try {
      answer = this.o.link.ask(request);
    } catch (err) {
      answer = Promise.reject(err as Error);
    }
    answer.then(
      (a) => this.settle(ticket, { ok: true, answer: a }),
      (err: Error) => this.settle(ticket, { ok: false, error: err }),
    );
    this.wait(call, waiting);
  }

  /** While a ticket waits: progress for a client that asked for it, else an answer before the client gives up. */
  private wait(call: Call, waiting: Asking): void {
    const { clock, timings } = this.o;
    // Airlock's own call waits for the ticket's end (the broker bounds it), with nobody to keep waiting
    if (call.internal) return;
    if (call.progressToken !== undefined) {
      let n = 0;
      waiting.stopProgress = every(clock, timings.progressIntervalMs, () => {
        n++;
        const ticket = call.ticketId ? ` (ticket ${call.ticketId})` : '';
        this.o.toClient({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: call.progressToken, progress: n, message: `Waiting for your approval in Airlock${ticket}` },
        });
      });
    } else if (timings.holdAnswerMs > 0 && Number.isFinite(timings.holdAnswerMs)) {
      const left = Math.max(0, timings.holdAnswerMs - (monotonic(clock) - call.startedMono));
      waiting.hold = clock.setTimeout(() => this.guarded(call, () => this.answerEarly(call)), left);
    }
  }

  /** The broker answered a ticket (or the ask failed). */
  private settle(ticket: WrapperTicket, outcome: TicketOutcome): void {
    if (!this.tickets.has(ticket)) return; // withdrawn (the call was cancelled or ended)
    if (outcome.ok) ticket.ticketId = outcome.answer.ticketId;
    const owner = ticket.owner;
    if (owner) {
      this.tickets.remove(ticket);
      return this.guarded(owner, () => this.deliver(owner, outcome, null));
    }
    // held: nobody waits on it now. A failed ask has no decision to keep (the same call asks afresh).
    if (!outcome.ok) {
      this.tickets.remove(ticket);
      return;
    }
    ticket.outcome = outcome;
    ticket.settledAt = this.o.clock.now();
    this.tickets.expireAfter(ticket, this.o.timings.heldKeepMs, (t) => {
      if (outcome.answer.decision === 'allow') {
        this.o.log(`airlock: the approval of ticket ${t.ticketId ?? t.askId} ("${t.tool}") was not picked up: the call was not made again in time`);
      }
    });
  }

  /** A ticket's outcome reaches the call waiting on it: deny, or allow (E-Stop pressed meanwhile still wins). */
  private deliver(call: Call, outcome: TicketOutcome, pickedUp: WrapperTicket | null): void {
    if (call.state !== 'asking') return;
    this.stopWaiting(call, false);
    call.decidedAt = pickedUp?.settledAt ?? this.o.clock.now();
    if (!outcome.ok) {
      // a broker that refused the request (a bad field) is not a broker that went away: say which
      const refused = (outcome.error as { code?: unknown }).code === 'bad-request';
      if (refused) return this.deny(call, 'error', `Airlock could not hold this call for approval: ${outcome.error.message}`);
      return this.deny(call, 'broker-down', 'Airlock stopped answering while the call waited for approval');
    }
    const a = outcome.answer;
    call.ticketId = a.ticketId;
    const note = pickedUp ? ` (decided on ticket ${a.ticketId} while an earlier identical call was answered "still waiting"; picked up by this call)` : '';
    if (a.decision !== 'allow') return this.deny(call, a.decidedBy, a.reason, a.reason + note);
    const policy = this.o.link.policy;
    if (!policy) return this.deny(call, 'broker-down', 'the connection to Airlock was lost as the call was approved');
    if (policy.estop) return this.deny(call, 'estop', 'E-Stop is on: every tool call is refused');
    this.allow(call, 'user', a.reason + note);
  }

  /** Allowed: the pre-forward hooks run, then the call is forwarded (in this tick when no hook waits). */
  private allow(call: Call, decidedBy: DecidedBy, detail: string): void {
    call.decision = 'allow';
    call.decidedBy = decidedBy;
    call.detail = detail;
    call.decidedAt ??= this.o.clock.now();
    call.to('preparing');
    runBeforeForward(this.stages, call, (r) =>
      this.guarded(call, () => {
        if (call.state !== 'preparing') return;
        if (!r.ok) return this.deny(call, r.decidedBy, r.reason);
        if (r.waited) {
          // a hook took its time: what the broker said meanwhile still holds
          const policy = this.o.link.policy;
          if (policy?.estop === true) return this.deny(call, 'estop', 'E-Stop is on: every tool call is refused');
        }
        this.forward(call);
      }),
    );
  }

  /** About to be forwarded: a changing call takes a tripwire place first, or waits for one (held, never sent on credit). */
  private forward(call: Call): void {
    const down = this.o.unavailable();
    if (down) return this.deny(call, down.decidedBy, down.reason);
    if (!this.needsPlace(call)) return this.send(call);
    const now = this.budget.admit({
      live: () => call.state === 'preparing',
      go: () => {
        let sent = false;
        this.guarded(call, () => {
          // it waited: E-Stop, a lost broker or a stopped server since then still wins
          const policy = this.o.link.policy;
          const down = this.o.unavailable();
          if (!policy || policy.estop) return this.deny(call, policy ? 'estop' : 'broker-down', policy ? 'E-Stop is on: every tool call is refused' : 'Airlock is not running');
          if (down) return this.deny(call, down.decidedBy, down.reason);
          this.send(call);
          sent = true;
        });
        return sent;
      },
      refuse: (d) => this.guarded(call, () => this.deny(call, d.decidedBy, d.reason)),
    });
    if (now) this.send(call);
  }

  /**
   * Does this call need a tripwire place? Every changing call does while the tripwire is on (and when the policy is
   * gone, so nothing is known): only a read-only claim the person trusts, still unwithdrawn now, does not.
   */
  private needsPlace(call: Call): boolean {
    const policy = this.o.link.policy;
    if (policy && policy.tripwire !== true) return false;
    return !(call.verdict?.class === 'read-only-trusted' && this.verdictOf(call.tool).class === 'read-only-trusted');
  }

  private send(call: Call): void {
    call.to('forwarded');
    call.markForwarded(this.o.clock.now(), monotonic(this.o.clock));
    call.readOnly = call.verdict !== undefined && isReadOnlyClass(call.verdict.class);
    this.o.toUpstream(call.message);
    this.journal(call);
  }

  /** Refuse a call not yet sent: the client gets a tool error it can read; the server never sees it. */
  private deny(call: Call, decidedBy: DecidedBy, reason: string, detail = reason): void {
    if (!UNSENT.has(call.state)) return;
    this.stopWaiting(call, true);
    call.decision = 'deny';
    call.decidedBy = decidedBy;
    call.detail = detail;
    call.outcome = 'not-run';
    call.decidedAt ??= this.o.clock.now();
    call.markFinished(this.o.clock.now(), monotonic(this.o.clock));
    call.verdict ??= this.verdictOf(call.tool);
    this.close(call);
    if (call.internal) this.endInternal(call, { kind: 'not-run', decidedBy, reason });
    else {
      this.reply({
        jsonrpc: '2.0',
        id: call.id,
        result: denialResult({ decidedBy, reason, tool: call.tool, server: this.o.server, verdict: call.verdict, ticketId: call.ticketId }),
      });
    }
    this.journal(call);
  }

  /** The client would give up soon: answer "still waiting", and keep the ticket for the same call made again. */
  private answerEarly(call: Call): void {
    if (call.state !== 'asking') return;
    const ticket = this.asking.get(call)?.ticket;
    if (!ticket || !this.tickets.has(ticket)) return;
    this.stopWaiting(call, false);
    ticket.owner = null;
    const waited = ((monotonic(this.o.clock) - call.startedMono) / 1000).toFixed(1);
    const id = call.ticketId ? ` ${call.ticketId}` : '';
    call.decision = 'deny';
    call.decidedBy = 'timeout';
    call.detail =
      `answered early while waiting for approval: after ${waited} s, before the client would give up on the call; ` +
      `ticket${id} stays open, and the same call made again picks up the decision`;
    call.outcome = 'not-run';
    call.markFinished(this.o.clock.now(), monotonic(this.o.clock));
    const verdict = call.verdict ?? this.verdictOf(call.tool);
    this.close(call);
    this.reply({ jsonrpc: '2.0', id: call.id, result: waitingResult({ tool: call.tool, server: this.o.server, verdict, ticketId: call.ticketId }) });
    this.journal(call);
  }

  /** The server answered a forwarded call: relay its bytes, then the post-result hooks, then the journal. */
  serverAnswered(key: string, m: Message, raw: Buffer): boolean {
    const call = this.calls.get(key);
    if (!call || call.state !== 'forwarded') return false;
    this.calls.delete(key);
    if (call.progressToken !== undefined) this.silenced.delete(call.progressToken);
    const result = m.result;
    let outcome: Outcome = 'ok';
    if (m.error !== undefined) outcome = 'rpc-error';
    else if (isObject(result) && result.isError === true) outcome = 'tool-error';
    if (call.answered) {
      // ended while running: the answer only reaches the journal
    } else if (call.internal) {
      // an undo's inverse that the server made a task has not ended: the undo cannot say it was done
      const made = outcome === 'ok' && taskHandle(result) !== undefined;
      this.endInternal(call, made ? { kind: 'unknown', reason: 'the server ran the inverse as a task; whether it finished is unknown' } : { kind: 'answered', message: m as unknown as JsonRpcResponse });
    } else this.o.relayToClient(raw);
    try {
      call.result = capturedResult(m, raw);
    } catch (err) {
      // what the journal keeps of a result must never stand in the way of the result itself
      this.o.log(`airlock: could not keep the result of call ${call.callId} for the journal: ${(err as Error).message}`);
    }
    const handle = outcome === 'ok' && this.o.taskCreated ? taskHandle(result) : undefined;
    if (handle) {
      // not the call's end: the server works on, and the task's end is the call's (journaled by tasks.ts)
      call.to('done');
      this.o.taskCreated!(call, handle);
      return true;
    }
    call.markFinished(this.o.clock.now(), monotonic(this.o.clock));
    if (call.answered) call.detail += `; the server answered afterwards (${outcome})`;
    else if (call.cancelled) call.detail += `; cancelled by the client, the server answered anyway (${outcome})`;
    // the outcome is what the server did: a result that arrived is ok or a tool error, whatever E-Stop or the
    // client did to the call meanwhile (an error answer to a cancelled call leaves it cancelled)
    if (outcome !== 'rpc-error' || !(call.answered || call.cancelled)) call.outcome = outcome;
    call.to('done');
    if (outcome === 'ok' && isObject(result) && result.structuredContent !== undefined && raw.length < STRUCTURED_CHECK_MAX_BYTES) {
      if (this.o.verdicts.listing.outputSchema(call.tool) !== undefined) this.o.link.structured(call.tool, result.structuredContent);
    }
    if (!this.stages.some((s) => s.afterResult)) {
      this.journal(call);
      return true;
    }
    runAfterResult(this.stages, call, { message: m, raw, outcome }, (problems) => {
      if (problems.length > 0) {
        for (const p of problems) this.o.log(`airlock: ${p} (call ${call.callId}, "${call.tool}")`);
        call.detail += `; ${problems.join('; ')}`;
      }
      this.journal(call);
    });
    return true;
  }

  // ---- ending calls from outside -------------------------------------------------------------------------

  /**
   * The client cancelled a request. True when the pipeline took the notification (the call was never sent, so
   * the server must not hear of it); false when it is for the server (a forwarded call, or not a call at all).
   */
  clientCancelled(key: string, why = 'the client cancelled the call'): boolean {
    const call = this.calls.get(key);
    if (!call) return false;
    // Airlock's own call is not the client's to cancel (and the server must not hear of it from the client)
    if (call.internal) return true;
    if (call.state === 'forwarded') {
      if (!call.answered) {
        call.cancelled = true;
        call.outcome = 'cancelled';
        this.journal(call);
      }
      return false;
    }
    this.stopWaiting(call, true);
    call.decision = 'deny';
    call.decidedBy = 'cancelled';
    call.detail = why;
    call.outcome = 'cancelled';
    call.markFinished(this.o.clock.now(), monotonic(this.o.clock));
    call.verdict ??= this.verdictOf(call.tool);
    this.close(call);
    this.journal(call);
    return true;
  }

  /**
   * End one call in flight with a denial, whatever its state: not sent yet, it is denied; already at the
   * server, the server is told to cancel it, the client gets the denial at once and the server's late answer
   * only reaches the journal. False when there is no such call or it already has its answer.
   */
  end(callId: string, denial: Denial): boolean {
    const call = [...this.calls.values()].find((c) => c.callId === callId);
    if (!call) return false;
    if (UNSENT.has(call.state)) {
      this.deny(call, denial.decidedBy, denial.reason);
      return true;
    }
    return this.stop(call, denial);
  }

  /**
   * E-Stop: every call the server is running is ended as `end()` does, at once. Returns their call ids (the
   * server has not answered them yet: see `awaitingServer`).
   */
  stopRunning(denial: Denial): string[] {
    const stopped: string[] = [];
    for (const call of [...this.calls.values()]) if (this.stop(call, denial)) stopped.push(call.callId);
    return stopped;
  }

  /** Is this call, ended while running, still waiting for the server's answer (the server has not let go of it)? */
  awaitingServer(callId: string): boolean {
    for (const call of this.calls.values()) if (call.callId === callId) return call.state === 'forwarded';
    return false;
  }

  /** Is this progress token that of a call ended while running? (the server's progress for it is dropped) */
  silencedProgress(token: unknown): boolean {
    return this.silenced.size > 0 && (typeof token === 'string' || typeof token === 'number') && this.silenced.has(token);
  }

  /** End a forwarded call the client has no answer for yet: the client gets the denial, the server a cancellation. */
  private stop(call: Call, denial: Denial): boolean {
    if (call.state !== 'forwarded' || call.answered) return false;
    call.answered = true;
    if (call.progressToken !== undefined) this.silenced.add(call.progressToken);
    call.outcome = 'cancelled';
    call.detail += `; ended while running (${denial.decidedBy}: ${denial.reason})`;
    this.o.toUpstream({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: call.id, reason: denial.reason } });
    const verdict = call.verdict ?? this.verdictOf(call.tool);
    if (call.internal) {
      this.endInternal(call, { kind: 'unknown', reason: `ended while running (${denial.decidedBy}: ${denial.reason}); whether it ran is unknown` });
      this.journal(call);
      return true;
    }
    this.reply({
      jsonrpc: '2.0',
      id: call.id,
      result: denialResult({ ...denial, tool: call.tool, server: this.o.server, verdict, ticketId: call.ticketId, sent: true }),
    });
    this.journal(call);
    return true;
  }

  /** A new policy from the broker: E-Stop ends every call not yet sent, whatever it waits for. */
  policyChanged(policy: PolicySnapshot | null): void {
    if (policy?.estop !== true) return;
    for (const call of [...this.calls.values()]) {
      if (UNSENT.has(call.state)) this.deny(call, 'estop', 'E-Stop is on: every tool call is refused');
    }
  }

  /** The broker told which ticket a call's ask opened. */
  ticketAssigned(askId: string, ticketId: string): void {
    const t = this.tickets.get(askId);
    if (!t) return;
    t.ticketId = ticketId;
    if (t.owner) t.owner.ticketId = ticketId;
  }

  /** The client went away: nothing waiting can be answered any more; open tickets are withdrawn. */
  clientClosed(): void {
    for (const call of [...this.calls.values()]) if (UNSENT.has(call.state)) this.clientCancelled(call.key, 'the client disconnected');
    this.dropHeld();
  }

  /** The upstream is gone: calls it never answered end as unknown, the rest are denied, held tickets withdrawn. */
  upstreamExited(description: string): void {
    for (const call of [...this.calls.values()]) {
      if (call.state === 'forwarded') {
        this.calls.delete(call.key);
        if (call.progressToken !== undefined) this.silenced.delete(call.progressToken);
        call.detail += `; ${description} before answering`;
        if (!call.answered) call.outcome = 'unknown';
        call.markFinished(this.o.clock.now(), monotonic(this.o.clock));
        call.to('done');
        this.journal(call);
        const why = `the MCP server ${description} before answering this call; whether it ran is unknown`;
        if (call.internal) this.endInternal(call, { kind: 'unknown', reason: why });
        else if (!call.answered) this.reply(errorResponse(call.id, INTERNAL_ERROR, why));
      } else if (UNSENT.has(call.state)) {
        this.deny(call, 'error', `the MCP server ${description}`);
      }
    }
    this.dropHeld();
  }

  // ---- plumbing ------------------------------------------------------------------------------------------

  /** Leave `asking`: stop the timers; `withdraw` also cancels the call's open ticket at the broker. */
  private stopWaiting(call: Call, withdraw: boolean): void {
    const waiting = this.asking.get(call);
    if (!waiting) return;
    this.asking.delete(call);
    waiting.stopProgress?.();
    this.o.clock.clearTimeout(waiting.hold);
    const t = waiting.ticket;
    if (withdraw && t && this.tickets.has(t) && t.owner === call) {
      this.tickets.remove(t);
      this.o.link.cancel(t.askId);
    }
  }

  private dropHeld(): void {
    for (const t of this.tickets.held()) {
      this.tickets.remove(t);
      if (!t.outcome) this.o.link.cancel(t.askId);
    }
  }

  /** Run a continuation that arrived later; whatever it throws denies the call (never a forward, never a crash). */
  private guarded(call: Call, step: () => void): void {
    try {
      step();
    } catch (err) {
      this.o.log(`airlock: internal error in call ${call.callId} ("${call.tool}"): ${(err as Error).message}`);
      this.deny(call, 'error', `internal error: ${(err as Error).message}`);
    }
  }

  /** The verdict for a call being ended: whatever goes wrong here must not keep the client from its answer. */
  private verdictOf(tool: string): Verdict {
    try {
      return this.o.verdicts.verdict(tool);
    } catch (err) {
      return { name: tool, class: 'unclassifiable', reasons: [`could not classify: ${(err as Error).message}`], declared: undefined };
    }
  }

  /** The call has its answer: done, and its id is free again. */
  private close(call: Call): void {
    call.to('done');
    if (this.calls.get(call.key) === call) this.calls.delete(call.key);
  }

  /** Tell whoever started Airlock's own call how it ended; a failure there is logged, never the call's. */
  private endInternal(call: Call, e: InternalEnd): void {
    try {
      call.internal?.end(e);
    } catch (err) {
      this.o.log(`airlock: internal error ending call ${call.callId} ("${call.tool}"): ${(err as Error).message}`);
    }
  }

  private journal(call: Call): void {
    this.o.link.journal(call.toRecord(this.o.client, this.o.server));
  }

  private reply(message: JsonRpcResponse): void {
    this.o.toClient(message);
  }
}
