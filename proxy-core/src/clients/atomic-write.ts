/**
 * Replace a file so that a crash or a concurrent writer never leaves it half-written or silently overwritten:
 * write a temp file in the same folder, fsync, check the target still holds what we read, then rename.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export class ConcurrentEditError extends Error {
  override name = 'ConcurrentEditError';
}

export interface AtomicWriteOptions {
  /** Permission bits for the new file (the old file's, so a 0600 config with secrets stays 0600). */
  mode: number;
  /** Owner to keep (POSIX): run with sudo, a new file would otherwise belong to root. */
  owner?: { uid: number; gid: number };
  /** The bytes the file must still hold right before the rename; otherwise ConcurrentEditError. */
  expect?: Buffer;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Atomically replace `path` with `data`. */
export async function writeFileAtomic(path: string, data: Buffer, opts: AtomicWriteOptions): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.airlock-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  let renamed = false;
  try {
    const fh = await open(tmp, 'wx', opts.mode & 0o777);
    try {
      await fh.writeFile(data);
      // open() is subject to the umask; set the exact bits explicitly.
      await fh.chmod(opts.mode & 0o7777).catch(() => undefined);
      if (opts.owner && process.platform !== 'win32') await fh.chown(opts.owner.uid, opts.owner.gid).catch(() => undefined);
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (opts.expect) {
      const now = await readFile(path).catch(() => null);
      if (!now || !now.equals(opts.expect)) throw new ConcurrentEditError(`${path} changed while Airlock was editing it`);
    }
    // Windows refuses to replace a file another process holds open for a moment; retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await rename(tmp, path);
        renamed = true;
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (attempt >= 5 || (code !== 'EPERM' && code !== 'EBUSY' && code !== 'EACCES')) throw err;
        await sleep(50 * (attempt + 1));
      }
    }
    await syncDir(dir);
  } finally {
    if (!renamed) await unlink(tmp).catch(() => undefined);
  }
}

async function syncDir(dir: string): Promise<void> {
  // Makes the rename itself durable on POSIX; not possible (nor needed) on Windows.
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // best effort
  }
}
