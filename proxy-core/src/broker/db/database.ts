/**
 * The broker's database as a whole: refuse to start on one that lost its contents, recover from a backup or
 * start fresh only when told to, and keep that backup current.
 *
 * Why refuse: E-Stop, deny rules and withdrawn trust all live in the database. A data dir that has run a
 * broker before (it has the secret, or a database backup) and whose database is missing, empty, schema-less
 * or unreadable would otherwise come up with E-Stop off and no rules, silently. That is failing open, so
 * the broker stops and says which file is wrong and which command recovers. A first start (no secret, no
 * backup) creates everything silently.
 */
import { copyFileSync, existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import Database from 'better-sqlite3';
import { databaseBackupDir, databaseBackupPath, databasePath, secretPath } from '../../ipc/paths.js';
import { inOwnFolder } from '../../util/own-folder.js';
import { createPrivateFile, databaseError, databaseFiles, DatabaseFileError, errorCode, isCorruption } from './files.js';
import { MIGRATIONS } from './migrations.js';
import { Store } from './store.js';

/** What to do about the database at start. */
export type DatabaseRecovery = 'check' | 'fresh' | 'restore-backup';

export const RESTORE_COMMAND = 'airlock daemon --restore-backup';
export const FRESH_COMMAND = 'airlock daemon --fresh-database';

/** The broker will not start on this database; `message` says why and how to recover. */
export class DatabaseRefused extends Error {
  constructor(
    readonly path: string,
    readonly reason: 'missing' | 'empty' | 'no-schema' | 'damaged' | 'healthy' | 'no-backup' | 'bad-backup',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseRefused';
  }
}

export type DatabaseState =
  | { state: 'absent' }
  | { state: 'empty' }
  | { state: 'no-schema' }
  | { state: 'damaged'; detail: string }
  | { state: 'ok'; version: number };

/**
 * Look at a database without changing it (read-only connection; a read-only connection never checkpoints
 * or deletes the WAL). Throws DatabaseFileError when the file cannot be read at all (a folder, no permission).
 */
export function inspectDatabase(path: string): DatabaseState {
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory()) throw Object.assign(new Error('EISDIR: is a directory'), { code: 'EISDIR' });
    size = st.size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'absent' };
    throw databaseError(path, err);
  }
  if (size === 0) return { state: 'empty' };
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const version = db.pragma('user_version', { simple: true }) as number;
    const objects = (db.prepare('SELECT COUNT(*) AS n FROM sqlite_master').get() as { n: number }).n;
    if (version === 0 && objects === 0) return { state: 'no-schema' };
    // tables without a schema version: not a database Airlock wrote, and migrating it would fail anyway
    if (version === 0) return { state: 'damaged', detail: 'it has tables but no Airlock schema version' };
    return { state: 'ok', version };
  } catch (err) {
    if (isCorruption(err)) return { state: 'damaged', detail: err instanceof Error ? err.message : String(err) };
    throw databaseError(path, err);
  } finally {
    db?.close();
  }
}

/** `airlock.db` -> `airlock.db.damaged-2025-01-31T10-00-00-000Z` (a name that sorts and is valid on Windows). */
export function asideName(path: string, label: string, at = new Date()): string {
  return `${path}.${label}-${at.toISOString().replace(/[:.]/g, '-')}`;
}

/** Move the database and its side files aside under one stamp (SQLite pairs `X` with `X-wal`). Never deletes. */
function moveAside(path: string, label: string): string | null {
  const files = databaseFiles(path);
  if (files.length === 0) return null;
  const target = asideName(path, label);
  for (const f of files) renameSync(f, target + f.slice(path.length));
  return target;
}

function backupInfo(dir: string): { path: string; at: Date | null } {
  const path = databaseBackupPath(dir);
  try {
    return { path, at: statSync(path).mtime };
  } catch {
    return { path, at: null };
  }
}

function recoveryHint(dir: string, path: string): string {
  const backup = backupInfo(dir);
  const aside = `${path}.damaged-<time>`;
  const restore = backup.at
    ? `restore the backup from ${backup.at.toISOString()} (${backup.path}) with \`${RESTORE_COMMAND}\`, or start`
    : `there is no backup to restore (${backup.path}); start`;
  return `To recover, ${restore} with an empty database with \`${FRESH_COMMAND}\`; either way the current file is kept as ${aside}.`;
}

