/**
 * Opening SQLite files the way Airlock needs them: private (0600, including the `-wal` and `-shm` files the
 * journal adds) and with errors that name the file and say what is wrong with it.
 */
import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';

const SIDE_FILES = ['-wal', '-shm', '-journal'] as const;

/**
 * Make sure `path` exists, created 0600. SQLite creates a database's `-wal`, `-shm` and `-journal` files
 * with the database file's own mode (its unix VFS even fchmods them past the umask), so creating the main file
 * 0600 ourselves, before SQLite would with 0644, is what keeps all of them private; no process-wide umask
 * change is needed (that would race with every other file the process creates meanwhile).
 */
export function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (statSync(path).isDirectory()) throw Object.assign(new Error(`EISDIR: ${path} is a folder`), { code: 'EISDIR' });
  }
  tighten(path);
}

/**
 * Take group and other permissions away (0644 -> 0600). Never adds any: a database its owner made read-only
 * (0400) stays read-only and is reported as such, not silently made writable. No chmod when nothing changes.
 */
function tighten(path: string): void {
  if (process.platform === 'win32') return;
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) chmodSync(path, mode & 0o700);
}

/** Tighten a database and its side files (files from older versions were 0644). */
export function chmodDatabaseFiles(path: string): void {
  for (const p of [path, ...SIDE_FILES.map((s) => path + s)]) {
    try {
      tighten(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

export function databaseFiles(path: string): string[] {
  return [path, ...SIDE_FILES.map((s) => path + s)].filter((p) => existsSync(p));
}

/** An error opening or using a database file: names the file, keeps SQLite's (or the OS's) code. */
export class DatabaseFileError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseFileError';
  }
}

export function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** SQLite's word that the file is not (or no longer) a database. */
export function isCorruption(err: unknown): boolean {
  const code = errorCode(err);
  return code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB';
}

function problem(code: string): string {
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') return 'it is read-only';
  if (code === 'SQLITE_NOTADB') return 'it is not a SQLite database (overwritten or damaged)';
  if (code.startsWith('SQLITE_CORRUPT')) return 'it is damaged';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'its folder does not exist';
  if (code.startsWith('SQLITE_CANTOPEN')) return 'SQLite cannot open it (a folder, a missing folder, or no permission?)';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'another process holds it locked';
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') return 'the disk is full';
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') return 'the disk reported an I/O error';
  if (code.startsWith('SQLITE_PERM') || code.startsWith('SQLITE_AUTH') || code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return 'it cannot be used';
}

/** "cannot open the Airlock database /x/airlock.db: it is read-only (attempt to write a readonly database)" */
export function databaseError(path: string, err: unknown, what = 'the Airlock database'): DatabaseFileError {
  if (err instanceof DatabaseFileError) return err;
  const code = errorCode(err);
  const detail = err instanceof Error ? err.message : String(err);
  // errors Airlock raises itself (a newer schema, say) already say what is wrong: keep their words
  const message = code ? `${problem(code)} (${detail})` : detail;
  return new DatabaseFileError(path, code, `cannot open ${what} ${path}: ${message}`, { cause: err });
}

/** Open (creating when absent) a database with private files. Errors name the file. */
export function openPrivateDatabase(path: string, options: Database.Options = {}, what?: string): Database.Database {
  let db: Database.Database | undefined;
  try {
    if (!options.readonly && !options.fileMustExist) createPrivateFile(path);
    chmodDatabaseFiles(path);
    db = new Database(path, options);
    return db;
  } catch (err) {
    db?.close();
    throw databaseError(path, err, what);
  }
}

/** Errors that mean "the disk cannot take this write now", not "this write is wrong". */
export function isDiskError(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code === 'ENOSPC' || code === 'EDQUOT' || code === 'EIO';
}
