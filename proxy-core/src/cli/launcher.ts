/**
 * The launcher the CLI writes into client configs: AIRLOCK_LAUNCHER when set, else this Node binary and this
 * checkout's bin/airlock.js. Lives in the CLI because only the CLI knows it is running as `node airlock.js`;
 * the desktop app composes its own (its executable is Electron, which must never end up in a client config).
 */
import { fileURLToPath } from 'node:url';
import { launcherFromEnv, type Launcher } from '../clients/launcher.js';
import type { Env } from '../clients/types.js';

/** The command and leading args that start this `airlock` from a client config. */
export function cliLauncher(env: Env = process.env): Launcher {
  const named = launcherFromEnv(env);
  if (named) return named;
  // Same relative spot from src/cli and dist/cli: the repo root's bin/airlock.js.
  const bin = fileURLToPath(new URL('../../../bin/airlock.js', import.meta.url));
  return { command: process.execPath, argsPrefix: [bin] };
}
