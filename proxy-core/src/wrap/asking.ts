/**
 * The asking step of a tools/call: the one place that waits for a human. The call picks up a held ticket for
 * the same call (same tool, same arguments by hash) or asks the broker for a new one, and waits: with progress
 * notifications when its client gave a progressToken, else until shortly before its client would give up (60 s
 * in the MCP SDK), when it is answered "still waiting" and its ticket stays held for the same call made again.
 * The ticket's outcome is delivered to the call waiting on it: a denial, or an allow that E-Stop pressed
 * meanwhile still overrides.
 */
import type { AskAnswer, AskRequest } from '../protocol/api.js';
import { every, monotonic, type Timer } from '../util/clock.js';
import type { Call } from './call.js';
import { waitingResult } from './denial.js';
import type { PipelineCore } from './pipeline-core.js';
import { TicketBook, type TicketOutcome, type WrapperTicket } from './tickets.js';

/** What a call waits with while it is asking: its ticket and its timers. */
interface Waiting {
  ticket: WrapperTicket | undefined;
  stopProgress: (() => void) | undefined;
  hold: Timer | undefined;
}

export class TicketDesk {
  private readonly asking = new Map<Call, Waiting>();
  private readonly tickets: TicketBook;

  constructor(private readonly core: PipelineCore) {
    this.tickets = new TicketBook(core.o.clock);
  }

  /** Tickets held for a call to be made again. */
  heldTickets(): { askId: string; tool: string; ticketId: string | undefined; decided: boolean }[] {
    return this.tickets.held().map((t) => ({ askId: t.askId, tool: t.tool, ticketId: t.ticketId, decided: t.outcome !== undefined }));
  }

  /** The call waiting on the ticket the broker knows by this call id (that of its first asker), if one waits now. */
  waitingOn(askId: string): Call | undefined {
    return this.tickets.get(askId)?.owner ?? undefined;
  }

  /** The broker told which ticket a call's ask opened. */
  ticketAssigned(askId: string, ticketId: string): void {
    const t = this.tickets.get(askId);
    if (!t) return;
    t.ticketId = ticketId;
    if (t.owner) t.owner.ticketId = ticketId;
  }

  /** Pick up a held ticket for this same call, or ask the broker for a new one. */
  ask(call: Call, reason: string): void {
    const o = this.core.o;
    call.to('asking');
    call.askedAt = o.clock.now();
    const sha = call.argsSha256();
    const waiting: Waiting = { ticket: undefined, stopProgress: undefined, hold: undefined };
    this.asking.set(call, waiting);
    // Airlock's own call never takes the decision of a client's held ticket, nor leaves one to be picked up
    // a counted grant is spent by the broker for this call alone: it never picks up another call's ticket
    const held = call.internal || call.grant !== undefined ? undefined : this.tickets.heldFor(call.tool, sha);
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
      ...(call.grant !== undefined ? { grant: call.grant } : {}),
    };
    const ticket = this.tickets.open(call.callId, call.tool, sha, call);
    waiting.ticket = ticket;
    let answer: Promise<AskAnswer>;
    try {
      // the broker shows the listing the call was decided on: a report still due goes first
      o.verdicts.reportNow();
      answer = o.link.ask(request);
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
  private wait(call: Call, waiting: Waiting): void {
    const { clock, timings } = this.core.o;
    // Airlock's own call waits for the ticket's end (the broker bounds it), with nobody to keep waiting
    if (call.internal) return;
    if (call.progressToken !== undefined) {
      let n = 0;
      waiting.stopProgress = every(clock, timings.progressIntervalMs, () => {
        n++;
        const ticket = call.ticketId ? ` (ticket ${call.ticketId})` : '';
        this.core.o.toClient({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: call.progressToken, progress: n, message: `Waiting for your approval in Airlock${ticket}` },
        });
      });
    } else if (timings.holdAnswerMs > 0 && Number.isFinite(timings.holdAnswerMs)) {
      const left = Math.max(0, timings.holdAnswerMs - (monotonic(clock) - call.startedMono));
      waiting.hold = clock.setTimeout(() => this.core.guarded(call, () => this.answerEarly(call)), left);
    }
  }

