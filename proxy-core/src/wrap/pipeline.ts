/**
 * A tools/call's way through the wrapper, step by step, each in its own module:
 *
 *   deciding (classify ▸ policy) ▸ asking (ticket) ▸ forwarding (hooks ▸ tripwire ▸ send ▸ answer ▸ hooks) ▸ journal
 *
 * Each call is one `Call` record with an explicit state (deciding → asking → preparing → forwarded → done),
 * which also owns every way a call ends (call.ts). An allowed call is decided and forwarded in the tick it was
 * read, from the policy the broker pushed; asking is the one step that waits for a human. Every continuation
 * that arrives later (a listing, the broker, an answer, a hook) runs guarded and first checks that the call is
 * still in the state it left it in, so a late event can never forward a call that something else has ended.
 * Whatever fails on the way is a denial: errors are handled in one place (`guarded`).
 *
 * This module holds the calls in flight and what ends them from outside (the client, E-Stop, the server gone).
 */
import { randomBytes } from 'node:crypto';
import type { Verdict } from '../classify/classify.js';
import { errorResponse, idKey, INTERNAL_ERROR, type JsonRpcId, type JsonRpcResponse, type Message } from '../jsonrpc/messages.js';
import type { DecidedBy, PolicySnapshot } from '../policy/decide.js';
import { monotonic } from '../util/clock.js';
import { numberText } from '../util/number-text.js';
import { argumentsHash } from '../jsonrpc/canonical.js';
import { TicketDesk } from './asking.js';
import { Call, type CallView, type Round, UNSENT } from './call.js';
import { CallBudget } from './call-budget.js';
import { decideCall } from './deciding.js';
import { type Denial, denialResult } from './denial.js';
import { type InputRequired, retryOf } from './era.js';
import { Forwarding } from './forwarding.js';
import { JournalEncoder } from './journal-entry.js';
import type { Responder } from './in-flight.js';
import type { InternalEnd, InternalSink } from './internal-call.js';
import { Rounds } from './rounds.js';
import type { CallStage } from './stages.js';
import type { PipelineContext, PipelineCore } from './pipeline-core.js';

export type { Denial } from './denial.js';
export type { PipelineContext, PipelineCore, PipelineTimings } from './pipeline-core.js';

export class CallPipeline implements PipelineCore {
  private readonly calls = new Map<string, Call>();
  private readonly stages: CallStage[] = [];
  private readonly prefix = randomBytes(9).toString('base64url');
  private counter = 0;
  /** Progress tokens of calls ended while running: what the server still says about them is not relayed. */
  private readonly silenced = new Set<string | number>();
  private readonly desk: TicketDesk;
  /** Calls the server asked input for, waiting for the client's retry (2026-07-28 multi round-trip requests). */
  private readonly rounds = new Rounds();
  private readonly forwarding: Forwarding;
  /** Writes each call's journal entry (journal-entry.ts). */
  private readonly encoder: JournalEncoder;
  /** What takes the server's answer to every forwarded call (found by its id key): one for all of them. */
  private readonly answers: Responder = { method: 'tools/call', answered: (m, raw, key) => this.serverAnswered(key, m, raw) };

  constructor(readonly o: PipelineContext) {
    this.desk = new TicketDesk(this);
    this.encoder = new JournalEncoder(o.client, o.server);
    // places for changing calls the broker handed this wrapper (the tripwire's cap)
    this.forwarding = new Forwarding(this, new CallBudget(o.link, o.clock));
  }

  /** Add a stage at the end of the list (hooks run in the order they were added). */
  use(stage: CallStage): this {
    this.stages.push(stage);
    this.forwarding.stagesChanged(this.stages);
    return this;
  }

  // ---- what the relay asks -------------------------------------------------------------------------------

  /** Is a call with this id key in flight (not answered, or forwarded and not answered by the server)? */
  has(key: string): boolean {
    return this.calls.has(key);
  }

  /** Was the client's call with this id key sent to the server? Its answer is relayed as its bytes (server-lines.ts). */
  relaysUnread(key: string): boolean {
    return this.calls.get(key)?.relayedUnread === true;
  }

  /** Is any such call out? */
  awaitsUnread(): boolean {
    for (const call of this.calls.values()) if (call.relayedUnread) return true;
    return false;
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
    if (this.o.link.policy?.tripwire === true) this.forwarding.charge(n);
  }

