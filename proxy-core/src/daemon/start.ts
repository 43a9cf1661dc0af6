/** Start the broker for a data dir: the one entry point shared by `airlock daemon` and the desktop app. */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Launcher } from '../clients/launcher.js';
import type { UiHost, UiHostOptions } from '../http/ui-host.js';
import { ensurePrivateDir, loadOrCreateSecret } from '../ipc/secret.js';
import { Broker, type BrokerOptions } from '../broker/broker.js';
import { databaseFailure, DatabaseBackups, type DatabaseRecovery, type OpenedDatabase, openBrokerDatabase } from '../broker/db/database.js';
import { acquireBrokerLock } from '../broker/lock.js';
import { retentionPolicy, startRetention } from '../broker/db/retention.js';
import { AlreadyRunning, type Listening, listenBroker, probeBroker } from '../broker/server.js';
import type { Store } from '../broker/db/store.js';
import { systemClock } from '../util/clock.js';
import { prepareSystemDirs, publishSecret, type SystemMode, systemSocketPath } from './system-mode.js';

export interface StartOptions {
  dir: string;
  /** The ticket timeout for this run (the daemon's --ticket-timeout); also saved as the setting when it can be one. */
  ticketTimeoutSeconds?: number;
  /** Watch the MCP clients' config files for servers added later (default on). */
  watchConfigs?: boolean;
  /** The environment whose HOME/APPDATA/... locate those config files (default process.env). */
  env?: Record<string, string | undefined>;
  /**
   * What auto-protect and a front end's protect write into client configs to start Airlock (the CLI passes its
   * node + bin/airlock.js, the desktop app its own launcher). Without one, auto-protect journals protect-failed
   * and writes nothing, and a front end's protect is refused.
   */
  launcher?: Launcher;
  /**
   * 'check' (default) refuses a database that lost its contents; 'restore-backup' and 'fresh' are the two
   * ways out the refusal names, and are themselves refused on a healthy database.
   */
  database?: DatabaseRecovery;
  /** How often to back the database up while running (default hourly; also at start and at a clean stop). */
  backupIntervalMs?: number;
  /** Also serve the browser UI and its HTTP API on 127.0.0.1 (http/ui-host.ts); started last, stopped first. */
  ui?: Omit<UiHostOptions, 'broker'>;
  /** Presence proofs (broker/presence/): required unless `required: false` (`--no-presence`). */
  presence?: BrokerOptions['presence'];
  /** The team policy file's override path (`--managed-policy`; broker/managed/watch.ts says when it is read). */
  managed?: BrokerOptions['managed'];
  /** Run as the system service (system-mode.ts): the socket and a group-readable secret in this run folder. */
  system?: SystemMode;
}

/** The setting that makes the broker wrap servers that appear in a client config by themselves. */
export const AUTO_PROTECT_KEY = 'auto-protect';
/** How long a stopping broker waits for undo to record what the calls filed last left in their files. */
const UNDO_IDLE_MS = 3000;

