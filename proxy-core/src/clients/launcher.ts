/**
 * How a client config starts Airlock: the command `protect` writes in place of a server's. GUI clients start
 * servers with a minimal PATH, so it is always an absolute path. Which binary that is depends on who runs
 * Airlock (a checkout's CLI, the packaged app), so the library never guesses it: whoever composes the program
 * passes a Launcher in (the CLI's default is cli/launcher.ts). A packaged install can name its own in
 * AIRLOCK_LAUNCHER (a JSON array: command, then args), read here from the env the caller hands over.
 */
import type { Env } from '../ipc/paths.js';

export interface Launcher {
  command: string;
  argsPrefix: string[];
}

export class LauncherError extends Error {
  override name = 'LauncherError';
}

/** The launcher AIRLOCK_LAUNCHER names in `env`, or undefined when it is unset; throws LauncherError when malformed. */
export function launcherFromEnv(env: Env): Launcher | undefined {
  const override = env.AIRLOCK_LAUNCHER;
  if (override === undefined || override.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(override);
  } catch {
    throw new LauncherError('AIRLOCK_LAUNCHER must be a JSON array of strings, e.g. ["/opt/airlock/bin/airlock"]');
  }
  if (!Array.isArray(parsed) || !parsed.every((s): s is string => typeof s === 'string' && s !== '')) {
    throw new LauncherError('AIRLOCK_LAUNCHER must be a non-empty JSON array of non-empty strings');
  }
  const [command, ...argsPrefix] = parsed;
  if (command === undefined) throw new LauncherError('AIRLOCK_LAUNCHER must be a non-empty JSON array of non-empty strings');
  return { command, argsPrefix };
}
