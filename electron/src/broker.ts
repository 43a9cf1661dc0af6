/**
 * The app's line to the broker. A broker already answering for the data dir (`airlock daemon` in a terminal, a
 * second front end) is attached to; otherwise the app starts its own as a child process and stops it on quit.
 * Either way the app is one more front end of the same broker: it loads the state once per connection and
 * then follows the broker's event stream (never polls). A lost broker is retried with a growing delay, and the
 * tray shows the problem meanwhile (wrapped servers refuse every call while no broker runs: they fail closed).
 */
import { BrokerClient, type ParamsOf, probeBroker, type ResultOf, type UiMethod } from '@airlock/proxy-core';
import { join } from 'node:path';
import { AlreadyServed, type Daemon, startDaemon } from './daemon.js';
import type { Environment } from './environment.js';
import { type Log, messageOf } from './log.js';
import { Signal } from './signal.js';
import type { AppState } from './state.js';

export interface BrokerDeps {
  env: Environment;
  state: AppState;
  log: Log;
}

/** Why a call could not even be sent: the broker is not there (the UI says "Airlock cannot be reached"). */
export class Unreachable extends Error {
  readonly code = 'unreachable';
  override name = 'Unreachable';
}

const RETRY_MS = [500, 1000, 2000, 5000, 10_000, 30_000];
/** How long a call made while the broker (re)starts waits for it. */
const CONNECT_WAIT_MS = 10_000;

export class BrokerLink {
  /** A connection is up (again): renderer streams resume on it. */
  readonly connected = new Signal<void>();
  private client: BrokerClient | null = null;
  private daemon: Daemon | null = null;
  private starting: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private stopping = false;

  constructor(private readonly deps: BrokerDeps) {}

  /** Whether the broker the app talks to is the one it started (and will stop on quit). */
  get owned(): boolean {
    return this.daemon !== null;
  }

  /** Attach or start, once; a failure is shown and retried later. Resolves when this attempt is over. */
  start(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.starting) return this.starting;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.starting = this.connect().then(
      () => {
        this.starting = null;
      },
      (err: unknown) => {
        this.starting = null;
        this.lost(messageOf(err));
      },
    );
    return this.starting;
  }

  /**
   * The key the app's presence proofs are MACs under: the broker the app started holds it; one it attached to
   * (started by someone else) does not, and then the app has no proofs to give.
   */
  get appKey(): Buffer | null {
    return this.daemon?.appKey ?? null;
  }

  /** The connection calls go on now (a challenge and the proof answering it must travel on the same one). */
  async line(opts: { waitMs?: number } = {}): Promise<BrokerClient> {
    return this.client ?? (await this.whenConnected(opts.waitMs ?? CONNECT_WAIT_MS));
  }

  /** One request to the broker, waiting up to `waitMs` for it when it is (re)starting. */
  async call<M extends UiMethod>(method: M, params: ParamsOf<M>, opts: { waitMs?: number } = {}): Promise<ResultOf<M>> {
    const client = this.client ?? (await this.whenConnected(opts.waitMs ?? CONNECT_WAIT_MS));
    // each method waits as long as its declaration says (protocol/methods/)
    return client.call(method, params);
  }

  /** A connection of its own (for one window's event stream): the broker tags a stream per connection. */
  async openClient(): Promise<BrokerClient> {
    if (!this.client) throw new Unreachable("Airlock's broker is not running");
    return BrokerClient.connect({ dir: this.deps.env.dataDir, role: 'app' });
  }

  get isConnected(): boolean {
    return this.client !== null;
  }

  /** Close the line; stop the broker if the app started it. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.starting;
    this.client?.close();
    this.client = null;
    const daemon = this.daemon;
    this.daemon = null;
    if (daemon) {
      await daemon.stop();
      this.deps.log.info('broker stopped');
    }
  }

  private async connect(): Promise<void> {
    const { env, state, log } = this.deps;
    if (state.health.state !== 'problem') state.setHealth({ state: 'starting' });
    if (!this.daemon && (await probeBroker(env.dataDir)) !== 'alive') {
      try {
        const daemon = await startDaemon({
          execPath: env.execPath,
          cli: env.cli,
          env: env.launcher ? { ...process.env, AIRLOCK_LAUNCHER: JSON.stringify(env.launcher) } : process.env,
          logFile: join(env.logs, 'broker.log'),
        });
        this.daemon = daemon;
        log.info(`started the broker (pid ${daemon.pid}) for ${env.dataDir}`);
        void daemon.exited.then((how) => {
          if (this.daemon !== daemon) return;
          this.daemon = null;
          this.lost(`the broker ${how}`);
        });
      } catch (err) {
        // another front end started one between the probe and now: use that one
        if (!(err instanceof AlreadyServed)) throw err;
      }
    }
    const client = await BrokerClient.connect({ dir: env.dataDir, role: 'app', timeoutMs: 5000 });
    this.client = client;
    try {
      // from the newest event on: what happened before it is in the load, what happens after is replayed
      const head = (await client.call('events', { limit: 1 })).events[0]?.seq ?? 0;
      const [status, pending] = await Promise.all([client.call('status', {}), client.call('pending', {})]);
      state.load(status, pending);
      await client.follow(head, {
        event: (e) => state.apply(e),
        end: (reason) => {
          if (this.client === client) this.lost(`lost the broker (${reason})`);
        },
      });
      if (this.client !== client) throw new Error('lost the broker while connecting');
    } catch (err) {
      if (this.client === client) this.client = null;
      client.close();
      throw err;
    }
    this.attempt = 0;
    state.setHealth({ state: 'ready', owned: this.daemon !== null });
    log.info(this.daemon ? 'connected to the broker the app started' : `attached to the broker already running for ${env.dataDir}`);
    this.connected.emit();
  }

  private lost(reason: string): void {
    if (this.stopping) return;
    this.client?.close();
    this.client = null;
    this.deps.log.warn(reason);
    this.deps.state.setHealth({ state: 'problem', reason });
    if (this.retryTimer || this.starting) return;
    const delay = RETRY_MS[Math.min(this.attempt++, RETRY_MS.length - 1)];
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.start();
    }, delay);
  }

  private whenConnected(waitMs: number): Promise<BrokerClient> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Unreachable(this.deps.state.health.state === 'problem' ? this.deps.state.health.reason : "Airlock's broker is not running"));
      }, waitMs);
      const off = this.connected.on(() => {
        if (!this.client) return;
        clearTimeout(timer);
        off();
        resolve(this.client);
      });
    });
  }
}
