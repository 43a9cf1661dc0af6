/**
 * The journal spill: the records a wrapper could not hand to the broker, kept on disk in the data dir so that a
 * call which reached its server is never forgotten, whatever happens to the broker or to the wrapper.
 *
 * One append-only JSON-lines file per wrapper and generation, `<data dir>/spill/<pid>-<tag>-<gen>.jsonl`
 * (0600, in a 0700 folder). A batch is one write and one fsync; a write the disk refuses half way is cut back,
 * so the file only ever holds whole lines. Once the wrapper starts replaying a file it never writes to it
 * again (later records go to the next generation), so a file is removed only when everything in it has been
 * acknowledged. The broker reads the files of wrappers that died (their pid is gone) the same way.
 *
 * No SQLite, no schema library: the wrapper stays light, and the broker checks every entry it reads.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_NESTING, nestedDeeperThan } from '../jsonrpc/inbound.js';
import { inOwnFolder } from '../util/own-folder.js';

/** A spill file larger than this is not read whole (no wrapper writes one: it holds a downtime's records). */
export const MAX_SPILL_FILE_BYTES = 256 * 2 ** 20;

const NAME = /^(\d{1,10})-([A-Za-z0-9_-]{1,32})-(\d{1,9})\.jsonl$/;

export function spillDir(dataDir: string): string {
  return join(dataDir, 'spill');
}

/** How the spill folder is named to a person when it is not a real folder of theirs (util/own-folder.ts). */
export const SPILL_FOLDER = 'the journal spill folder';

/** The pid, tag and generation a spill file's name holds; null for a name no wrapper writes. */
export function parseSpillName(name: string): { pid: number; tag: string; gen: number } | null {
  const m = NAME.exec(name);
  return m ? { pid: Number(m[1]), tag: m[2]!, gen: Number(m[3]) } : null;
}

export interface SpillRead {
  /** Each whole line that is a JSON object, in order (unchecked: the reader checks them). */
  entries: Record<string, unknown>[];
  /** Lines that are not (damaged, or not written by Airlock). */
  unreadable: number;
}

/**
 * Read a spill file without following a link or blocking on a FIFO; throws when it is not a regular file of
 * at most MAX_SPILL_FILE_BYTES (the caller says so and sets it aside).
 */
export function readSpillFile(path: string): SpillRead {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  let buf: Buffer;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error('it is not a regular file');
    if (st.size > MAX_SPILL_FILE_BYTES) throw new Error(`it is larger than ${MAX_SPILL_FILE_BYTES} bytes`);
    buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < st.size) {
      const n = readSync(fd, buf, got, st.size - got, got);
      if (n === 0) break;
      got += n;
    }
    buf = buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
  const entries: Record<string, unknown>[] = [];
  let unreadable = 0;
  for (const line of buf.toString('utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const v: unknown = JSON.parse(line);
      // an entry nested past what the journal reads (a file edited by someone) could never be sent on: it would
      // stop the replay of every entry after it, each time it was tried
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && !nestedDeeperThan(v, MAX_NESTING)) entries.push(v as Record<string, unknown>);
      else unreadable++;
    } catch {
      unreadable++;
    }
  }
  return { entries, unreadable };
}

/** A wrapper's spill: append batches, hand over whole files for replay, remove them once acknowledged. */
export class SpillFile {
  private fd: number | null = null;
  private path: string | null = null;
  private size = 0;
  private gen = 0;
  /** Files this wrapper wrote and no longer writes to, waiting to be replayed. */
  private readonly closed: string[] = [];
  readonly tag = randomBytes(6).toString('base64url');

  constructor(
    private readonly dataDir: string,
    private readonly pid = process.pid,
  ) {}

  /**
   * Append these lines (whole JSON records, each ending in a newline) and fsync. Throws when the disk refuses;
   * the file keeps whole lines only.
   */
  append(text: Buffer): void {
    if (text.length === 0) return;
    const fd = this.open();
    let written = 0;
    try {
      while (written < text.length) written += writeSync(fd, text, written, text.length - written, this.size + written);
      fsyncSync(fd);
    } catch (err) {
      // a partial batch would glue its half line to the next one: cut it back (shrinking needs no space)
      try {
        ftruncateSync(fd, this.size);
      } catch {
        // nothing more to do: the reader skips a line it cannot parse
      }
      throw err;
    }
    this.size += text.length;
  }

  /** Stop writing to the current file; returns every file waiting for replay, oldest first. */
  rotate(): string[] {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
      if (this.size > 0) this.closed.push(this.path!);
      else this.unlinkQuietly(this.path!);
      this.path = null;
    }
    return [...this.closed];
  }

  /** Everything in `path` was acknowledged by the broker: remove it. */
  done(path: string): void {
    const i = this.closed.indexOf(path);
    if (i >= 0) this.closed.splice(i, 1);
    this.unlinkQuietly(path);
  }

  /** Files written (closed or open) and not yet acknowledged. */
  get pending(): number {
    return this.closed.length + (this.fd !== null && this.size > 0 ? 1 : 0);
  }

  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
    if (this.size === 0 && this.path) this.unlinkQuietly(this.path);
  }

  private open(): number {
    if (this.fd !== null) return this.fd;
    const dir = spillDir(this.dataDir);
    const name = `${this.pid}-${this.tag}-${++this.gen}.jsonl`;
    // made in the folder checked (a symlink put in its place meanwhile is not followed), with O_EXCL and
    // O_NOFOLLOW: a name someone placed there first (a link elsewhere) is never written through
    this.fd = inOwnFolder(dir, SPILL_FOLDER, (folder) => openSync(folder.at(name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600));
    this.path = join(dir, name);
    this.size = 0;
    return this.fd;
  }

  private unlinkQuietly(path: string): void {
    try {
      unlinkSync(path);
    } catch {
      // already gone (the broker took a file it thought orphaned, or someone removed it): nothing to keep
    }
  }
}
