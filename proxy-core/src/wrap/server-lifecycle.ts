/**
 * The server's life behind the wrapper, apart from what decides it (E-Stop, estop.ts): up, being terminated
 * (stopping), down, being started again (restarting), or gone for good. Terminating answers whatever waits on the
 * old process and ends its tree; restarting starts the same command again and replays the client's `initialize`
 * (its answer is the wrapper's, never the client's), so the client goes on as before; where that is not safe,
 * the client is told plainly that it must restart the server, and the server is `gone`.
 *
 *   up ─(terminate)▶ stopping ─(process gone)▶ down ─(restart)▶ restarting ─▶ up
 *                                                                          └▶ gone
 */
import { idKey, type JsonRpcResponse } from '../jsonrpc/messages.js';
import type { Clock } from '../util/clock.js';
import type { InFlight } from './in-flight.js';
import type { CallPipeline } from './pipeline.js';
import type { InitCapture } from './restart.js';
import type { TaskBook } from './tasks.js';
import { RESERVED_ID_PREFIX, type ToolListing } from './tool-listing.js';

export type UpstreamState = 'up' | 'stopping' | 'down' | 'restarting' | 'gone';

/** What the wrapper can do to the process behind it (given by run-wrapper.ts; absent in some tests). */
export interface UpstreamControl {
  /** Terminate the server's process tree now; its end is reported through `Relay.upstreamEnded`. */
  terminate(): void;
  /** Start the same server again (its messages then arrive as before); why not, when it cannot be. */
  respawn(): Promise<string | null>;
}

export interface LifecycleContext {
  server: string;
  clock: Clock;
  calls: Pick<CallPipeline, 'upstreamExited'>;
  tasks: Pick<TaskBook, 'upstreamExited'>;
  listing: ToolListing;
  init: InitCapture;
  inFlight: InFlight;
  upstream: UpstreamControl | undefined;
  /** How long the restarted server may take to answer the replayed initialize. */
  restartTimeoutMs: number;
  log(msg: string): void;
  toClient(message: unknown): void;
  toUpstream(message: unknown): void;
  /** Has the client said `notifications/initialized` (so the restarted server is told it too)? */
  initialized(): boolean;
  /** The server is going away: answer the client's requests it was sent and will never answer. */
  abandonRequests(why: string): void;
  /** The server takes messages again (or never will): what the client sent meanwhile goes on. */
  resumed(): void;
  /** Is E-Stop on now (a server that went down is then started again only on release)? */
  estopOn(): boolean;
}

export class ServerLifecycle {
  private current: UpstreamState = 'up';
  private goneWhy = '';
  private readonly replayPrefix = `${RESERVED_ID_PREFIX}restart:`;
  private replays = 0;
  private replay: { id: string; done(answer: JsonRpcResponse | null): void } | undefined;

  constructor(private readonly o: LifecycleContext) {}

  get state(): UpstreamState {
    return this.current;
  }

  /** Can this wrapper terminate the server at all? */
  get controllable(): boolean {
    return this.o.upstream !== undefined;
  }

  /**
   * The server process ended. True when the wrapper did it (or it was meant to be replaced), so the wrapper
   * stays up for the restart; false when it ended by itself, and the wrapper ends with it.
   */
  upstreamEnded(description: string): boolean {
    switch (this.current) {
      case 'up':
        return false;
      case 'stopping':
        this.current = 'down';
        this.o.log(`airlock: the MCP server "${this.o.server}" ${description} (E-Stop); it is started again when E-Stop is released`);
        if (!this.o.estopOn()) void this.restart();
        return true;
      case 'restarting':
        this.fail(`it ${description} while it was being restarted`, false);
        return true;
      default:
        return true;
    }
  }

