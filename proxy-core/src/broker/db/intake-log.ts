/**
 * The journal's intake: each wrapper batch the broker took in, as the bytes it came as, appended to a file of the
 * data dir (`journal-intake.<gen>`, 0600) until it is filed into the journal's tables (../journal-indexer.ts).
 * Every batch of a tick goes in one write: no SQLite page, WAL frame or checksum per 4 KB, which cost the broker
 * more than the rest of taking a batch in. The file is what a broker that dies before filing reads at its next
 * start; what was filed is known by the seq the filing transaction records in the database (`intake_mark`,
 * migration 15) with the rows it wrote, so a batch is filed once, whenever the broker died.
 *
 * A line per batch: its header as JSON (seq, session, client, server, when it arrived, how many entries the
 * sender counted), a tab, its entries' JSON text (a wrapper's line holds no newline, nor does JSON.stringify's),
 * a newline. A last line without its newline was never acknowledged (the write did not return): it is cut off.
 * What waits is held in memory by where it is in its file, and read back (from the page cache) when filed.
 *
 * Only the broker opens the intake (`open`): a Store opened beside it (a test, a tool) leaves the files alone.
 */
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readdirSync, readSync, unlinkSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_FRAME } from '../../ipc/channel.js';

/** A batch as received: the session it came on, and its entries' JSON text (an array), unchecked. */
export interface IntakeBatch {
  session: string;
  client: string;
  server: string;
  /** When the broker received it (its entries' events carry this time). */
  at: number;
  /** The entries as a JSON array's text (in one buffer, or the pieces of the chunks it came in). */
  entries: Buffer | readonly Buffer[];
  /** How many entries the sender says it holds (what the backlog is counted in; the array itself decides). */
  n: number;
}

export interface IntakeRow extends IntakeBatch {
  seq: number;
  /** Read back from the file: one buffer. */
  entries: Buffer;
}

/** Where a waiting batch is: its header, its file, and its entries' bytes in it. */
interface Held {
  seq: number;
  session: string;
  client: string;
  server: string;
  at: number;
  n: number;
  gen: number;
  offset: number;
  length: number;
}

const PREFIX = 'journal-intake.';
/** A file past this size is not written to any more: once all of it is filed it is removed. */
const ROTATE_BYTES = 64 * 1024 * 1024;
const TAB = 0x09;
const NL = 0x0a;
/** What a file left by a broker before is read in, a chunk at a time. */
const SCAN_CHUNK = 1024 * 1024;
/** A header longer than this is not one this log writes (its names are short). */
const MAX_HEADER = 64 * 1024;

export class IntakeLog {
  private held: Held[] = [];
  /** Files on disk, oldest first: their generation, descriptor, size, and the last seq written to them. */
  private files: { gen: number; fd: number; size: number; last: number }[] = [];
  private nextSeq = 1;
  private pending = 0;
  private pendingBytes = 0;
  private opened = false;
  /** Batches of lines that could not be read at the start (for the broker to say so). */
  unreadable = 0;

  constructor(
    private readonly dir: string,
    /** The last seq filed into the journal (the database's mark). */
    private readonly filed: () => number,
  ) {}

