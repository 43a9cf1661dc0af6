/**
 * Which entries run Airlock: an entry counts as protected only when its command (and the words before `wrap`)
 * is one of Airlock's own launchers, compared as real paths, and its wrapper reports to this data dir. Any other
 * entry that merely mentions airlock (`bash -c "exec node server.js" airlock wrap …`) starts something else,
 * whatever its args say. Whoever composes the program passes the launchers it writes (`launchers`); without
 * them, this install's own (node + bin/airlock.js of this checkout, and AIRLOCK_LAUNCHER when it is set).
 */
import { realpathSync } from 'node:fs';
import { dataDir as defaultDataDir } from '../ipc/paths.js';
import { launcherFromEnv, type Launcher } from './launcher.js';
import { pathFor } from './known-clients.js';
import type { DiscoverOptions } from './types.js';

/** What an entry is compared with: the launchers that are Airlock's, and the data dir this Airlock reads. */
export interface Recognition {
  /** The launchers as given (for passing on), and as comparable words. */
  given: Launcher[];
  launchers: string[][];
  /** The data dir this Airlock's broker serves, as a comparable path. */
  dataDir: string;
  /** Where a wrapper started without --home looks (the default data dir of an environment without AIRLOCK_HOME). */
  defaultHome: string;
  platform: NodeJS.Platform;
  /** Paths already resolved (a config with thousands of entries names the same launcher in each). */
  seen: Map<string, string>;
}

/** A path to compare: its real path when it exists, else as spelled (normalised); case-folded where the OS ignores case. */
export function comparablePath(path: string, platform: NodeJS.Platform = process.platform): string {
  const p = pathFor(platform);
  let out = p.isAbsolute(path) ? p.normalize(path) : path;
  if (platform === process.platform && p.isAbsolute(path)) {
    try {
      out = realpathSync.native(path);
    } catch {
      // not there: the spelled path is all there is
    }
  }
  return platform === 'darwin' || platform === 'win32' ? out.toLowerCase() : out;
}

/** The recognition context for these options; `writing`: the launcher a protect run writes, which counts too. */
export function recognition(opts: DiscoverOptions, writing?: Launcher): Recognition {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  // Without launchers from the composer (the CLI knows its own; the app, its packaged one), only the one named in
  // AIRLOCK_LAUNCHER counts: this module cannot tell which binary runs it (inside Electron, the running
  // executable is the app), and a guess would call an entry protected that is not
  let given = opts.launchers ? [...opts.launchers] : undefined;
  if (!given) {
    given = [];
    try {
      const named = launcherFromEnv(env);
      if (named) given.push(named);
    } catch {
      // a malformed AIRLOCK_LAUNCHER names no launcher: nothing it would have written counts
    }
  }
  if (writing) given.unshift(writing);
  const p = pathFor(platform);
  const dir = opts.dataDir ?? defaultDataDir(env, platform);
  return {
    given,
    launchers: given.map((l) => [l.command, ...l.argsPrefix].map((w) => comparablePath(w, platform))),
    dataDir: comparablePath(p.isAbsolute(dir) ? dir : p.resolve(dir), platform),
    defaultHome: comparablePath(defaultDataDir({ ...env, AIRLOCK_HOME: undefined }, platform), platform),
    platform,
    seen: new Map(),
  };
}

/** True when the launcher words (command and args before `wrap`) are exactly one of Airlock's launchers. */
export function isOwnLauncher(words: readonly string[], r: Recognition): boolean {
  const mine = words.map((w) => {
    let c = r.seen.get(w);
    if (c === undefined) r.seen.set(w, (c = comparablePath(w, r.platform)));
    return c;
  });
  return r.launchers.some((l) => l.length === mine.length && l.every((w, i) => w === mine[i]));
}

/** The data dir a wrapper started with this --home (or none) reports to, when it is not this Airlock's. */
export function otherHome(home: string | undefined, r: Recognition): string | undefined {
  const dir = home === undefined ? r.defaultHome : comparablePath(home, r.platform);
  return dir === r.dataDir ? undefined : (home ?? dir);
}