  /** Terminate the server's tree now (`why` is logged): whatever waits on the old process is answered first. */
  terminate(why: string): void {
    const control = this.o.upstream;
    if (this.current !== 'up' || !control) return;
    this.current = 'stopping';
    this.o.log(`airlock: E-Stop: terminating the MCP server "${this.o.server}" and every process it started: ${why}`);
    // from now on nothing the old process says is relayed; whatever waits on it is answered now
    this.o.listing.abandon();
    this.o.listing.markStale();
    this.o.calls.upstreamExited("was stopped by Airlock's E-Stop");
    this.o.tasks.upstreamExited("was stopped by Airlock's E-Stop");
    this.o.abandonRequests(`the MCP server "${this.o.server}" was stopped by Airlock's E-Stop before answering`);
    control.terminate();
  }

  /** Start the server again and replay the client's session; on any doubt, give up and say so. */
  async restart(): Promise<void> {
    if (this.current !== 'down') return;
    this.current = 'restarting';
    const control = this.o.upstream;
    const unsafe = this.o.init.unsafe() ?? (control ? null : 'this wrapper cannot start it');
    if (unsafe !== null || !control) return this.fail(unsafe ?? 'this wrapper cannot start it', false);
    this.o.log(`airlock: E-Stop released: starting the MCP server "${this.o.server}" again`);
    let why: string | null;
    try {
      why = await control.respawn();
    } catch (err) {
      why = `it could not be started again: ${(err as Error).message}`;
    }
    if (this.current !== 'restarting') return;
    if (why !== null) return this.fail(why, false);
    if (!this.o.init.stateless) {
      const answer = await this.handshake();
      if (this.current !== 'restarting') return;
      const mismatch = answer ? this.o.init.mismatch(answer) : `it did not answer initialize within ${this.o.restartTimeoutMs / 1000} s`;
      if (mismatch !== null) return this.fail(mismatch, true);
      if (this.o.initialized()) this.o.toUpstream({ jsonrpc: '2.0', method: 'notifications/initialized' });
    }
    this.current = 'up';
    // the tools are listed afresh before the next call is decided (a listing the old process left unanswered is
    // dropped first, so the new one is not kept waiting behind it)
    this.o.listing.abandon();
    this.o.listing.allowListing();
    this.o.listing.markStale();
    this.o.log(`airlock: the MCP server "${this.o.server}" was restarted after E-Stop; the client's session goes on`);
    this.o.resumed();
  }

  /** Why the server cannot be given back to the client (once it is `gone`). */
  goneText(): string {
    return (
      `the MCP server "${this.o.server}" was stopped by Airlock's E-Stop and could not be restarted (${this.goneWhy}); ` +
      'restart it from your MCP client (reconnect the server, or restart the client)'
    );
  }

  /** Send the client's initialize to the new process; its answer, or null when none came in time. */
  private handshake(): Promise<JsonRpcResponse | null> {
    const id = `${this.replayPrefix}${++this.replays}`;
    return new Promise((resolve) => {
      const timer = this.o.clock.setTimeout(() => done(null), this.o.restartTimeoutMs);
      const done = (answer: JsonRpcResponse | null) => {
        if (this.replay?.id !== id) return;
        this.replay = undefined;
        this.o.inFlight.forget(idKey(id));
        this.o.clock.clearTimeout(timer);
        resolve(answer);
      };
      this.replay = { id, done };
      // (an answer to the replay is the wrapper's: routed here, never to the client)
      this.o.inFlight.expect(idKey(id), { method: 'initialize', answered: (m) => done(m as unknown as JsonRpcResponse) });
      this.o.toUpstream(this.o.init.replay(id));
    });
  }

  /** The server cannot be given back to the client: refuse from now on, and tell the client why, once. */
  private fail(why: string, stopNew: boolean): void {
    this.current = 'gone';
    this.goneWhy = why;
    this.replay?.done(null);
    const text = this.goneText();
    this.o.log(`airlock: ${text}`);
    this.o.toClient({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', logger: 'airlock/estop', data: text } });
    if (stopNew) this.o.upstream?.terminate();
    this.o.resumed();
  }
}