  /** The broker answered a ticket (or the ask failed). */
  private settle(ticket: WrapperTicket, outcome: TicketOutcome): void {
    if (!this.tickets.has(ticket)) return; // withdrawn (the call was cancelled or ended)
    if (outcome.ok) ticket.ticketId = outcome.answer.ticketId;
    const owner = ticket.owner;
    if (owner) {
      this.tickets.remove(ticket);
      return this.core.guarded(owner, () => this.deliver(owner, outcome, null));
    }
    // held: nobody waits on it now. A failed ask has no decision to keep (the same call asks afresh).
    if (!outcome.ok) {
      this.tickets.remove(ticket);
      return;
    }
    ticket.outcome = outcome;
    ticket.settledAt = this.core.o.clock.now();
    this.tickets.expireAfter(ticket, this.core.o.timings.heldKeepMs, (t) => {
      if (outcome.answer.decision === 'allow') {
        this.core.o.log(`airlock: the approval of ticket ${t.ticketId ?? t.askId} ("${t.tool}") was not picked up: the call was not made again in time`);
      }
    });
  }

  /** A ticket's outcome reaches the call waiting on it: deny, or allow (E-Stop pressed meanwhile still wins). */
  private deliver(call: Call, outcome: TicketOutcome, pickedUp: WrapperTicket | null): void {
    if (call.state !== 'asking') return;
    const core = this.core;
    this.stopWaiting(call, false);
    call.decidedAt = pickedUp?.settledAt ?? core.o.clock.now();
    if (!outcome.ok) {
      // a broker that refused the request (a bad field) is not a broker that went away: say which
      const code = (outcome.error as { code?: unknown }).code;
      const refused = code === 'bad-request' || code === 'busy';
      if (refused) return core.deny(call, 'error', `Airlock could not hold this call for approval: ${outcome.error.message}`);
      return core.deny(call, 'broker-down', 'Airlock stopped answering while the call waited for approval');
    }
    const a = outcome.answer;
    call.ticketId = a.ticketId;
    const note = pickedUp ? ` (decided on ticket ${a.ticketId} while an earlier identical call was answered "still waiting"; picked up by this call)` : '';
    if (a.decision !== 'allow') return core.deny(call, a.decidedBy, a.reason, a.reason + note);
    const policy = core.o.link.policy;
    if (!policy) return core.deny(call, 'broker-down', 'the connection to Airlock was lost as the call was approved');
    if (policy.estop) return core.deny(call, 'estop', 'E-Stop is on: every tool call is refused');
    // a counted grant's call is allowed by the rule the broker spent a call of, not by a person now
    core.allow(call, a.decidedBy === 'rule' ? 'rule' : 'user', a.reason + note);
  }

  /** The client would give up soon: answer "still waiting", and keep the ticket for the same call made again. */
  private answerEarly(call: Call): void {
    if (call.state !== 'asking') return;
    const core = this.core;
    const ticket = this.asking.get(call)?.ticket;
    if (!ticket || !this.tickets.has(ticket)) return;
    this.stopWaiting(call, false);
    ticket.owner = null;
    // the answer promises the ticket stays open: a client that exits now (a one-shot CLI) must not end it; the
    // broker also marks the card as one the client stopped waiting on
    core.o.link.keep(ticket.askId);
    const waited = ((monotonic(core.o.clock) - call.startedMono) / 1000).toFixed(1);
    const id = call.ticketId ? ` ${call.ticketId}` : '';
    const detail =
      `answered early while waiting for approval: after ${waited} s, before the client would give up on the call; ` +
      `ticket${id} stays open, and the same call made again picks up the decision`;
    const verdict = call.verdict ?? core.verdictOf(call.tool);
    call.end('deny', 'timeout', detail, 'not-run', false);
    core.close(call);
    core.reply({ jsonrpc: '2.0', id: call.id, result: waitingResult({ tool: call.tool, server: core.o.server, verdict, ticketId: call.ticketId }) });
    core.journal(call);
  }

  /** Leave `asking`: stop the timers; `withdraw` also cancels the call's open ticket at the broker. */
  stopWaiting(call: Call, withdraw: boolean): void {
    const waiting = this.asking.get(call);
    if (!waiting) return;
    this.asking.delete(call);
    waiting.stopProgress?.();
    this.core.o.clock.clearTimeout(waiting.hold);
    const t = waiting.ticket;
    if (withdraw && t && this.tickets.has(t) && t.owner === call) {
      this.tickets.remove(t);
      this.core.o.link.cancel(t.askId);
    }
  }

  /**
   * Nobody here can pick up a held ticket any more. The server went away: withdraw them. The client went away
   * (`kept`): a ticket still open stays open at the broker, which hands its decision to the same call made
   * again from a new session, as the "still waiting" answer promised.
   */
  dropHeld(kept = false): void {
    for (const t of this.tickets.held()) {
      this.tickets.remove(t);
      if (!t.outcome && !kept) this.core.o.link.cancel(t.askId);
    }
  }
}
