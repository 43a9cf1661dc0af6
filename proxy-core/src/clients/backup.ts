/** The first-ever backup of a config file before Airlock changes it. Never overwritten; holds secrets, so 0600. */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { configBackupDir } from '../ipc/paths.js';

/** Where the backup of `realPath` lives under `dataDir`. */
export function backupPath(dataDir: string, realPath: string): string {
  const digest = createHash('sha256').update(realPath).digest('hex').slice(0, 12);
  const safe = basename(realPath).replace(/[^A-Za-z0-9._-]/g, '_');
  return join(configBackupDir(dataDir), `${safe}.${digest}.airlock-backup`);
}

/** Save `bytes` as the backup of `realPath` unless one exists. Returns the path and whether it was created now. */
export async function saveFirstBackup(dataDir: string, realPath: string, bytes: Buffer): Promise<{ path: string; created: boolean }> {
  const path = backupPath(dataDir, realPath);
  await mkdir(configBackupDir(dataDir), { recursive: true, mode: 0o700 });
  try {
    await writeFile(path, bytes, { flag: 'wx', mode: 0o600 });
    return { path, created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { path, created: false };
    throw err;
  }
}
