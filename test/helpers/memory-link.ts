/**
 * A broker link in memory (implements BrokerLinkLike): the test plays the broker. It pushes policies, answers
 * asks when it chooses, and reads back what the wrapper journaled, cancelled and reported, with no socket and
 * no broker process.
 */
import { EventEmitter } from 'node:events';
import type { PolicySnapshot } from '../../proxy-core/src/policy/decide.js';
import type { AskAnswer, AskRequest, CallRecord } from '../../proxy-core/src/protocol/api.js';
import type { BrokerLinkLike, LinkState } from '../../proxy-core/src/wrap/broker-link.js';
import type { JournalEntry } from '../../proxy-core/src/wrap/journal-entry.js';
import type { BudgetGrant } from '../../proxy-core/src/wrap/call-budget.js';

export interface PendingAsk {
  request: AskRequest;
  ticketId: string;
  answer(a: Partial<AskAnswer> & Pick<AskAnswer, 'decision'>): void;
  fail(err: Error & { code?: string }): void;
}

export const OPEN_POLICY: PolicySnapshot = { version: 1, estop: false, rules: [], sessionAllows: [], trustReadOnlyHints: false, withdrawn: {} };

export class MemoryLink extends EventEmitter implements BrokerLinkLike {
  state: LinkState = 'up';
  policy: PolicySnapshot | null;
  /** Asks not answered yet, oldest first. */
  readonly asks: PendingAsk[] = [];
  /** Every ask ever made. */
  readonly asked: AskRequest[] = [];
  readonly cancelled: string[] = [];
  /** Call ids the wrapper asked the broker to keep open past the session (answered "still waiting"). */
  readonly kept: string[] = [];
  /** Every record sent, in order (a call is journaled at its decision and again at its end). */
  readonly sent: CallRecord[] = [];
  readonly catalogs: { verdicts: unknown[]; problems: string[] }[] = [];
  readonly observations: { tool: string; evidence: string }[] = [];
  /** Tripwire asks and reports, in order; `grant` answers each ask (default: every place wanted). */
  readonly budgetAsks: { used: number; want: number; waiting: boolean }[] = [];
  readonly budgetReports: { used: number; returned: number }[] = [];
  grant: (ask: { used: number; want: number; waiting: boolean }) => BudgetGrant | Promise<BudgetGrant> = (a) => ({ granted: a.want });
  private tickets = 0;

  constructor(policy: Partial<PolicySnapshot> | null = {}) {
    super();
    this.policy = policy === null ? null : { ...OPEN_POLICY, ...policy };
    if (policy === null) this.state = 'down';
  }

  /** The latest record of each call, by call id. */
  get latest(): Map<string, CallRecord> {
    const byId = new Map<string, CallRecord>();
    for (const r of this.sent) byId.set(r.id, r);
    return byId;
  }

  /** The latest records, in the order the calls were first journaled. */
  records(): CallRecord[] {
    return [...this.latest.values()];
  }

  /** A policy push from the broker (version bumped). */
  push(change: Partial<PolicySnapshot>): void {
    const base = this.policy ?? OPEN_POLICY;
    this.policy = { ...base, ...change, version: base.version + 1 };
    this.emit('policy', this.policy);
  }

  /** The link goes down (policy dropped), as when the broker dies. */
  drop(): void {
    this.state = 'down';
    this.policy = null;
    this.emit('lost');
    for (const a of this.asks.splice(0)) a.fail(new Error('connection to Airlock lost'));
  }

  ensureUp(): Promise<boolean> {
    return Promise.resolve(this.state === 'up');
  }

  ask(request: AskRequest): Promise<AskAnswer> {
    if (this.state !== 'up') return Promise.reject(new Error('Airlock is not connected'));
    this.asked.push(request);
    const ticketId = `t${++this.tickets}`;
    return new Promise((resolve, reject) => {
      const pending: PendingAsk = {
        request,
        ticketId,
        answer: (a) => {
          this.asks.splice(this.asks.indexOf(pending), 1);
          resolve({ ticketId, decidedBy: 'user', reason: a.decision === 'allow' ? 'approved' : 'denied', ...a });
        },
        fail: (err) => {
          const i = this.asks.indexOf(pending);
          if (i !== -1) this.asks.splice(i, 1);
          reject(err);
        },
      };
      this.asks.push(pending);
      // the broker says which ticket the ask opened, as a notification after the request
      queueMicrotask(() => this.emit('ticket', { callId: request.callId, ticketId }));
    });
  }

  /** The oldest pending ask (throws when there is none). */
  nextAsk(): PendingAsk {
    const a = this.asks[0];
    if (!a) throw new Error('no pending ask');
    return a;
  }

  keep(callId: string): void {
    this.kept.push(callId);
  }

  cancel(callId: string): void {
    this.cancelled.push(callId);
    const i = this.asks.findIndex((a) => a.request.callId === callId);
    if (i !== -1) this.asks.splice(i, 1);
  }

  /** Built at once: the test sees every copy as it stood when it was journaled. */
  journalLater(_id: string, build: () => JournalEntry): void {
    this.journal(build());
  }

  /** The entry as the broker reads it: its text, parsed. */
  journal(entry: JournalEntry): void {
    this.sent.push(JSON.parse(entry.text) as CallRecord);
  }

  catalog(verdicts: unknown[], problems: string[]): void {
    this.catalogs.push({ verdicts, problems });
  }

  observed(contradictions: { tool: string; evidence: string }[]): void {
    this.observations.push(...contradictions);
  }

  structured(): void {}

  budget(ask: { used: number; want: number; waiting: boolean }): Promise<BudgetGrant> {
    if (this.state !== 'up') return Promise.reject(new Error('Airlock is not connected'));
    this.budgetAsks.push(ask);
    return Promise.resolve(this.grant(ask));
  }

  budgetReport(used: number, returned: number): void {
    this.budgetReports.push({ used, returned });
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): void {
    this.state = 'down';
  }
}
