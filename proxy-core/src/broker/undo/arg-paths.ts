/**
 * A path argument as the server will open it: `~` is the home folder, a relative path is taken from the
 * wrapper's working directory (the server's too). Resolving it (symlinks, `..`) is policy/path-resolve.ts, shared
 * by path rules in the wrapper, the scopes a ticket proposes, previews and undo snapshots.
 */
import type { MatchEnv } from '../../policy/arg-conditions.js';
import { pathApi as pathFor } from '../../policy/path-resolve.js';

/** The path module of a platform (POSIX or Windows rules). */
export const pathApi = pathFor;

/** The absolute, normalised path an argument names; null for a relative one when no cwd is known. */
export function absoluteArgPath(value: string, env: Pick<MatchEnv, 'home' | 'platform'>, cwd: string | undefined): string | null {
  const path = pathApi(env.platform);
  if (value === '~') return path.resolve(env.home);
  if (value.startsWith('~/') || (env.platform === 'win32' && value.startsWith('~\\'))) return path.resolve(env.home, value.slice(2));
  if (path.isAbsolute(value)) return path.resolve(value);
  if (cwd === undefined || !path.isAbsolute(cwd)) return null;
  return path.resolve(cwd, value);
}
