/** Start the broker for a data dir: the one entry point shared by `airlock daemon` and the desktop app. */
import { databasePath } from '../ipc/paths.js';
import { ensurePrivateDir, loadOrCreateSecret } from '../ipc/secret.js';
import { Broker } from './broker.js';
import { listenBroker } from './server.js';
import { Store } from './store.js';

export interface StartOptions {
  dir: string;
  ticketTimeoutSeconds?: number;
  /** Watch the MCP clients' config files for servers added later (default on). */
  watchConfigs?: boolean;
  /** The environment whose HOME/APPDATA/... locate those config files (default process.env). */
  env?: Record<string, string | undefined>;
}

/** The setting that makes the broker wrap servers that appear in a client config by themselves. */
export const AUTO_PROTECT_KEY = 'auto-protect';

export interface RunningBroker {
  broker: Broker;
  store: Store;
  socketPath: string;
  stop(): Promise<void>;
}

export async function startBroker(opts: StartOptions): Promise<RunningBroker> {
  ensurePrivateDir(opts.dir);
  const secret = loadOrCreateSecret(opts.dir);
  const store = new Store(databasePath(opts.dir));
  const broker = new Broker({ store, dataDir: opts.dir, ticketTimeoutSeconds: opts.ticketTimeoutSeconds ?? 120 });
  // live structuredContent is checked against the tool's outputSchema: a mismatch is journaled, never blocked
  const { validateStructuredContent } = await import('../inspect/output-schema.js');
  broker.setOutputSchemaCheck(validateStructuredContent);
  let listening;
  try {
    listening = await listenBroker(opts.dir, secret, (channel, role) => broker.attach(channel, role));
  } catch (err) {
    store.close();
    throw err;
  }
  let watcher: { close(): void } | null = null;
  if (opts.watchConfigs !== false) {
    // config files are a user's, not ours: a watcher failure is journaled, it never stops the broker
    try {
      const { watchClientConfigs } = await import('../clients/watch.js');
      watcher = watchClientConfigs({
        env: opts.env ?? process.env,
        dataDir: opts.dir,
        autoProtect: () => store.getSetting(AUTO_PROTECT_KEY) === 'on',
        onEvent: (event) => {
          const { type, ...detail } = event;
          store.addEvent(type, 'server' in event ? event.server : null, null, detail);
          broker.emit('config', event);
        },
      });
    } catch (err) {
      store.addEvent('config-watch-failed', null, null, { error: (err as Error).message });
    }
  }
  let stopped = false;
  return {
    broker,
    store,
    socketPath: listening.path,
    async stop() {
      if (stopped) return;
      stopped = true;
      watcher?.close();
      broker.shutdown();
      const closing = listening.close();
      for (const c of broker.connections()) c.destroy();
      await closing;
      store.close();
    },
  };
}
