/** The original command line of one stdio server in a client's config, for tools that start it themselves. */
import { CLIENTS } from './known-clients.js';
import { readConfigFile } from './config-file.js';
import { discoverClient } from './discover.js';
import { getAt, isRecord } from './docpath.js';
import { syntaxFor } from './formats/index.js';
import { ClientConfigError } from './rewrite.js';
import type { ClientId, ConfigLocation, DiscoverOptions, Scope } from './types.js';

export interface ResolvedServer {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  location: ConfigLocation;
}

/** The scope a client prefers when the same name is in several files (the most specific wins). */
const PRECEDENCE: Scope[] = ['local', 'project', 'global'];

/**
 * The original (unwrapped) command, args, env and cwd of a stdio server; throws ClientConfigError if the client
 * has no such server or it is not a stdio server.
 */
export async function resolveServerEntry(
  clientId: ClientId,
  serverName: string,
  opts: DiscoverOptions & { scope?: Scope } = {},
): Promise<ResolvedServer> {
  const report = await discoverClient(clientId, opts);
  const matches = report.locations
    .filter((l) => !opts.scope || l.location.scope === opts.scope)
    .flatMap((l) => l.servers.filter((s) => s.name === serverName))
    .sort((a, b) => PRECEDENCE.indexOf(a.location.scope) - PRECEDENCE.indexOf(b.location.scope));
  const entry = matches[0];
  if (!entry) throw new ClientConfigError(`no server "${serverName}" in ${CLIENTS[clientId].label}'s config`);
  if (!entry.original) throw new ClientConfigError(`"${serverName}" cannot be started locally: ${entry.unprotectable ?? 'no command'}`);
  // Env values are read only here, on demand, and never leave this return value.
  const file = await readConfigFile(entry.location.path);
  const doc = file ? syntaxFor(entry.location.format).parse(file.text) : undefined;
  const obj = getAt(doc, entry.path);
  const rawEnv = isRecord(obj) ? (obj[entry.shape.envKey] ?? getAt(obj, [...entry.shape.base, entry.shape.envKey])) : undefined;
  const env: Record<string, string> = {};
  if (isRecord(rawEnv)) {
    for (const [k, v] of Object.entries(rawEnv)) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') env[k] = String(v);
    }
  }
  return { command: entry.original.command, args: entry.original.args, env, cwd: entry.cwd, location: entry.location };
}
