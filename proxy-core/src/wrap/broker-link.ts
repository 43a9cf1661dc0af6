/**
 * The wrapper's line to the broker: keeps the pushed policy, asks for tickets, and streams the journal.
 * It reconnects by itself; while it is down every call fails closed (the relay checks `state`). Journal
 * entries (journal-queue.ts: spilled to disk while the broker cannot take them) and observations are held until
 * the broker acknowledges them, and sent again after a reconnect.
 *
 * A broker that hangs (stopped, deadlocked) keeps its socket open, so a closed socket is not enough to
 * notice it: a heartbeat is. A broker that leaves a ping unanswered for HEARTBEAT_DEAD_MS is treated as down.
 */
import { EventEmitter } from 'node:events';
import { type Channel, IpcError } from '../ipc/channel.js';
import { connectBroker } from '../ipc/connect.js';
import type { BrokerEndpoint } from '../ipc/paths.js';
import { BrokerNote, BrokerToWrapper, PING, WrapperMethod, WrapperNote } from '../protocol/names.js';
import type { AskAnswer, AskRequest, SessionOpen, WrapperParamsOf, WrapperResultOf } from '../protocol/api.js';

import { isObject } from '../jsonrpc/messages.js';
import { type PolicySnapshot, readPins } from '../policy/decide.js';
import type { PrepareAnswer, PrepareRequest } from '../protocol/undo-api.js';
import { readFileTools } from './undo-stage.js';
import type { JournalEntry } from './journal-entry.js';
import { JournalQueue, maxHeld } from './journal-queue.js';
import { JournalSender } from './journal-sender.js';
import { CatalogReports } from './catalog-reports.js';
import type { BudgetGrant } from './call-budget.js';

type SessionOpened = WrapperResultOf<'session.open'>;
/** A read-only claim the wrapper saw contradicted, with the evidence. */
export type ObservedContradiction = WrapperParamsOf<'observed'>['contradictions'][number];
export type LinkState = 'connecting' | 'up' | 'down';

/** What the relay needs from a broker link; tests can supply their own. */
export interface BrokerLinkLike extends EventEmitter {
  readonly state: LinkState;
  readonly policy: PolicySnapshot | null;
  /** Wait until connected, trying now if down; false when not up within `timeoutMs`. */
  ensureUp(timeoutMs: number): Promise<boolean>;
  ask(req: AskRequest): Promise<AskAnswer>;
  cancel(callId: string): void;
  /** The call was answered "still waiting": the broker keeps its ticket open after this session ends. */
  keep(callId: string): void;
  /** Hold a call's entry (its latest state, by id) until the broker acknowledges it; sent in batches. */
  journal(entry: JournalEntry): void;
  /**
   * The same for a call still open, whose entry is written only when a batch or the spill takes it (its latest
   * state then): a quick call's copy at forwarding is replaced by its final one before it is ever written.
   */
  journalLater(id: string, build: () => JournalEntry): void;
  catalog(verdicts: unknown[], problems: string[]): void;
  observed(contradictions: ObservedContradiction[]): void;
  structured(tool: string, structuredContent: unknown): void;
  /** Report tripwire places used and ask for more (wrap/call-budget.ts); rejects when the broker is not there. */
  budget(ask: { used: number; want: number; waiting: boolean }): Promise<BudgetGrant>;
  budgetReport(used: number, returned: number): void;
  flush(timeoutMs: number): Promise<void>;
  close(): void;
}

/** Past this many unacknowledged entries in memory (broker gone for long), refused calls' are counted, not kept. */
const MAX_HELD = maxHeld(process.env.AIRLOCK_JOURNAL_MEMORY_ENTRIES);
/** How often the broker is pinged, and how long an unanswered ping may stay so before the link is down. */
const HEARTBEAT_MS = 400;
const HEARTBEAT_DEAD_MS = 1000;
/** An ask outlives the broker's own ticket timeout by this much before the wrapper gives up on it. */
const ASK_GRACE_MS = 5000;
const DEFAULT_TICKET_TIMEOUT_S = 120;
/** How long a call waits for its files' snapshot before it is denied (reading a file at the cap takes far less). */
const PREPARE_TIMEOUT_MS = 10_000;
/** How long a changing call waits for a tripwire place (the broker answers within its reclaim wait, 3 s). */
const BUDGET_TIMEOUT_MS = 10_000;

