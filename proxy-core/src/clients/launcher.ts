/**
 * How a client config starts Airlock. GUI clients start servers with a minimal PATH, so the command is always
 * an absolute path: from a checkout, this Node binary plus the repo's bin/airlock.js. A packaged app installs
 * its own launcher at a stable path and names it in AIRLOCK_LAUNCHER (a JSON array: command, then args).
 */
import { fileURLToPath } from 'node:url';
import type { Env } from './types.js';

export interface Launcher {
  command: string;
  argsPrefix: string[];
}

export class LauncherError extends Error {
  override name = 'LauncherError';
}

/** The command and leading args that start `airlock` from a client config. */
export function airlockLauncher(env: Env = process.env): Launcher {
  const override = env.AIRLOCK_LAUNCHER;
  if (override !== undefined && override.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(override);
    } catch {
      throw new LauncherError('AIRLOCK_LAUNCHER must be a JSON array of strings, e.g. ["/opt/airlock/bin/airlock"]');
    }
    if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((s) => typeof s === 'string' && s !== '')) {
      throw new LauncherError('AIRLOCK_LAUNCHER must be a non-empty JSON array of non-empty strings');
    }
    const [command, ...argsPrefix] = parsed as string[];
    return { command: command!, argsPrefix };
  }
  // Same relative spot from src/clients and dist/clients.
  const bin = fileURLToPath(new URL('../../../bin/airlock.js', import.meta.url));
  return { command: process.execPath, argsPrefix: [bin] };
}
