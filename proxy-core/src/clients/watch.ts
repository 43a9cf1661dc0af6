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
import { entryWarning } from './entry-status.js';
import { isKept } from './kept-unprotected.js';
import { recognition } from './own-launcher.js';
import type { ClientId, ConfigLocation, DiscoverOptions, Scope, Transport } from './types.js';
import { dataDir as defaultDataDir } from '../ipc/paths.js';
import { CLIENT_IDS } from './types.js';

interface Where {
  client: ClientId;
  server: string;
  scope: Scope;
  path: string;
}

export type ClientConfigEvent =
  | (Where & { type: 'server-added'; transport: Transport; protected: boolean; unprotectable?: string })
  /** `again`: it had been protected, someone unwrapped it, and auto-protect wrapped it again. */
  | (Where & { type: 'server-protected'; again?: true })
  /** The entry looks wrapped but is not (another launcher, another data dir), or adds loosening flags. */
  | (Where & { type: 'server-warning'; warning: string })
  | (Where & { type: 'protect-failed'; error: string })
  /** A server that was protected is not any more (unprotected by hand, or its client rewrote the file). */
  | (Where & { type: 'server-unprotected'; kept?: true })
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
  /**
   * The last known state of each config location, kept across restarts (the broker's database): a location
   * with a saved state is compared with it at start, so a change made while Airlock was down is reported
   * (and auto-protected) too. Without one, only changes after start are.
   */
  state?: WatchStateStore;
}

/** Per server: protected, and what is wrong with the entry (see entry-status.ts). */
export interface KnownServer {
  protected: boolean;
  warning?: string;
}

export interface WatchStateStore {
  load(): Map<string, Map<string, KnownServer>>;
  save(location: string, servers: Map<string, KnownServer>): void;
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
  /** Last seen state per location. */
  const known = new Map<string, Map<string, KnownServer>>(opts.state?.load() ?? []);
  const r = recognition({ ...opts, ...(opts.launcher ? { launchers: [opts.launcher] } : {}) });
  const dataDir = opts.dataDir ?? defaultDataDir(opts.env ?? process.env, opts.platform ?? process.platform);
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

  /** `report`: true, false, or 'saved' (at start: report what differs from the saved state, where there is one). */
  async function scan(dir: string | null, report: boolean | 'saved'): Promise<void> {
    for (const loc of await locations()) {
      if (closed) return;
      if (dir !== null && p.dirname(loc.path) !== dir) continue;
      await scanLocation(loc, report === 'saved' ? known.has(locKey(loc)) : report);
    }
  }

  async function scanLocation(loc: ConfigLocation, report: boolean): Promise<void> {
    const key = locKey(loc);
    const rep = await readLocation(loc, r);
    if (rep.error) {
      if (report && errors.get(key) !== rep.error) opts.onEvent({ type: 'config-error', client: loc.client, path: loc.path, error: rep.error });
      errors.set(key, rep.error);
      return; // keep the last good state: a half-written file is not a removal
    }
    errors.delete(key);
    const before = known.get(key);
    const now = new Map<string, KnownServer>(rep.servers.map((s) => [s.name, { protected: s.protected, ...(entryWarning(s) ? { warning: entryWarning(s) } : {}) }]));
    known.set(key, now);
    if (!report) return save(key, now);
    const toProtect: { name: string; again: boolean; where: Where }[] = [];
    for (const s of rep.servers) {
      const where: Where = { client: loc.client, server: s.name, scope: loc.scope, path: loc.path };
      const was = before?.get(s.name);
      const warning = now.get(s.name)!.warning;
      if (warning !== undefined && warning !== was?.warning) opts.onEvent({ ...where, type: 'server-warning', warning });
      let again = false;
      if (was?.protected && !s.protected) {
        const kept = isKept(dataDir, { client: loc.client, path: loc.path, server: s.name });
        opts.onEvent({ ...where, type: 'server-unprotected', ...(kept ? { kept: true as const } : {}) });
        // unwrapped by someone other than `airlock unprotect`: under auto-protect it is wrapped again
        again = !kept;
      } else if (was !== undefined) continue;
      else opts.onEvent({ ...where, type: 'server-added', transport: s.transport, protected: s.protected, unprotectable: s.unprotectable });
      if (s.protected || s.unprotectable || !opts.autoProtect?.()) continue;
      if (!again && isKept(dataDir, { client: loc.client, path: loc.path, server: s.name })) continue;
      toProtect.push({ name: s.name, again, where });
    }
    if (toProtect.length) await protectAll(loc, toProtect, now);
    save(key, now);
  }

  /** Every server of one location that auto-protect wraps, in one rewrite of its file. */
  async function protectAll(loc: ConfigLocation, todo: { name: string; again: boolean; where: Where }[], now: Map<string, KnownServer>): Promise<void> {
    const launcher = opts.launcher;
    if (!launcher) {
      for (const t of todo) opts.onEvent({ ...t.where, type: 'protect-failed', error: NO_LAUNCHER });
      return;
    }
    try {
      await protectServers({ ...opts, launcher, client: loc.client, servers: todo.map((t) => t.name), scope: loc.scope, dataDir });
      for (const t of todo) {
        now.set(t.name, { protected: true });
        opts.onEvent({ ...t.where, type: 'server-protected', ...(t.again ? { again: true as const } : {}) });
      }
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      for (const t of todo) opts.onEvent({ ...t.where, type: 'protect-failed', error });
    }
  }

  function save(key: string, now: Map<string, KnownServer>): void {
    try {
      opts.state?.save(key, now);
    } catch {
      // the state is a convenience for the next start; this run goes on with what it knows
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
    await scan(null, 'saved');
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
