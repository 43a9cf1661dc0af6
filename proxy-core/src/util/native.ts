/**
 * Airlock's optional native addon (proxy-core/native/, built at install on Linux and macOS when a compiler is
 * there), loaded once. Absent (no compiler, another OS), this answers null and each user says what it does
 * instead: the reaper falls back to /proc (util/reaper.ts), a socket's peer is unknown (ipc/peer.ts).
 */
import { createRequire } from 'node:module';

export interface NativeAddon {
  /** Linux only. */
  setChildSubreaper?(): boolean;
  /** Linux only. */
  reap?(pid: number): boolean;
  /** The kernel's record of a Unix socket's peer; null when the system does not say. */
  peerCredentials?(fd: number): { pid: number; uid: number; gid: number } | null;
}

let addon: NativeAddon | null | undefined;

export function nativeAddon(): NativeAddon | null {
  if (addon !== undefined) return addon;
  addon = null;
  if (process.platform !== 'linux' && process.platform !== 'darwin') return addon;
  try {
    // the same relative path from src/util and from dist/util
    addon = createRequire(import.meta.url)('../../native/build/Release/airlock_native.node') as NativeAddon;
  } catch {
    // not built here: each user has its fallback
  }
  return addon;
}
