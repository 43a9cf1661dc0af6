/**
 * The forwarding step of a tools/call: an allowed call runs the pre-forward hooks, takes a tripwire place when
 * it changes something (or waits for one: held, never sent on credit), and is sent to the server as the message
 * the gate judged, in the tick it was allowed when nothing waits. The server's answer is relayed as its own bytes,
 * then the post-result hooks run, then the call is journaled.
 */
import { isReadOnlyClass } from '../classify/classify.js';
import { isObject, type JsonRpcResponse, type Message } from '../jsonrpc/messages.js';
import type { DecidedBy } from '../policy/decide.js';
import type { Outcome } from '../protocol/api.js';
import type { Call } from './call.js';
import type { CallBudget } from './call-budget.js';
import { capturedResult } from './capture.js';
import type { PipelineCore } from './pipeline-core.js';
import { type CallStage, composeAfterResult, composeBeforeForward, type PreForwardResult } from './stages.js';
import { inputRequired } from './era.js';
import { taskHandle } from './tasks.js';

const STRUCTURED_CHECK_MAX_BYTES = 1024 * 1024;

export class Forwarding {
  private beforeForward = composeBeforeForward<Call>([]);
  private afterResult = composeAfterResult([]);

  constructor(
    private readonly core: PipelineCore,
    private readonly budget: CallBudget,
  ) {}

  /** The hooks, in order (composed again whenever one is added). */
  stagesChanged(stages: readonly CallStage[]): void {
    this.beforeForward = composeBeforeForward<Call>(stages);
    this.afterResult = composeAfterResult(stages);
  }

  /** Calls that ran without a tripwire place turned out to change something: the broker counts them. */
  charge(n: number): void {
    this.budget.charge(n);
  }

  /** Allowed: the pre-forward hooks run, then the call is forwarded (in this tick when no hook waits). */
  allow(call: Call, decidedBy: DecidedBy, detail: string): void {
    const core = this.core;
    call.decision = 'allow';
    call.decidedBy = decidedBy;
    call.detail = detail;
    call.decidedAt ??= core.o.clock.now();
    call.to('preparing');
    this.beforeForward(call, this.prepared);
  }

  /** The pre-forward hooks are through (one function for every call: no closure each). */
  private readonly prepared = (call: Call, r: PreForwardResult): void => {
    const core = this.core;
    try {
      if (call.state !== 'preparing') return;
      if (!r.ok) return core.deny(call, r.decidedBy, r.reason);
      // a hook took its time: what the broker said meanwhile still holds
      if (r.waited && core.o.link.policy?.estop === true) return core.deny(call, 'estop', 'E-Stop is on: every tool call is refused');
      this.forward(call);
    } catch (err) {
      core.failed(call, err);
    }
  };

  /** About to be forwarded: a changing call takes a tripwire place first, or waits for one. */
  private forward(call: Call): void {
    const core = this.core;
    const down = core.o.unavailable();
    if (down) return core.deny(call, down.decidedBy, down.reason);
    if (!this.needsPlace(call)) return this.send(call);
    const now = this.budget.admit({
      live: () => call.state === 'preparing',
      go: () => {
        let sent = false;
        core.guarded(call, () => {
          // it waited: E-Stop, a lost broker or a stopped server since then still wins
          const policy = core.o.link.policy;
          const gone = core.o.unavailable();
          if (!policy || policy.estop) return core.deny(call, policy ? 'estop' : 'broker-down', policy ? 'E-Stop is on: every tool call is refused' : 'Airlock is not running');
          if (gone) return core.deny(call, gone.decidedBy, gone.reason);
          this.send(call);
          sent = true;
        });
        return sent;
      },
      refuse: (d) => core.guarded(call, () => core.deny(call, d.decidedBy, d.reason)),
    });
    if (now) this.send(call);
  }

