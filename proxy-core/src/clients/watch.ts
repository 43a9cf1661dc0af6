/**
 * Watch the client configs Airlock knows and report servers that appear later (a user adding one through the
 * client's UI), protecting them on the spot when autoProtect() says so. Watches the parent folders, since
 * editors and clients replace files by rename; folders that do not exist yet are looked for periodically.
 * Free of broker and storage code so the broker can embed it.
 */
import { watch, type FSWatcher } from 'node:fs';
import { clientLocationFolders, pathFor } from './known-clients.js';
import { allLocations, readLocation } from './discover.js';
import type { Launcher } from './launcher.js';
import { protectServers } from './rewrite.js';
import type { ProcessLister } from './running.js';
import type { ClientId, ConfigLocation, DiscoverOptions, Scope, Transport } from './types.js';
import { CLIENT_IDS } from './types.js';

interface Where {
  client: ClientId;
  server: string;
  scope: Scope;
  path: string;
}

export type ClientConfigEvent =
  | (Where & { type: 'server-added'; transport: Transport; protected: boolean; unprotectable?: string })
  | (Where & { type: 'server-protected' })
  | (Where & { type: 'protect-failed'; error: string })
  /** A server that was protected is not any more (unprotected by hand, or its client rewrote the file). */
  | (Where & { type: 'server-unprotected' })
  | { type: 'config-error'; client: ClientId; path: string; error: string };

export interface WatchOptions extends DiscoverOptions {
  onEvent(event: ClientConfigEvent): void;
  /** Asked for each unprotected stdio server that appears; true protects it. */
  autoProtect?: () => boolean;
  clients?: ClientId[];
  /** Quiet time before a changed folder is re-read (clients write in bursts). */
  debounceMs?: number;
  /** How often to look for config folders that did not exist yet. */
  rescanMs?: number;
  /**
   * What auto-protect writes into a config, given by whoever composes the program. Without one, a server
   * auto-protect would wrap is reported as protect-failed instead: the library never guesses a launcher.
   */
  launcher: Launcher | undefined;
  dataDir?: string;
  processLister?: ProcessLister;
}

/** Why auto-protect left a server alone when the composer gave no launcher. */
export const NO_LAUNCHER =
  'auto-protect is on, but Airlock was started without a launcher (the command a client config should start Airlock with), so the server was left unprotected';

export interface ConfigWatcher {
  /** Settles once the starting state is known; changes after that are reported. */
  ready: Promise<void>;
  close(): void;
}

/** Start watching; returns a handle whose close() stops every watcher and timer. */
export function watchClientConfigs(opts: WatchOptions): ConfigWatcher {
  const p = pathFor(opts.platform);
  const clients = opts.clients ?? [...CLIENT_IDS];
  const debounceMs = opts.debounceMs ?? 300;
  /** Last seen state per location: server name → protected. */
  const known = new Map<string, Map<string, boolean>>();
  const errors = new Map<string, string>();
  const watchers = new Map<string, FSWatcher>();
  const timers = new Map<string, NodeJS.Timeout>();
  let closed = false;
  let queue: Promise<void> = Promise.resolve();

  const locKey = (l: ConfigLocation) => `${l.client}\0${l.scope}\0${l.path}\0${l.serversPath.map(String).join('\0')}`;

  async function locations(): Promise<ConfigLocation[]> {
    return (await Promise.all(clients.map((c) => allLocations(c, opts)))).flat();
  }

  /** Folders worth watching: each config file's parent and each config folder. */
  async function folders(): Promise<Set<string>> {
    const dirs = new Set((await locations()).map((l) => p.dirname(l.path)));
    for (const c of clients) for (const f of clientLocationFolders(c, opts)) dirs.add(f.dir);
    return dirs;
  }

  async function scan(dir: string | null, report: boolean): Promise<void> {
    for (const loc of await locations()) {
      if (closed) return;
      if (dir !== null && p.dirname(loc.path) !== dir) continue;
      await scanLocation(loc, report);
    }
  }

  async function scanLocation(loc: ConfigLocation, report: boolean): Promise<void> {
    const key = locKey(loc);
    const r = await readLocation(loc);
    if (r.error) {
      if (report && errors.get(key) !== r.error) opts.onEvent({ type: 'config-error', client: loc.client, path: loc.path, error: r.error });
      errors.set(key, r.error);
      return; // keep the last good state: a half-written file is not a removal
    }
    errors.delete(key);
    const before = known.get(key);
    const now = new Map(r.servers.map((s) => [s.name, s.protected]));
    known.set(key, now);
    if (!report) return;
    for (const s of r.servers) {
      const where: Where = { client: loc.client, server: s.name, scope: loc.scope, path: loc.path };
      const was = before?.get(s.name);
      if (was === true && !s.protected) opts.onEvent({ ...where, type: 'server-unprotected' });
      if (was !== undefined) continue;
      opts.onEvent({ ...where, type: 'server-added', transport: s.transport, protected: s.protected, unprotectable: s.unprotectable });
      if (s.protected || s.unprotectable || !opts.autoProtect?.()) continue;
      const launcher = opts.launcher;
      if (!launcher) {
        opts.onEvent({ ...where, type: 'protect-failed', error: NO_LAUNCHER });
        continue;
      }
      try {
        await protectServers({ ...opts, launcher, client: loc.client, servers: [s.name], scope: loc.scope });
        now.set(s.name, true);
        opts.onEvent({ ...where, type: 'server-protected' });
      } catch (err) {
        opts.onEvent({ ...where, type: 'protect-failed', error: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  function enqueue(job: () => Promise<void>): void {
    queue = queue.then(job).catch(() => undefined);
  }

  function schedule(dir: string): void {
    if (closed) return;
    clearTimeout(timers.get(dir));
    const t = setTimeout(() => {
      timers.delete(dir);
      enqueue(() => scan(dir, true));
    }, debounceMs);
    t.unref();
    timers.set(dir, t);
  }

  function attach(dir: string): boolean {
    if (watchers.has(dir)) return false;
    try {
      const w = watch(dir, { persistent: false }, () => schedule(dir));
      w.on('error', () => {
        // The folder went away (or the OS gave up on it): drop the watcher; the periodic look re-attaches it.
        w.close();
        watchers.delete(dir);
        schedule(dir);
      });
      watchers.set(dir, w);
      return true;
    } catch {
      return false;
    }
  }

  async function attachAll(report: boolean): Promise<void> {
    for (const dir of await folders()) {
      if (closed) return;
      // A folder that just appeared may already hold a config: read it now.
      if (attach(dir) && report) schedule(dir);
    }
  }

  const ready = (async () => {
    await attachAll(false);
    await scan(null, false);
  })();
  ready.catch(() => undefined);

  const interval = setInterval(() => enqueue(() => attachAll(true)), opts.rescanMs ?? 5000);
  interval.unref();

  return {
    ready,
    close() {
      closed = true;
      clearInterval(interval);
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
