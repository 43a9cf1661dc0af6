/**
 * Where the reference filesystem server (`@modelcontextprotocol/server-filesystem`) puts a relative path: not
 * in its working directory but in its allowed folders, the words after the server on its command line. As its
 * own code does: each folder `~`-expanded and made absolute (from the server's working directory, which is the
 * wrapper's), its real path listed after it when that differs, the ones that are not folders dropped; then the
 * relative path is taken from the first folder whose result stays inside an allowed folder, or else from the
 * first folder.
 *
 * What this cannot know: a client that gives the server MCP roots replaces those folders at run time.
 */
import { statSync } from 'node:fs';
import { argPaths, pathApi, type PathEnv } from '../policy/path-resolve.js';
import { startsFilesystemServer } from './undo/file-tools.js';

/** The filesystem server's allowed folders, from the command a wrapper started it with; null when not found. */
export function filesystemAllowedFolders(command: readonly string[], cwd: string | undefined, env: PathEnv): string[] | null {
  const path = pathApi(env.platform);
  const at = command.findIndex((word) => startsFilesystemServer([word]));
  if (at === -1) return null;
  const out: string[] = [];
  for (const word of command.slice(at + 1)) {
    const expanded = word === '~' || word.startsWith('~/') ? path.join(env.home, word.slice(1)) : word;
    if (!path.isAbsolute(expanded) && cwd === undefined) return null;
    const absolute = cwd === undefined ? path.resolve(expanded) : path.resolve(cwd, expanded);
    let real: string | undefined;
    try {
      real = env.realpath(absolute);
    } catch {
      // a folder that does not exist is dropped below
    }
    for (const dir of real !== undefined && real !== absolute ? [absolute, real] : [absolute]) {
      try {
        if (statSync(dir).isDirectory()) out.push(dir);
      } catch {
        // as the server does: skipped
      }
    }
  }
  return out.length > 0 ? out : null;
}

function within(p: string, dirs: readonly string[], sep: string): boolean {
  return dirs.some((d) => p === d || (d === sep ? p.startsWith(sep) : p.startsWith(d + sep)));
}

/** The absolute path the filesystem server makes of a relative one, given its allowed folders. */
export function filesystemServerPath(relative: string, folders: readonly string[], env: Pick<PathEnv, 'platform'>): string {
  const path = pathApi(env.platform);
  for (const dir of folders) {
    const candidate = path.resolve(dir, relative);
    if (within(candidate, folders, path.sep)) return candidate;
  }
  return path.resolve(folders[0]!, relative);
}

/** The files a relative path argument of the filesystem server names (see argPaths), or null with why. */
export function filesystemServerArgPaths(
  relative: string,
  command: readonly string[],
  cwd: string | undefined,
  env: PathEnv,
): { paths: string[]; absolute: string } | { why: string } {
  const folders = filesystemAllowedFolders(command, cwd, env);
  if (folders === null) return { why: "the filesystem server's allowed folders could not be read from its command line" };
  const absolute = filesystemServerPath(relative, folders, env);
  const paths = argPaths(absolute, env);
  if (paths === null) return { why: `the path cannot be resolved (${absolute})` };
  return { paths, absolute };
}
