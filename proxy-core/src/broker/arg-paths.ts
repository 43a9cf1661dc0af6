/**
 * A path argument as the server will open it: `~` is the home folder, a relative path is taken from the
 * wrapper's working directory (the server's too), and symlinks are followed as far as the path exists. Shared by
 * the scopes a ticket proposes (sync, like the wrapper's own judgement of a path rule) and previews (async).
 */
import { realpath } from 'node:fs/promises';
import { pathFor } from '../clients/known-clients.js';
import type { MatchEnv } from '../policy/arg-conditions.js';

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

/**
 * The real path of an absolute path: symlinks of its existing part followed, the part that does not exist yet
 * (a file about to be written) appended. Never throws for a missing file; other errors come through.
 */
export async function realPathOf(absolute: string, platform: NodeJS.Platform = process.platform): Promise<string> {
  const path = pathApi(platform);
  const rest: string[] = [];
  let existing = absolute;
  for (;;) {
    try {
      const real = await realpath(existing);
      return rest.length ? path.join(real, ...rest.reverse()) : real;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      const parent = path.dirname(existing);
      if (parent === existing) return absolute;
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}
