/**
 * Where undo keeps the bytes of files as they were before a call: `<data>/snapshots/<sha256>` (0600, in a 0700
 * folder), content-addressed so that the same bytes are kept once however many calls need them, with a
 * reference count per blob in SQLite. Undo records (records.ts) hold references; the store is capped per
 * file and in total, and the oldest records give theirs up first.
 *
 * A blob is written (a temporary name, then a rename) before the row that refers to it is committed; a blob
 * left without a row by a crash is swept at the next start.
 */
import { existsSync, linkSync, readdirSync, chmodSync, unlinkSync, writeFileSync, renameSync } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { holdOwnFolder, type OwnFolder } from '../../util/own-folder.js';
import { type Held, heldAlone, sha256, SYNC_BYTES } from './files.js';

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
  /**
   * The folder, checked to be a real one of this user's (util/own-folder.ts) and held for the process's life: every
   * blob and held link is reached through it (on Linux, by its descriptor), so a folder swapped for a symlink while
   * the broker runs is not followed either. Null until that check passes: at `open`, or at the next use after it.
   * A held folder is never closed, not even when let go (`checkAgain`): a write in flight may still name it by its
   * descriptor, and a descriptor closed then could be given to another folder before that write lands.
   */
  private folder: OwnFolder | null = null;
  /**
   * Names for held links and temporary files: a random part drawn once per broker, then a count. A random draw
   * per name cost a snapshot 30 to 60 µs on a machine where the call waited for it (a draw is slow when its code
   * has gone cold between calls); a name only has to be new in the folder, which the start's sweep empties of
   * everything no row refers to.
   */
  private readonly namePrefix = randomBytes(4).toString('hex');
  private named = 0;

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
      // one row the triggers of migration 16 keep (a sum over every blob was read after every snapshot)
      totals: db.prepare('SELECT blobs, bytes FROM undo_blob_totals WHERE id = 1'),
      all: db.prepare('SELECT sha256 FROM undo_blobs').pluck(),
      count: db.prepare('SELECT COUNT(*) AS blobs, COALESCE(SUM(bytes), 0) AS bytes FROM undo_blobs'),
      setTotals: db.prepare('INSERT INTO undo_blob_totals (id, blobs, bytes) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET blobs = excluded.blobs, bytes = excluded.bytes'),
    };
  }

  /**
   * Create the folder and sweep what a crash left: temporary files, and blobs no row refers to (`keep`: the
   * links of files held for calls still running).
   */
  open(keep: readonly string[] = []): void {
    // a real folder of this user's only (util/own-folder.ts), and swept through the folder held: the sweep removes
    // every name no row refers to, which in a folder a symlink led to would be everything there
    const folder = this.held();
    const known = new Set([...(this.stmts.all.all() as string[]), ...keep]);
    for (const name of readdirSync(folder.self)) {
      if (known.has(name)) continue;
      try {
        unlinkSync(folder.at(name));
      } catch {
        // a file we cannot remove is only wasted space
      }
    }
    // the totals the cap reads, counted once a start from the blobs themselves (a row edited while the broker was
    // down does not make it prune too much or too little)
    this.recount();
  }

  /**
   * A write in the folder failed. Were it removed while held (it takes no new file), the next use checks the path
   * again: nothing there, and the folder is made anew; a link, and it is refused. (One descriptor kept open a
   * removal; a failure with the folder still there, a full disk, keeps the folder held.)
   */
  private checkAgain(): void {
    if (this.folder?.gone()) this.folder = null;
  }

  /**
   * The folder, held; checked again when it failed before (a symlink where it goes): until it passes, what needs
   * it throws, so no call of a file tool runs (prepare.ts refuses it with this error) and no undo reads where a
   * link leads.
   */
  private held(): OwnFolder {
    return (this.folder ??= holdOwnFolder(this.dir, "undo's snapshots folder"));
  }

  private nextName(): string {
    this.named = (this.named + 1) >>> 0;
    return this.namePrefix + this.named.toString(16).padStart(8, '0');
  }

  /** A new name for a held file's link (see `heldPath`). */
  heldName(): string {
    return `.held-${this.nextName()}`;
  }

  /** Where a held file's link goes (a name no blob can have). */
  heldPath(name: string): string {
    if (!/^\.held-[0-9a-f]{16}$/.test(name)) throw new Error(`not a held file: ${name.slice(0, 80)}`);
    return this.held().at(name);
  }

  /** Let go of a held file. */
  release(name: string): void {
    try {
      unlinkSync(this.heldPath(name));
    } catch {
      // gone already
    }
  }

  /** A blob with these bytes is kept already: referred to, and on disk. */
  private kept(sha: string, path: string): boolean {
    return ((this.stmts.get.get(sha) as number | undefined) ?? 0) > 0 && existsSync(path);
  }

  private path(sha: string): string {
    if (!SHA.test(sha)) throw new Error(`not a snapshot id: ${sha.slice(0, 80)}`);
    return this.held().at(sha);
  }

  private tempPath(): string {
    return this.held().at(`.tmp-${this.nextName()}`);
  }

  /** Write the bytes unless a blob with them is already kept; the reference is taken by `ref`, in a transaction. */
  async write(sha: string, content: Buffer): Promise<void> {
    const path = this.path(sha);
    if (this.kept(sha, path)) return;
    const tmp = this.tempPath();
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
      this.checkAgain();
      throw err;
    }
  }

  /**
   * Keep a held old file as the blob `sha` by giving it the blob's name too, instead of writing a copy of its
   * bytes: only when the held link is its only name and it is still the file that was read (`heldAlone`), so
   * nothing else can write into the blob through another name. True when the blob is kept (by this, or already);
   * false when the bytes must be written (`write`). A blob is checked against its hash whenever it is read, as a
   * copy is. The held name is let go by the caller once the record naming the blob is committed: a broker killed
   * before that finds the file at its next start by the held name (the blob's name, referred to by no row, is
   * swept), and one killed after, by the blob's.
   */
  adopt(sha: string, linkPath: string, held: Held): boolean {
    const path = this.path(sha);
    if (this.kept(sha, path)) return true;
    if (!heldAlone(linkPath, held)) return false;
    try {
      chmodSync(linkPath, 0o600);
      linkSync(linkPath, path);
      return true;
    } catch {
      // not ours to change (another owner), or the folder refused: a copy instead
      return false;
    }
  }

  /**
   * Take a reference (call inside the transaction that stores the record). The blob was written by `write`; were
   * it removed since (its last reference let go in between), it is written again here, synchronously.
   */
  ref(sha: string, content: Buffer): void {
    const path = this.path(sha);
    if (!existsSync(path)) {
      const tmp = this.tempPath();
      try {
        writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
        renameSync(tmp, path);
      } catch (err) {
        this.checkAgain();
        throw err;
      }
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
        // already gone (or the folder is not one to remove from): nothing to free
      }
    }
  }

  /** The bytes of a blob, checked against their hash: a damaged or missing blob is an error, never restored. */
  async read(sha: string): Promise<Buffer> {
    let data: Buffer;
    const path = this.path(sha);
    try {
      data = await readFile(path);
    } catch (err) {
      throw new Error(`the snapshot ${sha.slice(0, 12)}… is missing from ${this.dir} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
    }
    if (sha256(data) !== sha) throw new Error(`the snapshot ${sha.slice(0, 12)}… in ${this.dir} is damaged (its bytes no longer match their hash)`);
    return data;
  }

  totals(): { blobs: number; bytes: number } {
    const row = this.stmts.totals.get() as { blobs: number; bytes: number } | undefined;
    // a database whose totals row was deleted by hand: counted again and put back (the cap reads it)
    if (!row) return this.recount();
    return { blobs: Number(row.blobs), bytes: Number(row.bytes) };
  }

  /** Count the blobs again and keep the result as the totals (for a totals row gone or wrong). */
  recount(): { blobs: number; bytes: number } {
    const row = this.stmts.count.get() as { blobs: number; bytes: number };
    this.stmts.setTotals.run(Number(row.blobs), Number(row.bytes));
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