export class BrokerLink extends EventEmitter implements BrokerLinkLike {
  state: LinkState = 'down';
  policy: PolicySnapshot | null = null;
  private channel: Channel | null = null;
  private connecting: Promise<boolean> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs = 100;
  private closed = false;
  /** Journal entries until the broker acknowledges them: in memory, and on disk while it cannot take them. */
  private readonly queue: JournalQueue;
  private readonly sender: JournalSender;
  private readonly catalogs: CatalogReports;
  private unsentObservations: ObservedContradiction[] = [];
  private heartbeat: NodeJS.Timeout | null = null;
  /** When the oldest unanswered ping was sent (null: none outstanding). */
  private pingSentAt: number | null = null;
  private pingCounter = 0;
  private ticketTimeoutSeconds = DEFAULT_TICKET_TIMEOUT_S;
  /** Runs a tools/call the broker asks for (a declared inverse, for an undo): the relay's, set by run-wrapper. */
  toolCaller: ((params: unknown) => Promise<unknown>) | null = null;
  /** Serves a held call's whole arguments a page at a time (wrap/held-arguments.ts). */
  heldArguments: ((params: unknown) => unknown) | null = null;

  constructor(
    private readonly dir: string,
    private readonly session: SessionOpen,
    private readonly log: (msg: string) => void,
    /** Where the broker is, when not the broker of `dir` (the system broker); `dir` still holds the spill. */
    private readonly endpoint?: BrokerEndpoint,
  ) {
    super();
    this.queue = new JournalQueue(dir, MAX_HELD, log);
    this.sender = new JournalSender(this.queue, () => (this.state === 'up' ? this.channel : null));
    this.catalogs = new CatalogReports(() => (this.state === 'up' ? this.channel : null), log);
  }

  start(): void {
    void this.connect();
  }

