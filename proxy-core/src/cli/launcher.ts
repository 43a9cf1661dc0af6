/**
 * The launcher the CLI writes into client configs: AIRLOCK_LAUNCHER when set, else this Node binary, the wrapper's
 * Node flags (wrap/v8-tuning.ts) and this checkout's bin/airlock.js. Lives in the CLI because only the CLI knows
 * it is running as `node airlock.js`; the desktop app composes its own (its executable is Electron, which must
 * never end up in a client config).
 */
import { launcherFromEnv, type Launcher } from '../clients/launcher.js';
import type { Env } from '../clients/types.js';
import { WRAPPER_NODE_FLAGS } from '../wrap/v8-tuning.js';
import { airlockBin } from './install-paths.js';

/** The command and leading args that start this `airlock` from a client config. */
export function cliLauncher(env: Env = process.env): Launcher {
  const named = launcherFromEnv(env);
  if (named) return named;
  return checkoutLauncher();
}

/** This checkout's own: this Node binary, the wrapper's Node flags and bin/airlock.js. */
function checkoutLauncher(): Launcher {
  return { command: process.execPath, argsPrefix: [...WRAPPER_NODE_FLAGS, airlockBin()] };
}

/**
 * The same without the flags: what protect wrote before it added them. Its entries run this Airlock as they
 * always did (the wrapper only goes without the flags' savings), so they count as protected, and unprotect
 * finds them.
 */
function checkoutLauncherWithoutFlags(): Launcher {
  return { command: process.execPath, argsPrefix: [airlockBin()] };
}

/** The launchers whose entries count as protected: the one protect writes, and this checkout's own (either form). */
export function ownLaunchers(env: Env = process.env): Launcher[] {
  const own = [checkoutLauncher(), checkoutLauncherWithoutFlags()];
  try {
    const named = launcherFromEnv(env);
    return named ? [named, ...own] : own;
  } catch {
    return own;
  }
}
