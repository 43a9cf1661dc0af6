/** The broker's database as files: lock, checks, recovery, backup, modes, and errors that name the file. */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { backupDatabase, DatabaseBackups, DatabaseRefused, openBrokerDatabase } from '../../../../proxy-core/src/broker/db/database.js';
import { databaseError } from '../../../../proxy-core/src/broker/db/files.js';
import { acquireBrokerLock } from '../../../../proxy-core/src/broker/lock.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import { databaseBackupPath, databasePath, secretPath } from '../../../../proxy-core/src/ipc/paths.js';
import { loadOrCreateSecret } from '../../../../proxy-core/src/ipc/secret.js';
import { ROOT } from '../../../helpers/airlock.js';

const undo: (() => unknown)[] = [];
afterEach(() => {
  while (undo.length) undo.pop()!();
});
function home(): string {
  const d = mkdtempSync(join(tmpdir(), 'al-db-'));
  undo.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}
const mode = (p: string) => statSync(p).mode & 0o777;

/** A data dir a broker has run in: secret, database with E-Stop on and a rule, and a backup of that. */
async function usedDir(): Promise<string> {
  const dir = home();
  const { store } = openBrokerDatabase(dir);
  loadOrCreateSecret(dir);
  store.setSetting('estop', 'on');
  await backupDatabase(store, dir);
  store.close();
  return dir;
}

function estopOf(dir: string): string | undefined {
  const store = new Store(databasePath(dir));
  try {
    return store.getSetting('estop');
  } finally {
    store.close();
  }
}

