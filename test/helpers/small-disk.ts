/**
 * A disk with no room left, for tests of what Airlock does when a write fails: a tmpfs mounted on a folder, and a
 * filler that takes what is left of it. Mounting needs root: when the mount fails, the test fails (nothing is
 * skipped).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** A tmpfs of `size` (as mount reads it: "4m", "256k") on `dir`; its unmount is handed to `cleanup`. */
export function mountTmpfs(dir: string, size: string, cleanup: (fn: () => void) => void): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  cleanup(() => {
    try {
      execFileSync('umount', ['-l', dir]);
    } catch {
      // already unmounted
    }
  });
}

/** Write into `dir` until its disk says no; the filler's path. */
export function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(16 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return path;
}