export interface RunningBroker {
  broker: Broker;
  store: Store;
  socketPath: string;
  /** Set when this start restored the backup or began a fresh database. */
  recovered?: OpenedDatabase['recovered'];
  /** The UI host, when `ui` was asked for: its `url` (with the sign-in token) is for the person only. */
  ui?: UiHost;
  /** Back the database up now (also done at start, every backupIntervalMs and at a clean stop). */
  backupNow(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The order matters, and is what keeps a second start from rewriting a running broker's records:
 * 1. the data dir's broker lock (lock.ts), before anything reads or writes the database: a losing start
 *    leaves no trace (the Broker constructor ends "orphaned" sessions and tickets, which is only true when no
 *    other broker owns them);
 * 2. a probe of the socket, for a broker from before the lock existed;
 * 3. the database, checked (database.ts), then the secret, then the Broker;
 * 4. only then the listening socket, so no connection can arrive before the broker can serve it (a client
 *    that tries earlier is refused by the OS and reports "not running": clean, nothing half-served).
 */
export async function startBroker(opts: StartOptions): Promise<RunningBroker> {
  if (opts.system) prepareSystemDirs(opts.dir, opts.system);
  else ensurePrivateDir(opts.dir);
  const socketAt = opts.system ? systemSocketPath(opts.system) : undefined;
  const clock = systemClock;
  const lock = acquireBrokerLock(opts.dir);
  let store: Store | null = null;
  let listening: Listening;
  let broker: Broker;
  let opened: OpenedDatabase;
  try {
    if ((await probeBroker(opts.dir, socketAt)) === 'alive') {
      throw new AlreadyRunning(opts.dir, `another Airlock broker is already answering on the socket of the data dir ${opts.dir}`);
    }
    // one clock for the broker and the times its database stamps itself (events, ends of sessions and tickets)
    opened = openBrokerDatabase(opts.dir, opts.database ?? 'check', () => clock.now());
    store = opened.store;
    // after the database: a secret is what marks a data dir as used, so it must not exist without one
    const secret = loadOrCreateSecret(opts.dir);
    try {
      broker = new Broker({
        store,
        dataDir: opts.dir,
        clock,
        ...(opts.ticketTimeoutSeconds !== undefined ? { ticketTimeoutSeconds: opts.ticketTimeoutSeconds } : {}),
        env: opts.env ?? process.env,
        ...(opts.launcher ? { launcher: opts.launcher } : {}),
        ...(opts.presence ? { presence: opts.presence } : {}),
        ...(opts.managed ? { managed: opts.managed } : {}),
      });
    } catch (err) {
      throw databaseFailure(opts.dir, err);
    }
    if (opened.recovered) {
      const { action, ...detail } = opened.recovered;
      broker.record(action === 'restored' ? 'database-restored' : 'database-fresh', null, null, detail);
    }
    // live structuredContent is checked against the tool's outputSchema: a mismatch is journaled, never blocked.
    // The validator (ajv, a tenth of a second to load) is loaded at the first check, not before the broker listens.
    let validator: Promise<typeof import('../util/json-schema.js')> | undefined;
    broker.setOutputSchemaCheck(async (schema, value) => (await (validator ??= import('../util/json-schema.js'))).validateStructuredContent(schema, value));
    const ready = broker;
    if (opts.system) publishSecret(opts.system, secret);
    const at = opts.system && socketAt ? { path: socketAt, mode: 0o660, gid: opts.system.gid } : undefined;
    listening = await listenBroker(opts.dir, secret, (channel, role) => ready.attach(channel, role), at);
  } catch (err) {
    store?.close();
    lock.release();
    throw err;
  }
  const backups = new DatabaseBackups(store, opts.dir, opts.backupIntervalMs ?? 60 * 60 * 1000, (err) => {
    broker.record('database-backup-failed', null, null, { error: err.message });
  });
  backups.start();
  // spill files of wrappers that died while the broker could not take their journal (and, every few seconds, later ones)
  broker.safety.start();
  // the journal's retention (settings journal-days / journal-mb), pruned a small batch at a time between calls
  const retention = startRetention(store, () => retentionPolicy((key) => store.getSetting(key)), {
    onError: (err) => broker.record('retention-failed', null, null, { error: err instanceof Error ? err.message : String(err) }),
  });
  let watcher: { close(): void } | null = null;
  if (opts.watchConfigs !== false) {
    // config files are a user's, not ours: a watcher failure is journaled, it never stops the broker
    try {
      const { watchClientConfigs } = await import('../clients/watch.js');
      const { configStateStore } = await import('../broker/config-state.js');
      watcher = watchClientConfigs({
        state: configStateStore(store.db, () => Date.now()),
        env: opts.env ?? process.env,
        dataDir: opts.dir,
        launcher: opts.launcher,
        autoProtect: () => store.getSetting(AUTO_PROTECT_KEY) === 'on',
        onEvent: (event) => {
          const { type, ...detail } = event;
          broker.record(type, 'server' in event ? event.server : null, null, detail);
        },
      });
    } catch (err) {
      broker.record('config-watch-failed', null, null, { error: (err as Error).message });
    }
  }
  let stopped = false;
  let ui: UiHost | undefined;
  const running: RunningBroker = {
    broker,
    store,
    socketPath: listening.path,
    ...(opened.recovered ? { recovered: opened.recovered } : {}),
    backupNow: () => backups.run(),
    async stop() {
      if (stopped) return;
      stopped = true;
      broker.setUiLinks(null);
      await ui?.close();
      watcher?.close();
      retention.stop();
      broker.shutdown();
      const closing = listening.close();
      for (const c of broker.connections()) c.destroy();
      await closing;
      // what undo reads of the calls just filed (the state a write left its file in; a replaced file's old bytes, a
      // moment later) is recorded before the database closes: a few seconds at most
      await Promise.race([broker.undo.idle().catch(() => {}), sleep(UNDO_IDLE_MS, undefined, { ref: false })]);
      await backups.stop(true);
      store.close();
      lock.release();
    },
  };
  if (opts.ui) {
    try {
      const { startUiHost } = await import('../http/ui-host.js');
      ui = running.ui = await startUiHost({ sessionFile: join(opts.dir, 'ui-sessions.json'), ...opts.ui, broker });
      broker.setUiLinks(ui.signInUrl);
      broker.passkeys.serveUiAt(ui.port);
    } catch (err) {
      await running.stop();
      throw err;
    }
  }
  return running;
}