  /**
   * Does this call need a tripwire place? Every changing call does while the tripwire is on (and when the policy is
   * gone, so nothing is known): only a read-only claim the person trusts, still unwithdrawn now, does not.
   */
  private needsPlace(call: Call): boolean {
    const policy = this.core.o.link.policy;
    if (policy && policy.tripwire !== true) return false;
    // a retry of a call that asked for input took its place in the first round: it is the same call
    if (call.round) return false;
    return !(call.verdict?.class === 'read-only-trusted' && this.core.verdictOf(call.tool).class === 'read-only-trusted');
  }

  private send(call: Call): void {
    const core = this.core;
    call.forward();
    call.readOnly = call.verdict !== undefined && isReadOnlyClass(call.verdict.class);
    core.sent(call);
    core.o.toUpstream(call.message);
    core.journal(call);
  }

  /** The server answered a forwarded call: relay its bytes, then the post-result hooks, then the journal. */
  serverAnswered(call: Call, m: Message, raw: Buffer): void {
    const core = this.core;
    const o = core.o;
    const result = m.result;
    let outcome: Outcome = 'ok';
    if (m.error !== undefined) outcome = 'rpc-error';
    else if (isObject(result) && result.isError === true) outcome = 'tool-error';
    if (call.answered) {
      // ended while running: the answer only reaches the journal
    } else if (call.internal) {
      // an undo's inverse that the server made a task has not ended: the undo cannot say it was done
      const made = outcome === 'ok' && taskHandle(result) !== undefined;
      core.endInternal(call, made ? { kind: 'unknown', reason: 'the server ran the inverse as a task; whether it finished is unknown' } : { kind: 'answered', message: m as unknown as JsonRpcResponse });
    } else {
      o.relayToClient(raw);
      // The answer leaves in this tick's write; what the journal and the post-result hooks make of it runs after
      // that write, off the client's wait (no input is read in between, so nothing can overtake it).
      const clock = core.o.clock;
      if (clock.afterWrites) return clock.afterWrites(() => this.afterAnswer(call, m, raw, outcome));
    }
    this.afterAnswer(call, m, raw, outcome);
  }

  /** What follows the answer: what the journal keeps of it, a further round or a task, the hooks, the entry. */
  private afterAnswer(call: Call, m: Message, raw: Buffer, outcome: Outcome): void {
    const core = this.core;
    const o = core.o;
    const result = m.result;
    try {
      call.result = capturedResult(m, raw);
    } catch (err) {
      // what the journal keeps of a result must never stand in the way of the result itself
      o.log(`airlock: could not keep the result of call ${call.callId} for the journal: ${(err as Error).message}`);
    }
    const asked = outcome === 'ok' && !call.answered && !call.cancelled && !call.internal ? inputRequired(result) : undefined;
    if (asked) {
      // not the call's end either: the client calls again with the input, and that request continues this call
      call.result = undefined;
      call.to('done');
      core.roundOpened(call, asked);
      return;
    }
    const handle = outcome === 'ok' && o.taskCreated ? taskHandle(result) : undefined;
    if (handle) {
      // not the call's end: the server works on, and the task's end is the call's (journaled by tasks.ts)
      call.to('done');
      o.taskCreated!(call, handle);
      return;
    }
    const note = call.answered
      ? `; the server answered afterwards (${outcome})`
      : call.cancelled
        ? `; cancelled by the client, the server answered anyway (${outcome})`
        : undefined;
    call.finish({ by: 'server', outcome, note });
    if (outcome === 'ok' && isObject(result) && result.structuredContent !== undefined && raw.length < STRUCTURED_CHECK_MAX_BYTES) {
      if (o.verdicts.listing.outputSchema(call.tool) !== undefined) {
        // the broker checks it against the schema the catalog report told it: the report due goes first
        o.verdicts.reportNow();
        o.link.structured(call.tool, result.structuredContent);
      }
    }
    const after = this.afterResult;
    if (!after) return core.journal(call);
    after(call, { message: m, raw, outcome }, (problems) => {
      if (problems.length > 0) {
        for (const p of problems) o.log(`airlock: ${p} (call ${call.callId}, "${call.tool}")`);
        call.detail += `; ${problems.join('; ')}`;
      }
      core.journal(call);
    });
  }
}
