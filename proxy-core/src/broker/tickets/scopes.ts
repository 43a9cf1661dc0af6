/**
 * The narrower "always allow" scopes a ticket offers, proposed from the held call's own arguments: a person can
 * allow `write_file` under ~/notes rather than every `write_file`. Pure but for a path's real form (through the
 * MatchEnv's realpath), because a path condition is judged on the real path (policy/arg-conditions.ts): a scope
 * built from the text the model wrote would not match what the wrapper later checks.
 *
 * A scope must never be wider than the person can read in its label: no folder that is a file system's root
 * (that would be everything), no folder whose name holds a glob character (it would be read as a wildcard).
 */
import { CONTROL_CHARACTERS } from '../../classify/classify.js';
import { type MatchEnv, realPath } from '../../policy/arg-conditions.js';
import { argPaths, pathApi } from '../../policy/path-resolve.js';
import type { ArgCondition, Ticket } from '../../protocol/api.js';

export type TicketScope = NonNullable<Ticket['scopes']>[number];

export interface ScopeContext {
  env: MatchEnv;
  /** The session's working directory (absolute), for relative paths; without one they get no scope. */
  cwd?: string | undefined;
  /** The argument a file tool names its file with: a path whatever its name or value. */
  pathArg?: string | undefined;
  /** The argument a file tool holds the new content in: what is written, never what to allow by. */
  contentArg?: string | undefined;
}

/** Scopes offered per ticket (the protocol allows 8; a card with more is no longer a quick choice). */
export const MAX_SCOPES = 4;
/** Strings up to this long may become an exact condition; longer ones (file contents, prompts) never do. */
export const MAX_EXACT_LENGTH = 200;
const MAX_PATH_LENGTH = 4096;
const MAX_CONDITIONS = 16;
/** A list of more paths than this gets no path scope (each is resolved on the file system). */
const MAX_LISTED_PATHS = 100;
const MAX_ARG_NAME = 256;

const PATH_WORDS = new Set([
  'path', 'paths', 'file', 'files', 'filename', 'filenames', 'filepath', 'filepaths', 'dir', 'dirs', 'directory',
  'directories', 'folder', 'folders', 'source', 'destination',
]);

/** `filePath`, `target_dir`, `source`: an argument name that says it holds a path. */
export function looksLikePathName(name: string): boolean {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/);
  return words.some((w) => PATH_WORDS.has(w));
}

/** `/x`, `~`, `~/x`, `C:\x`: a value that can only be read as a path. */
export function looksLikePathValue(value: string): boolean {
  return value.startsWith('/') || value === '~' || value.startsWith('~/') || /^[A-Za-z]:[\\/]/.test(value);
}

/** A string that may be treated as a path at all: one line, no control characters, not a URL. */
function pathShaped(value: string): boolean {
  return value !== '' && value.length <= MAX_PATH_LENGTH && !CONTROL_CHARACTERS.test(value) && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value);
}

/**
 * The real path an argument names (policy/path-resolve.ts); null when it cannot be known (relative with no cwd,
 * a symlink loop) or is not one file: a `..` after a symlink names one file to the kernel and another to a
 * server that normalises the text, and a scope built from either would be a guess.
 */
function resolveArgPath(value: string, env: MatchEnv, cwd: string | undefined): string | null {
  const paths = argPaths(value, env, cwd);
  return paths !== null && paths.length === 1 ? paths[0]! : null;
}

/** The folder a path scope allows, or null when that folder would allow too much or cannot be written as a glob. */
function scopeFolder(paths: readonly string[], env: MatchEnv): string | null {
  const path = pathApi(env.platform);
  const parents = paths.map((p) => path.dirname(p));
  // the deepest folder holding every one of them
  let common = parents[0]!;
  for (const p of parents.slice(1)) {
    while (common !== p && !p.startsWith(common.endsWith(path.sep) ? common : common + path.sep)) {
      const up = path.dirname(common);
      if (up === common) break;
      common = up;
    }
  }
  if (common === path.parse(common).root) return null;
  if (/[*?]/.test(common)) return null;
  return common;
}