  /** Tickets held for a call to be made again. */
  heldTickets(): { askId: string; tool: string; ticketId: string | undefined; decided: boolean }[] {
    return this.desk.heldTickets();
  }

  /** The call waiting on the ticket the broker knows by this call id (that of its first asker), if one waits now. */
  waitingOn(askId: string): Call | undefined {
    return this.desk.waitingOn(askId);
  }

  /** The broker told which ticket a call's ask opened. */
  ticketAssigned(askId: string, ticketId: string): void {
    this.desk.ticketAssigned(askId, ticketId);
  }

  // ---- calls in ------------------------------------------------------------------------------------------

  /** A checked tools/call from the client: starts its way through the steps. */
  start(message: Message & { id: JsonRpcId }, key: string, tool: string, args: Record<string, unknown>, progressToken: string | number | undefined): void {
    const clock = this.o.clock;
    // (no round waits in a 2025 connection: nothing more is read of the call there)
    const round = this.rounds.size > 0 ? this.continued(message, tool, args) : undefined;
    const callId = round ? round.first.callId : `${this.prefix}-${numberText(++this.counter)}`;
    const call = new Call({ id: message.id, key, callId, tool, args, message, progressToken, startedAt: round ? round.first.startedAt : clock.now(), startedMono: monotonic(clock), clock });
    if (round) this.continues(call, round);
    this.calls.set(key, call);
    // a token the client uses again belongs to its new call (the stopped one no longer exists for the client)
    if (progressToken !== undefined && this.silenced.size > 0) this.silenced.delete(progressToken);
    try {
      decideCall(this, call);
    } catch (err) {
      this.failed(call, err);
    }
  }

  /**
   * A call of Airlock's own (an undo's inverse, internal-call.ts), with an id of the reserved namespace: the same
   * steps as a client's call; its end goes to `sink`, never to the client.
   */
  startInternal(init: { id: string; callId: string; tool: string; args: Record<string, unknown>; sink: InternalSink }): void {
    const message: Message = { jsonrpc: '2.0', id: init.id, method: 'tools/call', params: { name: init.tool, arguments: init.args } };
    const key = idKey(init.id);
    const clock = this.o.clock;
    const call = new Call({ ...init, key, message, progressToken: undefined, internal: init.sink, startedAt: clock.now(), startedMono: monotonic(clock), clock });
    this.calls.set(key, call);
    this.guarded(call, () => decideCall(this, call));
  }

  /** The round a retried call continues, if it is one (rounds.ts). */
  private continued(message: Message, tool: string, args: Record<string, unknown>): Round | undefined {
    const retry = retryOf(message.params);
    return retry && this.rounds.take(tool, argumentsHash(args), retry.requestState, this.o.clock.now());
  }

  /** A retry is the call it continues: the same journal entry, ticket and decision times, one more step. */
  private continues(call: Call, round: Round): void {
    const first = round.first;
    call.round = round;
    call.ticketId = first.ticketId;
    call.askedAt = first.askedAt;
    call.decidedAt = first.decidedAt;
    const retry = retryOf(call.message.params);
    const keys = retry && retry.shown.length > 0 ? ` with input for ${retry.shown.join(', ')}` : ' with its state';
    call.detail = `${round.last.detail}; round ${round.n + 1}: called again${keys}`;
  }

  roundOpened(call: Call, asked: InputRequired): void {
    call.detail += this.rounds.opened(call, asked, this.o.clock.now());
    this.journal(call);
  }

  /** Calls waiting for the client's input end (E-Stop, the client gone): their retries are new calls. */
  private endRounds(why: string): void {
    const clock = this.o.clock;
    for (const r of this.rounds.endAll()) {
      r.last.outcome = 'cancelled';
      r.last.detail += `; ${why}`;
      r.last.markFinished(clock.now(), monotonic(clock));
      this.journal(r.last);
    }
  }

  allow(call: Call, decidedBy: DecidedBy, detail: string): void {
    this.forwarding.allow(call, decidedBy, detail);
  }

  ask(call: Call, reason: string): void {
    this.desk.ask(call, reason);
  }

  sent(call: Call): void {
    this.o.inFlight.expect(call.key, this.answers);
  }

  /** The server answered a forwarded call (routed here through the in-flight table). */
  private serverAnswered(key: string, m: Message, raw: Buffer): void {
    const call = this.calls.get(key);
    if (!call || call.state !== 'forwarded') return;
    this.calls.delete(key);
    if (call.progressToken !== undefined && this.silenced.size > 0) this.silenced.delete(call.progressToken);
    this.forwarding.serverAnswered(call, m, raw);
    this.o.serverLetGo?.();
  }

