/** Start the broker for a data dir: the one entry point shared by `airlock daemon` and the desktop app. */
import { databasePath } from '../ipc/paths.js';
import { ensurePrivateDir, loadOrCreateSecret } from '../ipc/secret.js';
import { Broker } from './broker.js';
import { listenBroker } from './server.js';
import { Store } from './store.js';

export interface StartOptions {
  dir: string;
  ticketTimeoutSeconds?: number;
}

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
  let listening;
  try {
    listening = await listenBroker(opts.dir, secret, (channel, role) => broker.attach(channel, role));
  } catch (err) {
    store.close();
    throw err;
  }
  let stopped = false;
  return {
    broker,
    store,
    socketPath: listening.path,
    async stop() {
      if (stopped) return;
      stopped = true;
      broker.shutdown();
      const closing = listening.close();
      for (const c of broker.connections()) c.destroy();
      await closing;
      store.close();
    },
  };
}
