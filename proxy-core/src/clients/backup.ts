/**
 * The first-ever backup of a config file before Airlock changes it (never overwritten), and the original text of
 * the remote entries protect rewrote. Both hold secrets, so 0600.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { configBackupDir } from '../ipc/paths.js';
import { inOwnFolder, type OwnFolder } from '../util/own-folder.js';

/**
 * Run `fn` in the folder of the backups, held: a real one of the user's, never where a link leads, even one put
 * in its place while `fn` writes (util/own-folder.ts).
 */
function inBackupFolder<T>(dataDir: string, fn: (folder: OwnFolder) => Promise<T>): Promise<T> {
  return inOwnFolder(configBackupDir(dataDir), "the client configs' backups folder", fn);
}

/** Where the backup of `realPath` lives under `dataDir`. */
export function backupPath(dataDir: string, realPath: string): string {
  const digest = createHash('sha256').update(realPath).digest('hex').slice(0, 12);
  const safe = basename(realPath).replace(/[^A-Za-z0-9._-]/g, '_');
  return join(configBackupDir(dataDir), `${safe}.${digest}.airlock-backup`);
}

/** Save `bytes` as the backup of `realPath` unless one exists. Returns the path and whether it was created now. */
export async function saveFirstBackup(dataDir: string, realPath: string, bytes: Buffer): Promise<{ path: string; created: boolean }> {
  const path = backupPath(dataDir, realPath);
  const created = await inBackupFolder(dataDir, async (folder) => {
    try {
      await writeFile(folder.at(basename(path)), bytes, { flag: 'wx', mode: 0o600 });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  });
  return { path, created };
}

/**
 * The original text of each remote entry protect rewrote in `realPath`, keyed by the entry's path in the
 * document, with the data protect wrote in its place: unprotect puts the text back only while the entry still
 * holds exactly that data. Beside the file's backup, and as secret (it holds header values).
 */
export interface RemoteOriginal {
  raw: string;
  wrote: unknown;
}

export function remoteOriginalsPath(dataDir: string, realPath: string): string {
  return backupPath(dataDir, realPath).replace(/\.airlock-backup$/, '.remote-entries.json');
}

export async function loadRemoteOriginals(dataDir: string, realPath: string): Promise<Record<string, RemoteOriginal>> {
  let text: string;
  try {
    text = await readFile(remoteOriginalsPath(dataDir, realPath), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  const parsed: unknown = JSON.parse(text);
  const out: Record<string, RemoteOriginal> = {};
  if (typeof parsed !== 'object' || parsed === null) return out;
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
    // anything not of the shape written here is ignored: the entry is then rebuilt from what it says
    if (typeof v === 'object' && v !== null && typeof (v as RemoteOriginal).raw === 'string' && 'wrote' in v) out[k] = v as RemoteOriginal;
  }
  return out;
}

export async function saveRemoteOriginals(dataDir: string, realPath: string, originals: Record<string, RemoteOriginal>): Promise<void> {
  const name = basename(remoteOriginalsPath(dataDir, realPath));
  await inBackupFolder(dataDir, async (folder) => {
    // a new name, made by this write alone: one placed there first (a link to another file) is never written through
    const tmp = folder.at(`${name}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await writeFile(tmp, JSON.stringify(originals), { mode: 0o600, flag: 'wx' });
      await rename(tmp, folder.at(name));
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
  });
}
