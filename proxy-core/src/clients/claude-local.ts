/**
 * Claude Code's project servers live in `.mcp.json`, a file meant to be committed: protecting one there writes
 * this user's absolute paths (node, Airlock's launcher, its data dir) into the team's file. Instead, a project
 * server can be protected in the user's own local scope (`projects[dir].mcpServers` of ~/.claude.json, which
 * Claude Code prefers over `.mcp.json` for the same name) and the `.mcp.json` one switched off for this user
 * alone (`projects[dir].disabledMcpjsonServers`), leaving `.mcp.json` as the team wrote it.
 */
import { applyEdits, modify } from 'jsonc-parser';
import { dataDir as defaultDataDir } from '../ipc/paths.js';
import { ConcurrentEditError, writeFileAtomic } from './atomic-write.js';
import { saveFirstBackup } from './backup.js';
import { encodeConfig, readConfigFile } from './config-file.js';
import { discoverClient } from './discover.js';
import { getAt, isRecord, sameData } from './docpath.js';
import { clientLocations } from './known-clients.js';
import { syntaxFor } from './formats/index.js';
import { ClientConfigError, protectServers, unprotectServers, type ChangeOutcome, type ProtectRequest } from './rewrite.js';
import type { ServerEntry } from './types.js';

/** What protect says of a project server it wrote into `.mcp.json`; `command` moves it to the local scope. */
export function sharedFileWarning(command: string): string {
  return `is in .mcp.json, a file meant to be committed: the protected entry now names paths of this machine; run \`${command}\` to protect it in your own local scope instead`;
}

/** The `.mcp.json` servers among `outcomes` that protect just wrote. */
export function sharedFileOutcomes(outcomes: ChangeOutcome[]): ChangeOutcome[] {
  return outcomes.filter((o) => o.result === 'protected' && o.scope === 'project' && /\.mcp\.json$/.test(o.path));
}

type MoveRequest = Omit<ProtectRequest, 'client' | 'scope'>;

/**
 * Copy the chosen `.mcp.json` servers (as the team wrote them) into this user's local scope, switch the
 * `.mcp.json` ones off for this user, and protect the copies there. A `.mcp.json` entry protect wrote before
 * is put back first.
 */
export async function protectInLocalScope(req: MoveRequest): Promise<ChangeOutcome[]> {
  const opts = { ...req, client: 'claude-code' as const };
  const [user, local, project] = clientLocations('claude-code', req);
  if (!user || !local || !project) throw new ClientConfigError('Claude Code has no local scope here');
  const shared = (await discoverClient('claude-code', opts)).locations.filter((l) => l.location.scope === 'project').flatMap((l) => l.servers);
  const chosen = req.servers === 'all' ? shared : req.servers.map((n) => shared.find((s) => s.name === n) ?? missing(n, project.path));
  const movable = chosen.filter((s) => !s.unprotectable || s.protected);
  const wrapped = movable.filter((s) => s.protected).map((s) => s.name);
  if (wrapped.length) await unprotectServers({ ...opts, servers: wrapped, scope: 'project' });
  const file = await readConfigFile(project.path);
  if (!file) throw new ClientConfigError(`${project.path} is gone`);
  const doc = syntaxFor('json').parse(file.text);
  const entries = movable.map((s): [ServerEntry, unknown] => [s, getAt(doc, s.path)]);
  if (entries.length === 0) return chosen.map((s) => skipped(s));
  await addToLocal(req, user.path, local.serversPath[1] as string, entries);
  const done = await protectServers({ ...opts, servers: entries.map(([s]) => s.name), scope: 'local' });
  return [...chosen.filter((s) => !movable.includes(s)).map(skipped), ...done.outcomes];
}

function missing(name: string, path: string): never {
  throw new ClientConfigError(`no server "${name}" in ${path}`);
}

function skipped(s: ServerEntry): ChangeOutcome {
  return { server: s.name, scope: s.location.scope, path: s.location.path, result: 'skipped', reason: s.unprotectable };
}

/** Write the entries into projects[dir] of ~/.claude.json and list them in its disabledMcpjsonServers. */
async function addToLocal(req: MoveRequest, path: string, dir: string, entries: [ServerEntry, unknown][]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const file = await readConfigFile(path);
    let text = file?.text ?? '{}\n';
    const doc = syntaxFor('json').parse(text);
    const project = getAt(doc, ['projects', dir]);
    const servers = isRecord(project) ? getAt(project, ['mcpServers']) : undefined;
    const disabled = isRecord(project) && Array.isArray(project.disabledMcpjsonServers) ? (project.disabledMcpjsonServers as unknown[]) : [];
    const format = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: /\r\n/.test(text) ? '\r\n' : '\n' } };
    for (const [s, entry] of entries) {
      const there = isRecord(servers) ? servers[s.name] : undefined;
      if (there !== undefined && !sameData(there, entry)) {
        throw new ClientConfigError(`"${s.name}" is already in your local scope for ${dir} with another command; remove one of them first (nothing was changed)`);
      }
      text = applyEdits(text, modify(text, ['projects', dir, 'mcpServers', s.name], entry, format));
    }
    const names = [...disabled, ...entries.map(([s]) => s.name).filter((n) => !disabled.includes(n))];
    text = applyEdits(text, modify(text, ['projects', dir, 'disabledMcpjsonServers'], names, format));
    const dataDir = req.dataDir ?? defaultDataDir(req.env ?? process.env, req.platform ?? process.platform);
    try {
      if (file) await saveFirstBackup(dataDir, file.realPath, file.bytes);
      const bytes = file ? encodeConfig(file, text) : Buffer.from(text);
      await writeFileAtomic(file?.realPath ?? path, bytes, file ? { mode: file.mode, owner: { uid: file.uid, gid: file.gid }, expect: file.bytes } : { mode: 0o600 });
      return;
    } catch (err) {
      if (err instanceof ConcurrentEditError && attempt < 3) continue;
      throw new ClientConfigError(`cannot write ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
