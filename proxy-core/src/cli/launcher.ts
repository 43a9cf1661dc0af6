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
  return checkoutLauncher();
}

/** This checkout's own: this Node binary and bin/airlock.js (same relative spot from src/cli and dist/cli). */
function checkoutLauncher(): Launcher {
  const bin = fileURLToPath(new URL('../../../bin/airlock.js', import.meta.url));
  return { command: process.execPath, argsPrefix: [bin] };
}

/** The launchers whose entries count as protected: the one protect writes, and this checkout's own. */
export function ownLaunchers(env: Env = process.env): Launcher[] {
  try {
    const named = launcherFromEnv(env);
    return named ? [named, checkoutLauncher()] : [checkoutLauncher()];
  } catch {
    return [checkoutLauncher()];
  }
}