function refuse(dir: string, path: string, found: DatabaseState, usedBefore: boolean): DatabaseRefused {
  const what =
    found.state === 'absent' ? 'is missing'
    : found.state === 'empty' ? 'is empty (0 bytes)'
    : found.state === 'no-schema' ? 'has no tables (schema version 0)'
    : found.state === 'damaged' ? `is damaged (${found.detail})`
    : 'cannot be used';
  const reason = found.state === 'absent' ? 'missing' : found.state === 'empty' ? 'empty' : found.state === 'no-schema' ? 'no-schema' : 'damaged';
  const context = usedBefore ? ' although this data dir has been used before' : '';
  return new DatabaseRefused(
    path,
    reason,
    `the Airlock database ${path} ${what}${context}; starting on it would silently drop E-Stop, rules and trust settings, so the broker will not start. ${recoveryHint(dir, path)}`,
  );
}

/** Check a backup before it replaces anything: a full quick_check, and a schema this Airlock can open. */
function checkBackup(path: string): void {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`integrity check failed: ${String(check)}`);
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version < 1 || version > MIGRATIONS.length) throw new Error(`schema version ${version} is not one this Airlock can open`);
  } finally {
    db?.close();
  }
}

export interface OpenedDatabase {
  store: Store;
  /** What was done to get a usable database, for the log and the person who asked for it. */
  recovered?: { action: 'restored' | 'fresh'; keptAs: string | null; backupFrom?: string; previousBackupKeptAs?: string | null };
}

/**
 * Open the broker's database in `dir`, refusing (DatabaseRefused) one that has lost its contents. Call with
 * the broker lock held: recovery moves files around.
 */
export function openBrokerDatabase(dir: string, recovery: DatabaseRecovery = 'check', now: () => number = Date.now): OpenedDatabase {
  const path = databasePath(dir);
  const backup = databaseBackupPath(dir);
  const usedBefore = existsSync(secretPath(dir)) || existsSync(backup);
  let found: DatabaseState;
  try {
    found = inspectDatabase(path);
  } catch (err) {
    // unreadable as it stands (a folder, no permission): only an explicit fresh start may move it aside
    if (recovery !== 'fresh') throw err;
    found = { state: 'damaged', detail: (err as Error).message };
  }

  if (recovery !== 'check' && found.state === 'ok') {
    // a recovery flag left in a service definition must not reset or roll back a healthy database on every start
    throw new DatabaseRefused(
      path,
      'healthy',
      `the Airlock database ${path} is healthy; --${recovery === 'fresh' ? 'fresh-database' : 'restore-backup'} only replaces a missing or damaged one. Start without it.`,
    );
  }

  if (recovery === 'restore-backup') {
    if (!existsSync(backup)) {
      throw new DatabaseRefused(path, 'no-backup', `there is no backup of the Airlock database to restore (${backup}); start with an empty database with \`${FRESH_COMMAND}\``);
    }
    try {
      checkBackup(backup);
    } catch (err) {
      throw new DatabaseRefused(
        path,
        'bad-backup',
        `the backup ${backup} cannot be restored: ${(err as Error).message}; start with an empty database with \`${FRESH_COMMAND}\``,
        { cause: err },
      );
    }
    const backupFrom = statSync(backup).mtime.toISOString();
    // copy first, swap second: a failed copy leaves the damaged file where it was
    const incoming = `${path}.restoring-${process.pid}`;
    rmSync(incoming, { force: true });
    createPrivateFile(incoming);
    copyFileSync(backup, incoming);
    const keptAs = moveAside(path, 'damaged');
    renameSync(incoming, path);
    return { store: openStore(dir, path, now), recovered: { action: 'restored', keptAs, backupFrom } };
  }

  if (recovery === 'fresh') {
    const keptAs = moveAside(path, 'damaged');
    // the old backup is the last good copy of the user's rules: the fresh database must not overwrite it
    const previousBackupKeptAs = existsSync(backup) ? asideName(backup, 'before-fresh') : null;
    if (previousBackupKeptAs) renameSync(backup, previousBackupKeptAs);
    return { store: openStore(dir, path, now), recovered: { action: 'fresh', keptAs, previousBackupKeptAs } };
  }

  if (found.state === 'ok') return { store: openStore(dir, path, now) };
  if (found.state !== 'damaged' && !usedBefore) return { store: openStore(dir, path, now) }; // first start
  throw refuse(dir, path, found, usedBefore);
}