describe('broker lock', () => {
  test('a second holder is refused, in this process and in another; a killed holder frees it', async () => {
    const dir = home();
    const first = acquireBrokerLock(dir);
    expect(() => acquireBrokerLock(dir)).toThrow(/already running on the data dir/);
    first.release();
    acquireBrokerLock(dir).release();

    // another process holds it, then dies without cleaning up (SIGKILL): no stale state is left
    const lockModule = join(ROOT, 'proxy-core', 'dist', 'broker', 'lock.js');
    const child = spawn(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(lockModule)}); m.acquireBrokerLock(${JSON.stringify(dir)}); console.log('held'); setInterval(() => {}, 1000);`]);
    await new Promise<void>((r) => child.stdout.once('data', () => r()));
    expect(() => acquireBrokerLock(dir)).toThrow(/already running/);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const again = acquireBrokerLock(dir);
    expect(mode(join(dir, 'broker.lock'))).toBe(0o600);
    again.release();
  });
});

describe('database files are private (0600)', () => {
  test('a new database, its -wal and its -shm are 0600 after a write', () => {
    const dir = home();
    const path = databasePath(dir);
    const store = new Store(path);
    store.setSetting('estop', 'on');
    for (const p of [path, `${path}-wal`, `${path}-shm`]) {
      expect(existsSync(p), p).toBe(true);
      expect(mode(p), p).toBe(0o600);
    }
    store.close();
  });

  test('files an older version left at 0644 are tightened at start', () => {
    const dir = home();
    const path = databasePath(dir);
    new Store(path).close();
    writeFileSync(`${path}-wal`, '');
    for (const p of [path, `${path}-wal`]) chmodSync(p, 0o644);
    const store = new Store(path);
    store.setSetting('k', 'v');
    for (const p of [path, `${path}-wal`, `${path}-shm`]) expect(mode(p), p).toBe(0o600);
    store.close();
  });
});

describe('errors name the database file', () => {
  test('the message for a read-only database', () => {
    const err = databaseError('/d/airlock.db', Object.assign(new Error('attempt to write a readonly database'), { code: 'SQLITE_READONLY' }));
    expect(err.message).toBe('cannot open the Airlock database /d/airlock.db: it is read-only (attempt to write a readonly database)');
  });

  // Root (these tests run as root) ignores mode bits, so a chmod 0400 file stays writable for it. The
  // reproductions below fail for root too: a folder where the file should be, and a file that is not a
  // database. For read-only itself: chmod 0400 when not root, else the immutable attribute when the file
  // system and capabilities allow it (root cannot write an immutable file).
  test('a folder in place of the database', () => {
    const dir = home();
    mkdirSync(databasePath(dir));
    expect(() => new Store(databasePath(dir))).toThrow(`cannot open the Airlock database ${databasePath(dir)}: it is a folder, not a file`);
  });

  test('a file that is not a database', () => {
    const dir = home();
    writeFileSync(databasePath(dir), 'these are notes, not SQLite\n'.repeat(200));
    expect(() => new Store(databasePath(dir))).toThrow(`cannot open the Airlock database ${databasePath(dir)}: it is not a SQLite database`);
  });

  test('a read-only database', (ctx) => {
    const dir = home();
    const path = databasePath(dir);
    new Store(path).close();
    if (process.getuid?.() === 0) {
      try {
        execFileSync('chattr', ['+i', path], { stdio: 'ignore' });
      } catch {
        ctx.skip(); // no way to make a file read-only for root here
      }
      undo.push(() => execFileSync('chattr', ['-i', path], { stdio: 'ignore' }));
    } else {
      chmodSync(path, 0o400);
      undo.push(() => chmodSync(path, 0o600));
    }
    const before = mode(path);
    expect(() => new Store(path)).toThrow(`cannot open the Airlock database ${path}: it is read-only (attempt to write a readonly database)`);
    expect(mode(path)).toBe(before); // never made writable behind the owner's back
  });
});

describe('a used data dir with a lost database is refused, never silently reset', () => {
  test('first start on a fresh data dir creates everything silently', () => {
    const dir = home();
    const { store, recovered } = openBrokerDatabase(dir);
    expect(recovered).toBeUndefined();
    expect(store.getSetting('estop')).toBeUndefined();
    store.close();
  });

  const damages: [string, (path: string) => void, RegExp][] = [
    ['missing', (p) => rmSync(p), /is missing/],
    ['truncated to 0 bytes', (p) => truncateSync(p, 0), /is empty \(0 bytes\)/],
    ['without schema', (p) => {
      rmSync(p);
      // a valid SQLite file (not 0 bytes) with user_version 0 and no tables
      const db = new Database(p);
      db.exec('CREATE TABLE x (a); DROP TABLE x;');
      db.close();
      expect(statSync(p).size).toBeGreaterThan(0);
    }, /has no tables/],
    ['random bytes', (p) => writeFileSync(p, randomBytes(64 * 1024)), /is damaged \(file is not a database\)/],
  ];
  for (const [name, damage, says] of damages) {
    test(`database ${name}`, async () => {
      const dir = await usedDir();
      const path = databasePath(dir);
      for (const f of [`${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
      damage(path);
      let err: unknown;
      try {
        openBrokerDatabase(dir).store.close();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DatabaseRefused);
      const message = (err as Error).message;
      expect(message).toMatch(says);
      expect(message).toContain(path);
      expect(message).toContain(databaseBackupPath(dir));
      expect(message).toContain('`airlock daemon --restore-backup`');
      expect(message).toContain('`airlock daemon --fresh-database`');
      expect(message).not.toContain('\n');
    });
  }

  test('random bytes are refused even on a data dir that never ran a broker', () => {
    const dir = home();
    writeFileSync(databasePath(dir), randomBytes(8192));
    expect(() => openBrokerDatabase(dir)).toThrow(/is damaged/);
  });

  test('--restore-backup puts the backup back (E-Stop still on) and keeps the damaged file aside', async () => {
    const dir = await usedDir();
    const path = databasePath(dir);
    const junk = randomBytes(10_000);
    for (const f of [`${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
    writeFileSync(path, junk);
    const { store, recovered } = openBrokerDatabase(dir, 'restore-backup');
    expect(store.getSetting('estop')).toBe('on');
    store.close();
    expect(recovered?.action).toBe('restored');
    expect(readFileSync(recovered!.keptAs!)).toEqual(junk);
    expect(recovered!.keptAs).toMatch(/airlock\.db\.damaged-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    expect(mode(path)).toBe(0o600);
  });

  test('--fresh-database starts empty, keeps the damaged file and the old backup', async () => {
    const dir = await usedDir();
    const path = databasePath(dir);
    const backup = readFileSync(databaseBackupPath(dir));
    truncateSync(path, 0);
    const { store, recovered } = openBrokerDatabase(dir, 'fresh');
    expect(store.getSetting('estop')).toBeUndefined();
    store.close();
    expect(existsSync(recovered!.keptAs!)).toBe(true);
    expect(readFileSync(recovered!.previousBackupKeptAs!)).toEqual(backup);
    expect(existsSync(databaseBackupPath(dir))).toBe(false);
  });

  test('recovery flags are refused on a healthy database (a flag left in a service file must not reset it)', async () => {
    const dir = await usedDir();
    expect(() => openBrokerDatabase(dir, 'fresh')).toThrow(/is healthy/);
    expect(() => openBrokerDatabase(dir, 'restore-backup')).toThrow(/is healthy/);
    expect(estopOf(dir)).toBe('on');
  });

  test('--restore-backup without a backup, or with a damaged one, is refused and changes nothing', async () => {
    const dir = home();
    new Store(databasePath(dir)).close();
    loadOrCreateSecret(dir);
    truncateSync(databasePath(dir), 0);
    expect(() => openBrokerDatabase(dir, 'restore-backup')).toThrow(/there is no backup/);
    mkdirSync(join(dir, 'db-backups'));
    writeFileSync(databaseBackupPath(dir), randomBytes(8192));
    expect(() => openBrokerDatabase(dir, 'restore-backup')).toThrow(/cannot be restored/);
    expect(statSync(databasePath(dir)).size).toBe(0);
    expect(readdirSync(dir).filter((f) => f.includes('damaged'))).toEqual([]);
  });
});

describe('database backup', () => {
  test('atomic, 0600, self-contained, in db-backups/ (not the client-config backups/)', async () => {
    const dir = home();
    const store = new Store(databasePath(dir));
    store.setSetting('estop', 'on');
    const path = await backupDatabase(store, dir);
    store.close();
    expect(path).toBe(join(dir, 'db-backups', 'airlock.db.bak'));
    expect(mode(path)).toBe(0o600);
    expect(readdirSync(join(dir, 'db-backups'))).toEqual(['airlock.db.bak']);
    const copy = new Database(path, { readonly: true });
    expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(copy.prepare("SELECT value FROM settings WHERE key = 'estop'").get()).toEqual({ value: 'on' });
    copy.close();
    expect(secretPath(dir)).not.toContain('db-backups');
  });

  test('at start, the half-made copies a killed broker left are removed, and nothing else there', async () => {
    const dir = home();
    const store = new Store(databasePath(dir));
    const folder = join(dir, 'db-backups');
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    for (const name of ['airlock.db.bak.tmp-4242', 'airlock.db.bak.tmp-4242-wal', 'notes.txt', 'airlock.db.bak.old']) writeFileSync(join(folder, name), 'x');
    const backups = new DatabaseBackups(store, dir, 3_600_000, (err) => {
      throw err;
    });
    backups.start();
    await backups.stop();
    store.close();
    expect(readdirSync(folder).sort()).toEqual(['airlock.db.bak', 'airlock.db.bak.old', 'notes.txt']);
  });

  test('the backups folder swapped for a symlink while a backup runs: the copy ends in the folder checked, none where the link leads', async () => {
    const dir = home();
    const store = new Store(databasePath(dir));
    store.setSetting('estop', 'on');
    store.db.exec('CREATE TABLE filler (v TEXT)');
    const insert = store.db.prepare('INSERT INTO filler (v) VALUES (?)');
    store.db.transaction(() => {
      for (let i = 0; i < 5_000; i++) insert.run('x'.repeat(1000));
    })();
    const folder = join(dir, 'db-backups');
    const elsewhere = home();
    let settled = false;
    const backup = backupDatabase(store, dir).finally(() => (settled = true));
    // the swap, after the copy has begun and before it ends
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    renameSync(folder, join(dir, 'moved'));
    symlinkSync(elsewhere, folder);
    await backup;
    store.close();
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readdirSync(join(dir, 'moved'))).toEqual(['airlock.db.bak']);
    const copy = new Database(join(dir, 'moved', 'airlock.db.bak'), { readonly: true });
    expect(copy.prepare("SELECT value FROM settings WHERE key = 'estop'").get()).toEqual({ value: 'on' });
    copy.close();
  });

  test('a backup of a large database keeps the event loop turning', async () => {
    const dir = home();
    const store = new Store(databasePath(dir));
    const row = 'x'.repeat(1000);
    store.db.exec('CREATE TABLE filler (v TEXT)');
    const insert = store.db.prepare('INSERT INTO filler (v) VALUES (?)');
    store.db.transaction(() => {
      for (let i = 0; i < 30_000; i++) insert.run(row);
    })();
    // a turn's length in CPU time (a loaded machine may deschedule the process between turns, which wall time
    // would count against the backup), and how many turns the timer got while the copy ran
    const cpuMs = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    let worst = 0;
    let turns = 0;
    let last = cpuMs();
    const tick = setInterval(() => {
      const now = cpuMs();
      worst = Math.max(worst, now - last);
      last = now;
      turns++;
    }, 1);
    const started = cpuMs();
    await backupDatabase(store, dir);
    const took = cpuMs() - started;
    clearInterval(tick);
    store.close();
    // ~35 MB copied 100 pages per turn: many turns, and no single one anywhere near a whole copy
    expect(statSync(databaseBackupPath(dir)).size).toBeGreaterThan(30_000_000);
    expect(turns).toBeGreaterThan(10);
    expect(worst).toBeLessThan(Math.max(50, took / 4));
  });
});
