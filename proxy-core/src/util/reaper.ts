/**
 * Airlock's optional native reaper (proxy-core/native/reaper.c, Linux only, in the native addon built at install
 * when a compiler is there: util/native.ts): makes this process a child subreaper, so what its server's
 * processes leave behind (setsid, a double fork) is reparented here rather than to init and stays findable, and
 * reaps such an orphan by its pid once it is killed. Absent (no compiler, another OS, or AIRLOCK_NATIVE_REAPER=off), every call says so and the process
 * tree is found through /proc alone (util/tree-watch.ts).
 */
import { nativeAddon } from './native.js';

interface ReaperAddon {
  setChildSubreaper(): boolean;
  reap(pid: number): boolean;
}

let subreaper = false;

function load(): ReaperAddon | null {
  if (process.platform !== 'linux' || process.env.AIRLOCK_NATIVE_REAPER === 'off') return null;
  const addon = nativeAddon();
  // the reaper's calls are built on Linux only
  return addon?.setChildSubreaper && addon.reap ? (addon as ReaperAddon) : null;
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
