/**
 * Facts about where the app runs, found once by the composition root and handed to every feature: no feature
 * guesses a path. The launcher is the one that matters most: it is what Protect writes into the configs of
 * the person's MCP clients, and it must start Airlock's wrapper long after this process and its source tree
 * are gone.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Environment {
  platform: NodeJS.Platform;
  packaged: boolean;
  /** Airlock's data dir (AIRLOCK_HOME, else the OS's per-user folder): where the broker lives. */
  dataDir: string;
  /** This runtime: Electron's binary (or Node's, under a test harness). */
  execPath: string;
  /** The CLI (electron/dist/cli.js, which runs proxy-core's `bin/airlock.js`), run by `execPath` as Node. */
  cli: string;
  /** The built renderer, served on the app's own protocol. */
  rendererDist: string;
  /** The tray icons, one file per state (and `*Template` on macOS). */
  trayIcons: string;
  /** The built preload (a sandboxed preload is one CommonJS file). */
  preload: string;
  /** The app's own files (preferences) and its logs. */
  userData: string;
  logs: string;
  /** AIRLOCK_LAUNCHER for the broker: command and args that start `airlock`, or null to leave the env as it is. */
  launcher: string[] | null;
}

/** The app's id: `appId` in build/electron-builder.yml, and Windows' AppUserModelID (toasts are tied to it). */
export const APP_ID = 'dev.airlock.app';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The repo root in a checkout, the app's root inside the asar when packaged: the same relative spot. */
const ROOT = join(HERE, '..', '..');

/** Paths that follow from where this file is (electron/dist). */
export function appFiles(): Pick<Environment, 'cli' | 'rendererDist' | 'trayIcons' | 'preload'> {
  return {
    cli: join(HERE, 'cli.js'),
    rendererDist: join(ROOT, 'renderer', 'dist'),
    trayIcons: join(ROOT, 'build', 'icons', 'tray'),
    preload: join(HERE, 'preload.cjs'),
  };
}

export interface LauncherFacts {
  platform: NodeJS.Platform;
  packaged: boolean;
  /** Running inside Electron (`process.versions.electron`), not plain Node. */
  electron: boolean;
  execPath: string;
  resourcesPath: string;
  cli: string;
  env: NodeJS.ProcessEnv;
}

/**
 * What Protect should write as the command of a protected server. Packaged: the `airlock` script shipped in
 * the app's resources (it runs the wrapper with the app's own runtime, like VS Code's `code`). From a checkout
 * under Electron: Node from PATH and this checkout's CLI, because Electron's binary in a client config would
 * start the app, not the wrapper. A launcher the person set (AIRLOCK_LAUNCHER) always wins: null.
 */
export function launcherFor(f: LauncherFacts): string[] | null {
  if (f.env.AIRLOCK_LAUNCHER?.trim()) return null;
  if (f.packaged) return [join(f.resourcesPath, 'bin', f.platform === 'win32' ? 'airlock.cmd' : 'airlock')];
  if (!f.electron) return [f.execPath, f.cli];
  const node = onPath(f.platform === 'win32' ? ['node.exe'] : ['node'], f.env.PATH ?? f.env.Path ?? '');
  return node ? [node, f.cli] : null;
}

function onPath(names: string[], path: string): string | null {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    for (const name of names) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return null;
}