/** `/home/me/notes` as `~/notes` when it is under the home folder. */
function shown(folder: string, env: MatchEnv): string {
  const path = pathApi(env.platform);
  const homes = [env.home];
  const realHome = realPath(env.home, env);
  if (realHome && realHome !== env.home) homes.push(realHome);
  for (const home of homes) {
    if (folder === home) return '~';
    if (home !== '' && folder.startsWith(home.endsWith(path.sep) ? home : home + path.sep)) return `~${path.sep}${folder.slice(home.length).replace(/^[\\/]+/, '')}`;
  }
  return folder;
}

interface Candidate {
  condition: ArgCondition;
  label: string;
  kind: 'path' | 'exact';
}

function pathCandidate(arg: string, value: unknown, ctx: ScopeContext): Candidate | null | undefined {
  const values = typeof value === 'string' ? [value] : Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string') ? (value as string[]) : null;
  if (values === null || !values.every(pathShaped)) return undefined;
  const named = arg === ctx.pathArg || looksLikePathName(arg);
  if (!named && !values.every(looksLikePathValue)) return undefined;
  if (values.length > MAX_LISTED_PATHS) return null;
  // a path, but one that cannot be resolved (relative without a cwd): no scope rather than a guessed one
  const real = values.map((v) => resolveArgPath(v, ctx.env, ctx.cwd));
  if (real.some((r) => r === null)) return null;
  const folder = scopeFolder(real as string[], ctx.env);
  if (folder === null) return null;
  const glob = `${folder}${pathApi(ctx.env.platform).sep}**`;
  return { condition: { arg, kind: 'path', glob }, label: `${arg} under ${shown(folder, ctx.env)}`, kind: 'path' };
}

function exactCandidate(arg: string, value: unknown): Candidate | null {
  const short = (typeof value === 'string' && value.length <= MAX_EXACT_LENGTH) || (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean';
  if (!short) return null;
  const v = value as string | number | boolean;
  return { condition: { arg, kind: 'exact', value: v }, label: `${arg} = ${JSON.stringify(v)}`, kind: 'exact' };
}

function scopeOf(candidates: readonly Candidate[]): TicketScope {
  return { label: candidates.map((c) => c.label).join(' and '), args: candidates.map((c) => c.condition) };
}

/**
 * Scopes for an "always allow" from a held call, narrowest first, widest last (at most MAX_SCOPES): every
 * condition together, the path conditions together, then each condition alone. None when the arguments were
 * cut (they are not known) or give nothing to scope by. Past MAX_SCOPES the last single conditions are left out.
 */
export function proposeScopes(args: unknown, ctx: ScopeContext): TicketScope[] {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return [];
  const candidates: Candidate[] = [];
  for (const [arg, value] of Object.entries(args as Record<string, unknown>)) {
    if (candidates.length >= MAX_CONDITIONS) break;
    if (arg === '' || arg.length > MAX_ARG_NAME || arg === ctx.contentArg) continue;
    const path = pathCandidate(arg, value, ctx);
    if (path === null) continue;
    const c = path ?? exactCandidate(arg, value);
    if (c) candidates.push(c);
  }
  if (candidates.length === 0) return [];
  const paths = candidates.filter((c) => c.kind === 'path');
  const groups: Candidate[][] = [candidates];
  if (paths.length > 0) groups.push(paths);
  groups.push(...paths.map((c) => [c]), ...candidates.filter((c) => c.kind === 'exact').map((c) => [c]));
  const seen = new Set<string>();
  const out: TicketScope[] = [];
  for (const g of groups) {
    const key = JSON.stringify(g.map((c) => c.condition));
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(scopeOf(g));
  }
  // past the limit, the last single-value conditions go: the path scope is the one a person reaches for
  return out.slice(0, MAX_SCOPES);
}