  ensureUp(timeoutMs: number): Promise<boolean> {
    if (this.state === 'up') return Promise.resolve(true);
    const attempt = this.connect();
    return Promise.race([attempt, new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs).unref())]);
  }

  private connect(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.connecting) return this.connecting;
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    this.state = 'connecting';
    this.connecting = (async () => {
      try {
        const channel = await connectBroker({ dir: this.dir, role: 'wrapper', timeoutMs: 1500, ...(this.endpoint ? { endpoint: this.endpoint } : {}) });
        channel.setHandlers({
          notify: (method, params) => this.onNotify(method, params),
          // what the broker may ask a wrapper (a front end's `wrapper.request`): who it is and how it is
          request: (method, params) => {
            if (method === BrokerToWrapper.callTool && this.toolCaller) return this.toolCaller(params);
            if (method === BrokerToWrapper.heldArguments && this.heldArguments) return this.heldArguments(params);
            if (method !== BrokerToWrapper.status) throw new IpcError('unknown-method', `a wrapper does not answer ${method}`);
            return {
              server: this.session.server,
              client: this.session.client,
              pid: this.session.pid,
              policyVersion: this.policy?.version ?? null,
              journalHeld: this.queue.size,
              journalSpillFiles: this.queue.spillFiles,
              ticketTimeoutSeconds: this.ticketTimeoutSeconds,
            };
          },
          close: () => this.onLost(channel),
        });
        // the working directory goes along: a server this wrapper starts inherits it, so the broker can read a
        // relative path argument as the server most likely will
        const opened = await channel.request<SessionOpened>(WrapperMethod.sessionOpen, { cwd: workingDir(), ...this.session }, 5000);
        if (this.closed) {
          channel.destroy();
          return false;
        }
        this.channel = channel;
        this.queue.connected(typeof opened.sessionId === 'string' ? opened.sessionId : undefined);
        this.applyPolicy(opened.policy);
        this.applyTicketTimeout(opened.ticketTimeoutSeconds);
        this.startHeartbeat(channel);
        this.state = 'up';
        this.retryMs = 100;
        this.resend();
        return true;
      } catch {
        this.state = 'down';
        if (!this.closed) this.scheduleRetry();
        return false;
      } finally {
        this.connecting = null;
      }
    })();
    return this.connecting;
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, 1000);
  }

  private startHeartbeat(channel: Channel): void {
    this.stopHeartbeat();
    this.pingSentAt = null;
    this.heartbeat = setInterval(() => {
      if (this.channel !== channel) return this.stopHeartbeat();
      const now = performance.now();
      if (this.pingSentAt === null) {
        this.pingSentAt = now;
        channel.notify(PING, { n: ++this.pingCounter });
        return;
      }
      if (now - this.pingSentAt < HEARTBEAT_DEAD_MS) return;
      // Timers run before pending socket reads: if this process itself was busy, the pong may be waiting to be
      // read. Look again after the poll phase before calling the broker dead.
      setImmediate(() => {
        if (this.channel !== channel || this.pingSentAt === null || performance.now() - this.pingSentAt < HEARTBEAT_DEAD_MS) return;
        this.log(`airlock: Airlock's broker did not answer for ${HEARTBEAT_DEAD_MS} ms; treating it as down (every call is refused until it answers again)`);
        channel.destroy(new Error('the broker stopped answering'));
      });
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  private onLost(channel: Channel): void {
    if (this.channel !== channel) return;
    this.stopHeartbeat();
    this.channel = null;
    this.policy = null;
    this.state = 'down';
    // what the broker had not acknowledged may have died with it: executed calls' records go to disk now
    this.queue.spillSoon(0);
    this.catalogs.lost();
    this.emit('lost');
    this.scheduleRetry();
  }

  private onNotify(method: string, params: unknown): void {
    if (method === BrokerNote.pong) {
      this.pingSentAt = null;
      return;
    }
    if (method === BrokerNote.policy && isObject(params)) {
      this.applyPolicy(params as unknown as PolicySnapshot);
      this.channel?.notify(WrapperNote.policyAck, { version: this.policy?.version });
    } else if (method === BrokerNote.ticket && isObject(params)) {
      this.emit('ticket', params);
    } else if (method === BrokerNote.budgetReclaim) this.emit('budget-reclaim');
  }

  private applyPolicy(p: PolicySnapshot): void {
    // a malformed snapshot must not loosen anything: fall back to the strictest reading of each field
    this.policy = {
      version: typeof p.version === 'number' ? p.version : 0,
      estop: p.estop !== false,
      rules: Array.isArray(p.rules) ? p.rules : [],
      sessionAllows: Array.isArray(p.sessionAllows) ? p.sessionAllows.filter((s) => typeof s === 'string') : [],
      trustReadOnlyHints: p.trustReadOnlyHints === true,
      withdrawn: isObject(p.withdrawn) ? (p.withdrawn as Record<string, string>) : {},
      // absent or malformed: the wrapper's default grace (wrap/estop.ts)
      ...(typeof p.estopGraceSeconds === 'number' && p.estopGraceSeconds >= 0 && p.estopGraceSeconds <= 3600 ? { estopGraceSeconds: p.estopGraceSeconds } : {}),
      // pinned tool definitions: unreadable ones hold every tool (policy/decide.ts)
      ...(p.pins === undefined ? {} : { pins: readPins(p.pins) }),
      // tools whose files the broker snapshots before a call (undo-stage.ts): a call of one waits for it
      ...(p.fileTools === undefined ? {} : { fileTools: readFileTools(p.fileTools) }),
      // tools with a declared inverse: a rule on whether a call can be undone judges by it (policy/undo-plan.ts)
      ...(Array.isArray(p.inverseTools) ? { inverseTools: p.inverseTools.filter((t) => typeof t === 'string') } : {}),
      // the broker cannot journal calls (its disk is full): every call is refused, saying why
      ...(typeof p.journalDown === 'string' ? { journalDown: p.journalDown.slice(0, 1000) } : {}),
      // a changing call needs a tripwire place unless the broker says the tripwire is off
      tripwire: p.tripwire !== false,
    };
    // the ticket timeout is a setting: a push carries its current value (an older broker's push does not)
    this.applyTicketTimeout(p.ticketTimeoutSeconds);
    this.emit('policy', this.policy);
  }

  private applyTicketTimeout(seconds: unknown): void {
    if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0) this.ticketTimeoutSeconds = seconds;
  }

  /** Have the broker record the prior state of the files a call names, before it is sent (undo-stage.ts). */
  prepare(req: PrepareRequest): Promise<PrepareAnswer> {
    if (!this.channel || this.state !== 'up') return Promise.reject(new Error('Airlock is not connected'));
    return this.channel.request<PrepareAnswer>(WrapperMethod.prepare, req, PREPARE_TIMEOUT_MS);
  }

  journalSoon(): void {
    if (this.state === 'up') this.sender.sendSoon();
  }

  ask(req: AskRequest): Promise<AskAnswer> {
    if (!this.channel || this.state !== 'up') return Promise.reject(new Error('Airlock is not connected'));
    // the broker ends every ticket itself (answer, timeout, E-Stop); this bound only catches a broker that forgot
    const timeoutMs = this.ticketTimeoutSeconds * 1000 + ASK_GRACE_MS;
    // the ticket shows the person the listing the call was decided on: behind any report still waiting here
    return this.catalogs.ask(req.callId, (channel) => channel.request<AskAnswer>(WrapperMethod.ask, req, timeoutMs));
  }

  cancel(callId: string): void {
    // an ask still behind a report is never sent (withdrawn): there is no ticket to cancel
    if (!this.catalogs.withdraw(callId)) this.channel?.notify(WrapperNote.cancel, { callId });
  }

  /** The call was answered "still waiting": the broker keeps its ticket open after this session ends. */
  keep(callId: string): void {
    this.channel?.notify(WrapperNote.keep, { callId });
  }

  journal(entry: JournalEntry): void {
    this.queue.add(entry);
    this.held();
  }

  journalLater(id: string, build: () => JournalEntry): void {
    this.queue.addLater(id, build);
    this.held();
  }

  private held(): void {
    // while the broker is away, executed calls' records reach the disk in batches (one fsync each)
    if (this.state !== 'up') this.queue.spillSoon();
    this.sender.scheduleFlush();
  }

  catalog(verdicts: unknown[], problems: string[]): void {
    this.catalogs.add({ verdicts, problems });
  }

  observed(contradictions: ObservedContradiction[]): void {
    this.unsentObservations.push(...contradictions);
    this.sendObservations();
  }

  structured(tool: string, structuredContent: unknown): void {
    // checked against the output schema a catalog report told the broker: behind any report still waiting here
    this.catalogs.afterReports({ send: (channel) => channel.notify(WrapperNote.structured, { tool, structuredContent }) });
  }

  budget(ask: { used: number; want: number; waiting: boolean }): Promise<BudgetGrant> {
    if (!this.channel || this.state !== 'up') return Promise.reject(new Error('Airlock is not connected'));
    return this.channel.request<BudgetGrant>(WrapperMethod.budget, ask, BUDGET_TIMEOUT_MS);
  }

  budgetReport(used: number, returned: number): void {
    this.channel?.notify(WrapperNote.budgetReport, { used, returned });
  }

  private resend(): void {
    if (!this.channel) return;
    this.catalogs.reconnected();
    this.sendObservations();
    this.sender.scheduleFlush();
  }

  private sendObservations(): void {
    const channel = this.channel;
    if (!channel || this.state !== 'up' || this.unsentObservations.length === 0) return;
    const batch = this.unsentObservations;
    this.unsentObservations = [];
    channel.request(WrapperMethod.observed, { contradictions: batch }).catch(() => {
      this.unsentObservations.unshift(...batch);
    });
  }

  /** Send what is held and wait for the acks, at most `timeoutMs`. */
  async flush(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while ((this.queue.size > 0 || this.queue.spillFiles > 0) && Date.now() < until && this.state !== 'down') {
      if (this.state === 'up') void this.sender.send();
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  close(): void {
    // places for changing calls this wrapper did not use go back while the connection is still there
    this.emit('closing');
    this.closed = true;
    this.stopHeartbeat();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.sender.close();
    // what the broker has not acknowledged stays on disk, for it to pick up once this process is gone
    const lost = this.queue.leave();
    if (lost.executed > 0 || lost.notRun > 0) this.log(`airlock: ${lost.executed} journal entries of calls that ran and ${lost.notRun} of refused calls could not be kept`);
    this.channel?.end();
    this.channel = null;
    this.state = 'down';
  }
}

/**
 * This process's working directory; undefined when it is gone (removed under us) or longer than the protocol
 * takes: the broker then knows none, and says so rather than guess (a too-long one would cost the session).
 */
function workingDir(): string | undefined {
  try {
    const cwd = process.cwd();
    return cwd.length <= 4096 ? cwd : undefined;
  } catch {
    return undefined;
  }
}