  // ---- ending calls --------------------------------------------------------------------------------------

  /** Refuse a call not yet sent: the client gets a tool error it can read; the server never sees it. */
  deny(call: Call, decidedBy: DecidedBy, reason: string, detail = reason): void {
    if (!UNSENT.has(call.state)) return;
    this.desk.stopWaiting(call, true);
    call.end('deny', decidedBy, detail, 'not-run');
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
    this.desk.stopWaiting(call, true);
    call.end('deny', 'cancelled', why, 'cancelled', false);
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
    call.endWhileRunning(denial.decidedBy, denial.reason);
    if (call.progressToken !== undefined) this.silenced.add(call.progressToken);
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
    if (this.rounds.size > 0) this.endRounds("E-Stop was pressed while it waited for the client's input; a retry is refused");
    for (const call of [...this.calls.values()]) {
      if (UNSENT.has(call.state)) this.deny(call, 'estop', 'E-Stop is on: every tool call is refused');
    }
  }

  /** The client went away: nothing waiting can be answered any more; tickets answered "still waiting" stay open. */
  clientClosed(): void {
    if (this.rounds.size > 0) this.endRounds('the client went away before it gave the input the server asked for');
    for (const call of [...this.calls.values()]) if (UNSENT.has(call.state)) this.clientCancelled(call.key, 'the client disconnected');
    this.desk.dropHeld(true);
  }

  /** The upstream is gone: calls it never answered end as unknown, the rest are denied, held tickets withdrawn. */
  upstreamExited(description: string): void {
    for (const call of [...this.calls.values()]) {
      if (call.state === 'forwarded') {
        this.calls.delete(call.key);
        this.o.inFlight.forget(call.key);
        if (call.progressToken !== undefined) this.silenced.delete(call.progressToken);
        call.finish({ by: 'gone', outcome: 'unknown', note: `; ${description} before answering` });
        this.journal(call);
        const why = `the MCP server ${description} before answering this call; whether it ran is unknown`;
        if (call.internal) this.endInternal(call, { kind: 'unknown', reason: why });
        else if (!call.answered) this.reply(errorResponse(call.id, INTERNAL_ERROR, why));
      } else if (UNSENT.has(call.state)) {
        this.deny(call, 'error', `the MCP server ${description}`);
      }
    }
    this.desk.dropHeld();
  }

  // ---- plumbing ------------------------------------------------------------------------------------------

  guarded(call: Call, step: () => void): void {
    try {
      step();
    } catch (err) {
      this.failed(call, err);
    }
  }

  failed(call: Call, err: unknown): void {
    this.o.log(`airlock: internal error in call ${call.callId} ("${call.tool}"): ${(err as Error).message}`);
    this.deny(call, 'error', `internal error: ${(err as Error).message}`);
  }

  /** The verdict for a call being ended: whatever goes wrong here must not keep the client from its answer. */
  verdictOf(tool: string): Verdict {
    try {
      return this.o.verdicts.verdict(tool);
    } catch (err) {
      return { name: tool, class: 'unclassifiable', reasons: [`could not classify: ${(err as Error).message}`], declared: undefined };
    }
  }

  close(call: Call): void {
    if (this.calls.get(call.key) === call) this.calls.delete(call.key);
  }

  /** Tell whoever started Airlock's own call how it ended; a failure there is logged, never the call's. */
  endInternal(call: Call, e: InternalEnd): void {
    try {
      call.internal?.end(e);
    } catch (err) {
      this.o.log(`airlock: internal error ending call ${call.callId} ("${call.tool}"): ${(err as Error).message}`);
    }
  }

  journal(call: Call): void {
    // A call that has ended is written into its entry now (nothing it holds need outlive it). One still open is
    // held as it will stand when the batch (at most JOURNAL_DELAY_MS away) or the spill takes it: the entry is
    // held from this moment all the same, and a quick call's end replaces it before it was ever written.
    if (call.state === 'done') this.journalNow(call);
    else this.o.link.journalLater(call.callId, () => this.encoder.entry(call));
  }

  /** Hold the call's entry as it stands now (a task's call: its task goes on after the call itself is done). */
  journalNow(call: Call): void {
    this.o.link.journal(this.encoder.entry(call));
  }

  reply(message: JsonRpcResponse): void {
    this.o.toClient(message);
  }
}
