/**
 * One broker per data dir, decided before anything touches the database.
 *
 * Why an OS lock held through SQLite, and not a pid file or the socket alone:
 * - The socket cannot decide it: a crashed broker leaves its socket file behind, and removing it after a
 *   refused connect is a check-then-act race (two starts both see "stale", one removes the other's fresh
 *   socket, and both run).
 * - A `wx` pid file has the same problem one level down: a stale file (dead pid) must be removed, and two
 *   starts removing it at once can both win; and a pid reused by an unrelated process would block Airlock.
 * - Node has no flock(), but SQLite takes real OS locks (fcntl on Unix, LockFileEx on Windows) that the
 *   kernel drops when the holder dies, however it dies. A connection in EXCLUSIVE locking mode that has
 *   begun an exclusive transaction keeps its lock until it closes; another process, or another connection
 *   in this process, gets SQLITE_BUSY at once (timeout 0). So there is no stale state to clean up and no
 *   window between "check" and "take". The lock file is never deleted: deleting a lock file while someone may
 *   be opening it is how two holders of "the same" lock happen.
 * Limit: like any fcntl lock, it is only as good as the file system's locking (not for a data dir on NFS).
 */
import type Database from 'better-sqlite3';
import { brokerLockPath } from '../ipc/paths.js';
import { databaseError, errorCode, openPrivateDatabase } from './db/files.js';
import { AlreadyRunning } from './server.js';

export interface BrokerLock {
  readonly path: string;
  /** Let the next broker start. Idempotent. */
  release(): void;
}

/** Take the data dir's broker lock, or throw AlreadyRunning when another broker holds it. */
export function acquireBrokerLock(dir: string): BrokerLock {
  const path = brokerLockPath(dir);
  let db: Database.Database | undefined;
  try {
    db = openPrivateDatabase(path, { timeout: 0 }, 'the broker lock');
    db.pragma('journal_mode = MEMORY'); // nothing is ever written: no journal file beside the lock
    db.pragma('locking_mode = EXCLUSIVE');
    // the write lock taken here is kept after COMMIT in EXCLUSIVE locking mode, until the connection closes
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (err) {
    db?.close();
    const code = errorCode(err);
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
      throw new AlreadyRunning(dir, `another Airlock broker is already running on the data dir ${dir} (it holds ${path})`);
    }
    const named = databaseError(path, err, 'the broker lock');
    throw new Error(`${named.message}; if no Airlock broker is running, delete ${path} and start again`, { cause: err });
  }
  let held: Database.Database | null = db;
  return {
    path,
    release() {
      held?.close();
      held = null;
    },
  };
}
