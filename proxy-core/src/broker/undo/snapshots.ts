/**
 * Where undo keeps the bytes of files as they were before a call: `<data>/snapshots/<sha256>` (0600, in a 0700
 * folder), content-addressed so that the same bytes are kept once however many calls need them, with a
 * reference count per blob in SQLite. Undo records (records.ts) hold references; the store is capped per
 * file and in total, and the oldest records give theirs up first.
 *
 * A blob is written (a temporary name, then a rename) before the row that refers to it is committed; a blob
 * left without a row by a crash is swept at the next start.
 */
import { existsSync, mkdirSync, readdirSync, chmodSync, unlinkSync, writeFileSync, renameSync } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { sha256, SYNC_BYTES } from './files.js';

export const MB = 1024 * 1024;
const SHA = /^[0-9a-f]{64}$/;

export interface SnapshotCaps {
  /** The largest file whose bytes are kept. */
  fileBytes: number;
  /** The most all kept bytes may take. */
  totalBytes: number;
}

export interface SnapshotTotals {
  /** Distinct blobs kept, and their bytes. */
  blobs: number;
  bytes: number;
  fileCapBytes: number;
  totalCapBytes: number;
}

export class SnapshotBlobs {
  readonly dir: string;
  private readonly stmts;

  constructor(
    dataDir: string,
    db: Database.Database,
  ) {
    this.dir = join(dataDir, 'snapshots');
    this.stmts = {
      get: db.prepare('SELECT refs FROM undo_blobs WHERE sha256 = ?').pluck(),
      add: db.prepare('INSERT INTO undo_blobs (sha256, bytes, refs) VALUES (?, ?, 1) ON CONFLICT(sha256) DO UPDATE SET refs = refs + 1'),
      drop: db.prepare('UPDATE undo_blobs SET refs = refs - 1 WHERE sha256 = ? RETURNING refs').pluck(),
      remove: db.prepare('DELETE FROM undo_blobs WHERE sha256 = ? AND refs <= 0'),
      totals: db.prepare('SELECT COUNT(*) AS blobs, COALESCE(SUM(bytes), 0) AS bytes FROM undo_blobs'),
      all: db.prepare('SELECT sha256 FROM undo_blobs').pluck(),
    };
  }

  /**
   * Create the folder and sweep what a crash left: temporary files, and blobs no row refers to (`keep`: the
   * links of files held for calls still running).
   */
  open(keep: readonly string[] = []): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (process.platform !== 'win32') chmodSync(this.dir, 0o700);
    const known = new Set([...(this.stmts.all.all() as string[]), ...keep]);
    for (const name of readdirSync(this.dir)) {
      if (known.has(name)) continue;
      try {
        unlinkSync(join(this.dir, name));
      } catch {
        // a file we cannot remove is only wasted space
      }
    }
  }

  /** Where a held file's link goes (a name no blob can have). */
  heldPath(name: string): string {
    if (!/^\.held-[0-9a-f]{16}$/.test(name)) throw new Error(`not a held file: ${name.slice(0, 80)}`);
    return join(this.dir, name);
  }

  /** Let go of a held file. */
  release(name: string): void {
    try {
      unlinkSync(this.heldPath(name));
    } catch {
      // gone already
    }
  }

  private path(sha: string): string {
    if (!SHA.test(sha)) throw new Error(`not a snapshot id: ${sha.slice(0, 80)}`);
    return join(this.dir, sha);
  }

  /** Write the bytes unless a blob with them is already kept; the reference is taken by `ref`, in a transaction. */
  async write(sha: string, content: Buffer): Promise<void> {
    const path = this.path(sha);
    if (((this.stmts.get.get(sha) as number | undefined) ?? 0) > 0 && existsSync(path)) return;
    const tmp = join(this.dir, `.tmp-${randomBytes(8).toString('hex')}`);
    try {
      // a small one synchronously: the call waits on it, and thread-pool round trips cost more than the write
      if (content.length <= SYNC_BYTES) {
        writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
        renameSync(tmp, path);
      } else {
        await writeFile(tmp, content, { mode: 0o600, flag: 'wx' });
        await rename(tmp, path);
      }
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
  }

  /**
   * Take a reference (call inside the transaction that stores the record). The blob was written by `write`; were
   * it removed since (its last reference let go in between), it is written again here, synchronously.
   */
  ref(sha: string, content: Buffer): void {
    const path = this.path(sha);
    if (!existsSync(path)) {
      const tmp = join(this.dir, `.tmp-${randomBytes(8).toString('hex')}`);
      writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
      renameSync(tmp, path);
    }
    this.stmts.add.run(sha, content.length);
  }

  /** Let go of references (inside a transaction); a blob nobody refers to any more is deleted at once. */
  unref(shas: readonly string[]): void {
    for (const sha of shas) {
      const left = this.stmts.drop.get(sha) as number | undefined;
      if (left === undefined || left > 0) continue;
      this.stmts.remove.run(sha);
      try {
        unlinkSync(this.path(sha));
      } catch {
        // already gone: nothing to free
      }
    }
  }

  /** The bytes of a blob, checked against their hash: a damaged or missing blob is an error, never restored. */
  async read(sha: string): Promise<Buffer> {
    let data: Buffer;
    try {
      data = await readFile(this.path(sha));
    } catch (err) {
      throw new Error(`the snapshot ${sha.slice(0, 12)}… is missing from ${this.dir} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
    }
    if (sha256(data) !== sha) throw new Error(`the snapshot ${sha.slice(0, 12)}… in ${this.dir} is damaged (its bytes no longer match their hash)`);
    return data;
  }

  totals(): { blobs: number; bytes: number } {
    const row = this.stmts.totals.get() as { blobs: number; bytes: number };
    return { blobs: Number(row.blobs), bytes: Number(row.bytes) };
  }
}

/** The caps in force, from the settings when they hold a sensible number (MB), the defaults otherwise. */
export function snapshotCaps(getSetting: (key: string) => string | undefined, defaults: { fileMb: number; totalMb: number }): SnapshotCaps {
  const mb = (key: string, fallback: number) => {
    const text = getSetting(key);
    const n = text !== undefined && /^[0-9]{1,7}$/.test(text) ? Number(text) : NaN;
    return (Number.isFinite(n) && n >= 1 ? n : fallback) * MB;
  };
  const totalBytes = mb('snapshot-total-mb', defaults.totalMb);
  // one file can never take more than the whole store
  return { fileBytes: Math.min(mb('snapshot-file-mb', defaults.fileMb), totalBytes), totalBytes };
}
