/**
 * E-Stop, hard: what the wrapper does beyond refusing the next call. When a policy with E-Stop arrives, every
 * call the server is running is answered to its client at once ("stopped by E-Stop") and the server is sent
 * `notifications/cancelled` for it. A server that has not answered such a call within the grace (the
 * `estop-grace-seconds` setting) has its process tree terminated: the MCP SDK never answers a cancelled request,
 * so a server that stopped and one that ignored the cancellation look alike, and E-Stop does not bet on the
 * first. While the server is down, a call is refused and any other request gets an error, never a wait. On
 * release it is started again and the client's `initialize` replayed (answers consumed here), so the client
 * goes on as before; where that is not safe, the client is told plainly that it must restart the server.
 * A call that runs as an MCP task (tasks.ts) is a running call too: it is sent `tasks/cancel`, and the grace
 * waits for the task to end.
 *
 * What the client sends after release never reaches a server the stop before it is still to end: while the
 * server is being terminated, or still runs a call E-Stop stopped whose grace is not over, it waits here (held
 * like the lines sent during a restart) and goes on to the server that is left: the same one once it let go of
 * every stopped call, else the one started after the termination.
 *
 * The server's own life (terminating, restarting, the replay) is server-lifecycle.ts: E-Stop decides when.
 *
 *   up ─(grace over, a stopped call unanswered)▶ stopping ─(process gone)▶ down ─(release)▶ restarting ─▶ up
 *                                                                                                     └▶ gone
 */
import type { PolicySnapshot } from '../policy/decide.js';
import { monotonic, type Timer } from '../util/clock.js';
import type { CallPipeline, Denial } from './pipeline.js';
import { type LifecycleContext, ServerLifecycle, type UpstreamState } from './server-lifecycle.js';
import type { TaskBook } from './tasks.js';

export type { UpstreamControl, UpstreamState } from './server-lifecycle.js';

/** What E-Stop needs: what the server's lifecycle needs (it hands that on), and the calls and tasks it stops. */
export interface HardStopContext extends Omit<LifecycleContext, 'calls' | 'tasks' | 'estopOn'> {
  calls: CallPipeline;
  /** The calls that run as tasks. */
  tasks: Pick<TaskBook, 'stopAll' | 'running' | 'upstreamExited'>;
}

const DEFAULT_GRACE_SECONDS = 2;
/** After release, how long new calls wait at most for the server to let go of what E-Stop stopped. */
const RELEASE_WAIT_MS = 10_000;
const STOPPED: Denial = { decidedBy: 'estop', reason: 'stopped by E-Stop' };
const ESTOP_ON: Denial = { decidedBy: 'estop', reason: 'E-Stop is on: every tool call is refused' };
const RESTARTING: Denial = { decidedBy: 'error', reason: 'the MCP server is being restarted after E-Stop; try again in a moment' };

export class HardStop {
  private readonly server: ServerLifecycle;
  private estop = false;
  private graceMs = DEFAULT_GRACE_SECONDS * 1000;
  private graceTimer: Timer | undefined;
  /** Calls E-Stop ended while the server ran them: call id -> when the server's grace for it is over. */
  private readonly stopped = new Map<string, number>();
  /** Released while the server still ran a stopped call within its grace: the client's lines wait. */
  private releasing = false;

  constructor(private readonly o: HardStopContext) {
    this.server = new ServerLifecycle({ ...o, estopOn: () => this.estop });
  }

  /** Where the server stands (server-lifecycle.ts). */
  get state(): UpstreamState {
    return this.server.state;
  }

  private get current(): UpstreamState {
    return this.server.state;
  }

  /** A policy push: E-Stop stops what runs; a release restarts a server E-Stop terminated. */
  policyChanged(policy: PolicySnapshot | null): void {
    // the broker is away: nothing changes here (calls fail closed meanwhile)
    if (!policy) return;
    this.estop = policy.estop;
    if (!policy.estop) {
      if (this.current === 'down') void this.server.restart();
      else if (this.current === 'up' && !this.releasing && this.stillStopped()) {
        this.releasing = true;
        this.o.log('airlock: E-Stop released while the server still runs a call it stopped: new calls wait until it lets go, or is terminated and restarted');
        // a long grace would keep them waiting past what a client waits for an answer: the grace ends sooner
        const latest = monotonic(this.o.clock) + RELEASE_WAIT_MS;
        for (const [id, deadline] of this.stopped) if (deadline > latest) this.stopped.set(id, latest);
        this.o.clock.clearTimeout(this.graceTimer);
        this.graceTimer = undefined;
        this.armGrace();
      }
      return;
    }
    if (policy.estopGraceSeconds !== undefined) this.graceMs = policy.estopGraceSeconds * 1000;
    // pressed again before the release went through: what waited meets E-Stop now
    if (this.releasing) this.endRelease();
    if (this.current !== 'up') return;
    const ended = [...this.o.calls.stopRunning(STOPPED), ...this.o.tasks.stopAll(STOPPED)];
    if (ended.length === 0) return;
    this.o.log(`airlock: E-Stop: ${ended.length} running call(s) answered as stopped; the server was told to cancel them`);
    const deadline = monotonic(this.o.clock) + this.graceMs;
    for (const id of ended) this.stopped.set(id, deadline);
    this.armGrace();
  }