/** Open the Store; a database that turns out damaged while migrating is refused like any other. */
function openStore(dir: string, path: string, now: () => number): Store {
  try {
    return new Store(path, { now });
  } catch (err) {
    if (isCorruption(err)) {
      throw refuse(dir, path, { state: 'damaged', detail: (err as Error).message }, true);
    }
    throw err instanceof DatabaseFileError ? err : databaseError(path, err);
  }
}

/** Turn a failure while reading the opened database (in the Broker's constructor, say) into a refusal. */
export function databaseFailure(dir: string, err: unknown): Error {
  const path = databasePath(dir);
  if (isCorruption(err)) return refuse(dir, path, { state: 'damaged', detail: (err as Error).message }, true);
  if (errorCode(err).startsWith('SQLITE_')) return databaseError(path, err);
  return err instanceof Error ? err : new Error(String(err));
}

/** How the backups folder is named to a person when it is not a real folder of theirs (util/own-folder.ts). */
const BACKUPS_FOLDER = 'the database backups folder';
/** A backup being made is `<backup's name>.tmp-<pid>` beside it: what the start-up sweep removes. */
const TEMP_MARK = '.tmp-';

/**
 * Copy the live database to `<data>/db-backups/airlock.db.bak` with SQLite's online backup, which copies
 * a batch of pages per event-loop turn (calls keep flowing) and stays consistent while writes go on. Written
 * to a temp name (0600) and renamed over the old backup only when complete, so a crash mid-backup never
 * leaves a half backup in its place. The copy is switched to a single self-contained file (no -wal).
 */
export async function backupDatabase(store: Store, dir: string): Promise<string> {
  const target = databaseBackupPath(dir);
  // through the folder held, start to end: a symlink put in its place meanwhile never has the user's whole
  // database copied wherever it leads (util/own-folder.ts)
  await inOwnFolder(databaseBackupDir(dir), BACKUPS_FOLDER, async (folder) => {
    const held = folder.at(basename(target));
    const temp = `${held}${TEMP_MARK}${process.pid}`;
    for (const f of databaseFiles(temp)) rmSync(f, { force: true });
    createPrivateFile(temp);
    try {
      await store.db.backup(temp);
      const copy = new Database(temp, { fileMustExist: true });
      try {
        copy.pragma('journal_mode = DELETE');
      } finally {
        copy.close();
      }
      createPrivateFile(temp); // re-assert 0600 (it exists: this only chmods)
      renameSync(temp, held);
    } catch (err) {
      for (const f of databaseFiles(temp)) rmSync(f, { force: true });
      throw err;
    }
  });
  return target;
}

/** A backup at start, every `intervalMs`, and at a clean stop; `stop()` waits for one in progress. */
export class DatabaseBackups {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly dir: string,
    private readonly intervalMs: number,
    private readonly onError: (err: Error) => void,
  ) {}

  start(): void {
    // temp copies a killed broker left behind (the caller holds the broker lock: none is in use)
    // (through the folder held: none is swept where a symlink leads; the backup itself then says why it failed)
    try {
      inOwnFolder(databaseBackupDir(this.dir), BACKUPS_FOLDER, (folder) => {
        const temps = basename(databaseBackupPath(this.dir)) + TEMP_MARK;
        for (const f of readdirSync(folder.self)) if (f.startsWith(temps)) rmSync(folder.at(f), { force: true });
      });
    } catch {
      // not ours (a link, another user's): nothing is swept there, and the backup says why it is not made
    }
    void this.run();
    this.timer = setInterval(() => void this.run(), this.intervalMs);
    this.timer.unref();
  }

  /** Back up now (or join the backup already running). Never rejects: failures go to onError. */
  run(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) return this.running;
    this.running = backupDatabase(this.store, this.dir)
      .then(
        () => {},
        (err: unknown) => this.onError(err instanceof Error ? err : new Error(String(err))),
      )
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  /** No more timed backups; with `finalBackup`, one last copy of the state the broker stops with. */
  async stop(finalBackup = false): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    if (finalBackup && !this.stopped) await this.run();
    this.stopped = true;
  }
}
