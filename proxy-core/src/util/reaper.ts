/**
 * Airlock's optional native reaper (proxy-core/native/reaper.c, Linux only, built at install when a compiler is
 * there): makes this process a child subreaper, so what its server's processes leave behind (setsid, a double
 * fork) is reparented here rather than to init and stays findable, and reaps such an orphan by its pid once it
 * is killed. Absent (no compiler, another OS, or AIRLOCK_NATIVE_REAPER=off), every call says so and the process
 * tree is found through /proc alone (util/tree-watch.ts).
 */
import { createRequire } from 'node:module';

interface ReaperAddon {
  setChildSubreaper(): boolean;
  reap(pid: number): boolean;
}

let addon: ReaperAddon | null | undefined;
let subreaper = false;

function load(): ReaperAddon | null {
  if (addon !== undefined) return addon;
  addon = null;
  if (process.platform !== 'linux' || process.env.AIRLOCK_NATIVE_REAPER === 'off') return addon;
  try {
    // the same relative path from src/util and from dist/util
    addon = createRequire(import.meta.url)('../../native/build/Release/airlock_reaper.node') as ReaperAddon;
  } catch {
    // not built here: the /proc fallback is what there is
  }
  return addon;
}

/** Make this process a child subreaper (once). True when it is one. */
export function becomeSubreaper(): boolean {
  if (subreaper) return true;
  const native = load();
  subreaper = native !== null && native.setChildSubreaper();
  return subreaper;
}

/** Is this process a child subreaper (so orphans of its children's trees are its own children)? */
export function isSubreaper(): boolean {
  return subreaper;
}

/**
 * Reap `pid`, a child of this process that has ended and that Node did not start (an orphan reparented here):
 * never a child libuv started, whose end libuv must see. False when there is nothing to reap.
 */
export function reapOrphan(pid: number): boolean {
  const native = load();
  if (!native) return false;
  try {
    return native.reap(pid);
  } catch {
    return false;
  }
}