  /**
   * Should a line from the client wait now? While the server is restarted, and after release while the stop
   * before it is not over (the server is being terminated, or may still be).
   */
  holdsClient(): boolean {
    if (this.current === 'restarting') return true;
    if (this.estop) return false;
    return this.current === 'stopping' || this.current === 'down' || (this.current === 'up' && this.releasing);
  }

  /** A call or task the server ran ended: a release that waited for the server to let go may go on. */
  serverLetGo(): void {
    if (this.releasing && !this.stillStopped()) this.endRelease();
  }

  /** Why the server cannot take a call now, or undefined when it can. */
  unavailable(): Denial | undefined {
    // (a line past what is held while releasing: it is not sent to a server that may be terminated under it)
    if (this.current === 'up' && this.releasing) return RESTARTING;
    if (this.current === 'up') return undefined;
    if (this.current === 'gone') return { decidedBy: 'error', reason: this.server.goneText() };
    return this.estop ? ESTOP_ON : RESTARTING;
  }

  /** The error a client request other than tools/call gets while the server is not up. */
  refusal(): string {
    if (this.current === 'gone') return this.server.goneText();
    if (this.estop) return `the MCP server "${this.o.server}" was stopped by Airlock's E-Stop; it is started again when E-Stop is released`;
    return `the MCP server "${this.o.server}" is being restarted after E-Stop; try again in a moment`;
  }

  /**
   * The server process ended. True when E-Stop did it (or it was meant to be replaced), so the wrapper stays
   * up for the restart; false when it ended by itself, and the wrapper ends with it.
   */
  upstreamEnded(description: string): boolean {
    return this.server.upstreamEnded(description);
  }

  // ---- the steps ---------------------------------------------------------------------------------------

  private armGrace(): void {
    if (this.graceTimer || this.stopped.size === 0) return;
    let next = Infinity;
    for (const deadline of this.stopped.values()) next = Math.min(next, deadline);
    // (the clock's timers are unref'd: a pending grace never keeps the wrapper alive by itself)
    this.graceTimer = this.o.clock.setTimeout(() => this.graceOver(), Math.max(0, next - monotonic(this.o.clock)));
  }

  /** A grace ran out: a stopped call the server still has not let go of means it is terminated. */
  private graceOver(): void {
    this.graceTimer = undefined;
    const now = monotonic(this.o.clock);
    let overdue = 0;
    for (const [id, deadline] of this.stopped) {
      if (!this.awaiting(id)) this.stopped.delete(id);
      else if (deadline <= now) overdue++;
    }
    if (overdue > 0) return this.terminate(`it had not stopped ${overdue} call(s) cancelled by E-Stop after ${this.graceMs / 1000} s`);
    this.serverLetGo();
    this.armGrace();
  }

  /** Does the server still run this stopped call (a call not answered, or a task not ended)? */
  private awaiting(callId: string): boolean {
    return this.o.calls.awaitingServer(callId) || this.o.tasks.running(callId);
  }

  private stillStopped(): boolean {
    for (const id of this.stopped.keys()) if (this.awaiting(id)) return true;
    return false;
  }

  /** The wait after a release is over: what the client sent meanwhile goes on. */
  private endRelease(): void {
    this.releasing = false;
    this.o.resumed();
  }

  private terminate(why: string): void {
    if (this.current !== 'up') return;
    if (!this.server.controllable) {
      this.o.log(`airlock: E-Stop: ${why}, but this server cannot be terminated from here`);
      this.stopped.clear();
      if (this.releasing) this.endRelease();
      return;
    }
    // (a release that waited now waits for the restart: the state says so)
    this.releasing = false;
    this.stopped.clear();
    this.server.terminate(why);
  }
}