  /**
   * Take over the intake files (the broker, once, at its start): what they hold past the mark waits to be filed;
   * a line cut short by a death mid-write is cut off. Without this, nothing is read or written.
   */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    const mark = this.filed();
    this.nextSeq = mark + 1;
    const gens = readdirSync(this.dir)
      .filter((f) => f.startsWith(PREFIX) && /^\d+$/.test(f.slice(PREFIX.length)))
      .map((f) => Number(f.slice(PREFIX.length)))
      .sort((a, b) => a - b);
    for (const gen of gens) this.readFile(gen, mark);
    if (this.held.length === 0) this.dropFiles(Infinity);
  }

  /** Append batches: one write for all of them. Throws when the disk refuses (nothing of them is then held). */
  append(batches: readonly IntakeBatch[]): void {
    if (!this.opened) this.open();
    let file = this.files.at(-1);
    if (!file || file.size >= ROTATE_BYTES) file = this.newFile();
    const parts: Buffer[] = [];
    const rows: Held[] = [];
    let at = file.size;
    for (const b of batches) {
      const seq = this.nextSeq + rows.length;
      const head = Buffer.from(`${JSON.stringify({ seq, session: b.session, client: b.client, server: b.server, at: b.at, n: b.n })}\t`);
      parts.push(head);
      let length = 0;
      for (const piece of Buffer.isBuffer(b.entries) ? [b.entries] : b.entries) {
        parts.push(piece);
        length += piece.length;
      }
      parts.push(NEWLINE);
      rows.push({ seq, session: b.session, client: b.client, server: b.server, at: b.at, n: b.n, gen: file.gen, offset: at + head.length, length });
      at += head.length + length + 1;
    }
    try {
      let written = 0;
      const total = at - file.size;
      while (written < total) written += writevSync(file.fd, written === 0 ? parts : [Buffer.concat(parts).subarray(written)]);
    } catch (err) {
      // a part written before the disk refused is cut back: the file holds whole lines only
      try {
        ftruncateSync(file.fd, file.size);
      } catch {
        // reading it back cuts off a line without its newline anyway
      }
      throw err;
    }
    file.size = at;
    this.nextSeq += rows.length;
    file.last = this.nextSeq - 1;
    for (const r of rows) {
      this.held.push(r);
      this.pending += r.n;
      this.pendingBytes += r.length;
    }
  }

  /** The size of the first batch after `seq` (its sender's count, its bytes), without reading it. */
  peek(seq: number): { n: number; bytes: number } | undefined {
    const h = this.held[this.indexAfter(seq)];
    return h && { n: h.n, bytes: h.length };
  }

  /** The oldest batch after `seq`, its entries read back, or undefined. */
  next(seq: number): IntakeRow | undefined {
    const h = this.held[this.indexAfter(seq)];
    if (!h) return undefined;
    const file = this.files.find((f) => f.gen === h.gen)!;
    const { gen: _gen, offset: _offset, length: _length, ...row } = h;
    return { ...row, entries: readAt(file.fd, h.offset, h.length) };
  }

  /** The newest batch's seq (0: none waits). */
  newestSeq(): number {
    return this.held.at(-1)?.seq ?? 0;
  }

  /** When the oldest batch waiting came (undefined: none waits). */
  oldestAt(): number | undefined {
    return this.held[0]?.at;
  }

  /** The oldest batch's seq (0: none waits). */
  oldestSeq(): number {
    return this.held[0]?.seq ?? 0;
  }

  /** The batches up to `seq` are filed (their transaction committed, the mark with them): let them and their files go. */
  moved(seq: number): void {
    const k = this.indexAfter(seq);
    for (let i = 0; i < k; i++) {
      this.pending -= this.held[i]!.n;
      this.pendingBytes -= this.held[i]!.length;
    }
    if (k > 0) this.held = this.held.slice(k);
    this.pending = Math.max(0, this.pending);
    this.pendingBytes = Math.max(0, this.pendingBytes);
    this.dropFiles(this.held.length === 0 ? Infinity : seq);
  }

  /** Entries waiting to be filed, as their senders counted them. */
  get size(): number {
    return this.pending;
  }

  /** The bytes of the entries waiting to be filed. */
  get bytes(): number {
    return this.pendingBytes;
  }

  close(): void {
    for (const f of this.files) closeSync(f.fd);
    this.files = [];
  }

  /**
   * Where the first batch past `seq` is held (held.length: none is). Batches are held in seq order, each past
   * the one before (append numbers them so; a file read at the start keeps only seqs past the last kept), so a
   * backlog of many small batches is found in a few steps, not scanned from its start at every batch filed.
   */
  private indexAfter(seq: number): number {
    let lo = 0;
    let hi = this.held.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.held[mid]!.seq > seq) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Remove the files all of whose batches are filed (`upTo` Infinity: every file, none waits). */
  private dropFiles(upTo: number): void {
    const keep: typeof this.files = [];
    for (const f of this.files) {
      const writing = f === this.files.at(-1) && f.size < ROTATE_BYTES && upTo !== Infinity;
      if (f.last <= upTo && !writing) {
        closeSync(f.fd);
        unlinkQuietly(this.path(f.gen));
      } else keep.push(f);
    }
    this.files = keep;
  }

  /**
   * A new file, named past the newest: O_EXCL and O_NOFOLLOW, so a name someone placed there first (a link
   * elsewhere, a file of theirs) is never written through; it is passed over for the next one.
   */
  private newFile(): { gen: number; fd: number; size: number; last: number } {
    const first = (this.files.at(-1)?.gen ?? Date.now()) + 1;
    for (let tries = 0; ; tries++) {
      const gen = first + tries;
      let fd: number;
      try {
        fd = openSync(this.path(gen), constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0), 0o600);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST' && tries < 100) continue;
        throw err;
      }
      const file = { gen, fd, size: 0, last: this.nextSeq - 1 };
      this.files.push(file);
      return file;
    }
  }

  /**
   * Read one file left by a broker before: its batches past the mark wait; a torn last line is cut off. The file
   * is scanned a chunk at a time (only the headers are kept), so a file someone else put under this name, however
   * large, costs a scan and no memory. What is not a regular file is passed over; a line longer than any batch
   * the broker takes (MAX_FRAME) was not written here: it and what follows it are cut off, and said.
   */
  private readFile(gen: number, mark: number): void {
    let fd: number;
    try {
      fd = openSync(this.path(gen), constants.O_RDWR | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
    } catch {
      this.unreadable++;
      return;
    }
    const st = fstatSync(fd);
    if (!st.isFile()) {
      closeSync(fd);
      this.unreadable++;
      return;
    }
    const chunk = Buffer.allocUnsafe(SCAN_CHUNK);
    let last = mark;
    /** Where the line being read starts, and its first tab (-1: none yet), in the file. */
    let start = 0;
    let tab = -1;
    for (let off = 0; ; ) {
      const got = readSync(fd, chunk, 0, SCAN_CHUNK, off);
      if (got === 0) break;
      for (let i = 0; i < got; ) {
        const nl = chunk.indexOf(NL, i);
        const end = nl === -1 || nl >= got ? got : nl;
        if (tab === -1) {
          const t = chunk.indexOf(TAB, i);
          if (t !== -1 && t < end) tab = off + t;
        }
        if (end === got) break;
        const lineEnd = off + end;
        // the header from the chunk at hand; one begun in a chunk before is read back from the file
        const text =
          tab === -1 || tab - start > MAX_HEADER ? undefined : start >= off ? chunk.toString('utf8', start - off, tab - off) : readAt(fd, start, tab - start).toString('utf8');
        const h = text === undefined ? undefined : header(text);
        if (!h) this.unreadable++;
        else if (h.seq > mark && h.seq >= this.nextSeq) {
          this.held.push({ ...h, gen, offset: tab + 1, length: lineEnd - tab - 1 });
          this.pending += h.n;
          this.pendingBytes += lineEnd - tab - 1;
          this.nextSeq = h.seq + 1;
          last = h.seq;
        }
        start = lineEnd + 1;
        tab = -1;
        i = end + 1;
      }
      off += got;
      if (off - start > MAX_FRAME + MAX_HEADER) {
        this.unreadable++;
        break;
      }
    }
    // what follows the last whole line (a line torn by a death mid-write, or one too long to be a batch) goes
    if (start < st.size) ftruncateSync(fd, start);
    this.files.push({ gen, fd, size: start, last });
  }

  private path(gen: number): string {
    return join(this.dir, `${PREFIX}${gen}`);
  }
}

const NEWLINE = Buffer.from('\n');

/** A line's header, checked; undefined when it is not one this log writes. */
function header(text: string): Omit<Held, 'gen' | 'offset' | 'length'> | undefined {
  let h: unknown;
  try {
    h = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof h !== 'object' || h === null) return undefined;
  const { seq, session, client, server, at, n } = h as Record<string, unknown>;
  if (!Number.isSafeInteger(seq) || (seq as number) < 1 || typeof session !== 'string' || typeof client !== 'string' || typeof server !== 'string') return undefined;
  if (typeof at !== 'number' || !Number.isFinite(at) || !Number.isSafeInteger(n) || (n as number) < 0) return undefined;
  return { seq: seq as number, session, client, server, at, n: n as number };
}

/** `length` bytes of the file from `from` (fewer if it ends sooner). */
function readAt(fd: number, from: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, from + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}
