/**
 * The project folders the clients know of, beyond the current one: each has project-scope configs of its own
 * (`.mcp.json`, `.cursor/mcp.json`, `.gemini/settings.json`…) that a protect run in one folder never sees.
 * Read from where the clients record them: Claude Code's `projects` map in ~/.claude.json, VS Code's and
 * Cursor's recent workspaces (`workspaceStorage/<id>/workspace.json`), and Gemini CLI's and Qwen Code's trusted
 * folders. Only absolute local folders count; what cannot be read is said, never guessed.
 */
import { existsSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { isRecord } from './docpath.js';
import { clientLocations, pathFor } from './known-clients.js';
import { syntaxFor } from './formats/index.js';
import type { DiscoverOptions } from './types.js';

export interface KnownProject {
  dir: string;
  /** Which clients recorded it. */
  sources: string[];
  /** False when the folder is gone (a deleted checkout): nothing to protect there. */
  exists: boolean;
}

export interface KnownProjects {
  projects: KnownProject[];
  /** Records that could not be read, each with why. */
  unreadable: string[];
}

/** The most workspace records read from one storage folder (a long-used editor has thousands). */
const MAX_WORKSPACES = 2000;

async function readJson(path: string, unreadable: string[]): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') unreadable.push(`${path}: ${(err as Error).message}`);
    return undefined;
  }
  try {
    return syntaxFor('jsonc').parse(text);
  } catch (err) {
    unreadable.push(`${path}: ${(err as Error).message}`);
    return undefined;
  }
}

/** VS Code-style `workspaceStorage/<id>/workspace.json` files: `{"folder": "file:///…"}`. */
async function workspaces(storage: string, source: string, add: (dir: string, source: string) => void, unreadable: string[]): Promise<void> {
  const ids = await readdir(storage).catch(() => [] as string[]);
  for (const id of ids.slice(0, MAX_WORKSPACES)) {
    const doc = await readJson(pathFor().join(storage, id, 'workspace.json'), unreadable);
    const folder = isRecord(doc) ? doc.folder : undefined;
    if (typeof folder !== 'string' || !folder.startsWith('file://')) continue;
    try {
      add(fileURLToPath(folder), source);
    } catch {
      // a file URL of another machine (a remote workspace): not a folder here
    }
  }
}

/** Every project folder the clients recorded, the current one excluded, in a stable order. */
export async function knownProjects(opts: DiscoverOptions = {}): Promise<KnownProjects> {
  const p = pathFor(opts.platform);
  const unreadable: string[] = [];
  const found = new Map<string, Set<string>>();
  const add = (dir: string, source: string) => {
    if (!p.isAbsolute(dir)) return;
    const d = p.normalize(dir);
    found.set(d, (found.get(d) ?? new Set()).add(source));
  };
  const claude = await readJson(clientLocations('claude-code', opts)[0]!.path, unreadable);
  if (isRecord(claude) && isRecord(claude.projects)) for (const dir of Object.keys(claude.projects)) add(dir, 'Claude Code');
  const vscodeUser = p.dirname(clientLocations('vscode', opts)[0]!.path);
  await workspaces(p.join(vscodeUser, 'workspaceStorage'), 'VS Code', add, unreadable);
  await workspaces(p.join(p.dirname(p.dirname(vscodeUser)), 'Cursor', 'User', 'workspaceStorage'), 'Cursor', add, unreadable);
  for (const [client, label] of [['gemini-cli', 'Gemini CLI'], ['qwen-code', 'Qwen Code']] as const) {
    const trusted = await readJson(p.join(p.dirname(clientLocations(client, opts)[0]!.path), 'trustedFolders.json'), unreadable);
    // a folder marked DO_NOT_TRUST is not one the person works in with that client
    if (isRecord(trusted)) for (const [dir, how] of Object.entries(trusted)) if (how !== 'DO_NOT_TRUST') add(dir, label);
  }
  const sameOs = (opts.platform ?? process.platform) === process.platform;
  const current = p.resolve(sameOs ? process.cwd() : p.sep, opts.projectDir ?? (sameOs ? process.cwd() : p.sep));
  const projects = [...found.entries()]
    .filter(([dir]) => dir !== current)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([dir, sources]) => ({ dir, sources: [...sources].sort(), exists: sameOs && existsSync(dir) && statSync(dir).isDirectory() }));
  return { projects, unreadable };
}
