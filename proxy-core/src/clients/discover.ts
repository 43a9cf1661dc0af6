/** Finding the clients on this machine and reading the servers out of their config files. */
import { realpathSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { clientLocationFolders, clientLocations, CLIENTS, pathFor } from './known-clients.js';
import { readConfigFile, ConfigReadError } from './config-file.js';
import { getAt, isRecord } from './docpath.js';
import { describeServers } from './entries.js';
import { recognition, type Recognition } from './own-launcher.js';
import { syntaxFor } from './formats/index.js';
import type { ClientId, ConfigLocation, DiscoverOptions, DocPath, ServerEntry } from './types.js';
import { CLIENT_IDS } from './types.js';

export interface LocationReport {
  location: ConfigLocation;
  exists: boolean;
  /** Why the file could not be read or parsed; its servers are then unknown. */
  error?: string;
  servers: ServerEntry[];
}

export interface ClientReport {
  client: ClientId;
  label: string;
  /** At least one of its config files exists. */
  found: boolean;
  locations: LocationReport[];
}

/**
 * Claude Code keys projects by absolute path; on Windows it has been seen writing forward slashes. Use
 * whichever spelling the document holds.
 */
function projectServersPath(doc: unknown, location: ConfigLocation): DocPath | null {
  const [first, project, ...rest] = location.serversPath;
  if (first !== 'projects' || typeof project !== 'string') return location.serversPath;
  const projects = getAt(doc, ['projects']);
  if (!isRecord(projects)) return null;
  for (const key of [project, project.replace(/\\/g, '/')]) {
    if (Object.prototype.hasOwnProperty.call(projects, key)) return ['projects', key, ...rest];
  }
  return null;
}

/** Read one location: its servers, or the error that keeps us from knowing them. */
export async function readLocation(location: ConfigLocation, r: Recognition = recognition({})): Promise<LocationReport> {
  let file;
  try {
    file = await readConfigFile(location.path);
  } catch (err) {
    return { location, exists: true, error: err instanceof ConfigReadError ? err.message : String(err), servers: [] };
  }
  if (!file) return { location, exists: false, servers: [] };
  try {
    const doc = syntaxFor(location.format).parse(file.text);
    const serversPath = projectServersPath(doc, location);
    if (!serversPath) return { location, exists: true, servers: [] };
    const resolved = { ...location, serversPath };
    return { location: resolved, exists: true, servers: describeServers(resolved, doc, r) };
  } catch (err) {
    return { location, exists: true, error: err instanceof Error ? err.message : String(err), servers: [] };
  }
}

/**
 * The identity of a file for de-duplication: its real path when it exists (symlinks, a project folder that is
 * HOME), compared without case where the OS's usual file systems ignore it (macOS, Windows).
 */
export function fileIdentity(path: string, platform: NodeJS.Platform = process.platform): string {
  const p = pathFor(platform);
  let real = p.normalize(path);
  if (platform === process.platform) {
    try {
      real = realpathSync.native(path);
    } catch {
      // not there (yet): its spelled path is all there is to compare
    }
  }
  return platform === 'darwin' || platform === 'win32' ? real.toLowerCase() : real;
}

/**
 * Every config location of `client` for these options, including each file of its config folders. A place
 * reached twice (the project folder is HOME, so the project file is the global one) is listed once, under the
 * first scope that reaches it.
 */
export async function allLocations(client: ClientId, opts: DiscoverOptions = {}): Promise<ConfigLocation[]> {
  const all = clientLocations(client, opts);
  for (const folder of clientLocationFolders(client, opts)) {
    const names = await readdir(folder.dir).catch(() => [] as string[]);
    for (const n of names.filter((n) => /\.ya?ml$/i.test(n)).sort()) {
      all.push(folder.make(pathFor(opts.platform).join(folder.dir, n)));
    }
  }
  const seen = new Set<string>();
  return all.filter((l) => {
    const key = `${fileIdentity(l.path, opts.platform)}\0${JSON.stringify(l.serversPath)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Read every location of one client. */
export async function discoverClient(client: ClientId, opts: DiscoverOptions = {}): Promise<ClientReport> {
  const r = recognition(opts);
  const locations = await Promise.all((await allLocations(client, opts)).map((l) => readLocation(l, r)));
  // The per-project part of ~/.claude.json is only worth showing when that project has an entry.
  const shown = locations.filter((l) => l.location.scope !== 'local' || l.servers.length > 0);
  return { client, label: CLIENTS[client].label, found: locations.some((l) => l.exists), locations: shown };
}

/** Read every known client (or the ones named). */
export async function discoverClients(opts: DiscoverOptions & { clients?: ClientId[] } = {}): Promise<ClientReport[]> {
  return Promise.all((opts.clients ?? [...CLIENT_IDS]).map((c) => discoverClient(c, opts)));
}
