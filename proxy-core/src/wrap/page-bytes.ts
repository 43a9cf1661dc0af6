/**
 * A tools/list answer by its bytes: what follows its id, when the server wrote the answer the usual way,
 * `{"jsonrpc":"2.0","id":<id>,"result":…`. Two answers whose bytes after that prefix are the same carry the
 * very same result (JSON read from the same bytes in the same place is the same value), so a page listed again
 * unchanged can be known as such by comparing bytes (memcmp), without serialising a single entry.
 *
 * The prefix is matched exactly, byte for byte, against the id as the relay parsed it: an answer written any
 * other way (other members first, spaces, an id spelt differently, a duplicate member) has no body here, and is
 * read entry by entry as always.
 *
 * A line can also be read up to its result without parsing the rest (`read`): a repeat listing whose bytes after
 * the id are those of the last page answered is answered as that page was, without a 5 MB JSON.parse. That holds
 * because the body kept is never one with a second "id" member: it comes from the bytes the relay hands on
 * (server-lines.ts), which are either the server's own with one spelling of "id" in the whole line, or
 * re-serialised by JSON.stringify (no duplicate keys). So the same body after another id reads as that id, with
 * the very same result, nesting and all; and the body runs to the end of the line, trailing bytes included.
 */
import { BACKSLASH, QUOTE } from '../jsonrpc/json-bytes.js';

const HEAD = Buffer.from('{"jsonrpc":"2.0","id":');
const RESULT = Buffer.from(',"result":');
/** The bytes an integer id is written with. */
const NUMBER_BYTES = new Set(Buffer.from('-0123456789'));
/** Longer ids are read the ordinary way. */
const MAX_ID_BYTES = 256;

export class PageBytes {
  private kept: Buffer | undefined;

  private constructor(
    /** The answer's prefix up to and including `"result":`. */
    readonly prefix: string,
    /** The bytes after it, as the relay holds them. */
    private readonly body: Buffer,
  ) {}

  /** The page of the answer `raw` (one line, parsed with id `id`), or undefined when it is not written the usual way. */
  static of(id: unknown, raw: Buffer): PageBytes | undefined {
    const idText = JSON.stringify(id);
    if (idText === undefined) return undefined;
    const prefix = `{"jsonrpc":"2.0","id":${idText},"result":`;
    const head = Buffer.from(prefix, 'utf8');
    if (raw.length <= head.length || !raw.subarray(0, head.length).equals(head)) return undefined;
    return new PageBytes(prefix, raw.subarray(head.length));
  }

  /**
   * An answer line as the usual way writes it, read up to `"result":` only: its id and its page, or undefined
   * for any other line. The id must be a JSON string or integer that JSON.stringify writes back byte for byte
   * (the prefix is then matched exactly, as in `of`); anything else (escapes, spaces, -0, 1e3, a BOM) is not read.
   */
  static read(line: Buffer): { id: string | number; page: PageBytes } | undefined {
    if (line.length <= HEAD.length + RESULT.length || line.compare(HEAD, 0, HEAD.length, 0, HEAD.length) !== 0) return undefined;
    const start = HEAD.length;
    let end = start;
    if (line[start] === QUOTE) {
      // a string without escapes: up to the next quote
      end = line.indexOf(QUOTE, start + 1);
      if (end === -1 || end - start > MAX_ID_BYTES || line.subarray(start, end).includes(BACKSLASH)) return undefined;
      end++;
    } else {
      while (end < line.length && end - start <= MAX_ID_BYTES && NUMBER_BYTES.has(line[end]!)) end++;
    }
    // (compare throws past the end of what it reads: a server's line may end anywhere)
    if (end === start || end + RESULT.length > line.length || line.compare(RESULT, 0, RESULT.length, end, end + RESULT.length) !== 0) return undefined;
    const text = line.toString('utf8', start, end);
    let id: unknown;
    try {
      id = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (!((typeof id === 'string' || Number.isSafeInteger(id)) && JSON.stringify(id) === text)) return undefined;
    const page = PageBytes.of(id, line);
    return page ? { id: id as string | number, page } : undefined;
  }

  /**
   * The same bytes after the prefix as `kept`. When they are, `kept` is what this page keeps from now on (the
   * same bytes held once, not copied again).
   */
  same(kept: Buffer | undefined): boolean {
    if (kept === undefined || !this.body.equals(kept)) return false;
    this.kept ??= kept;
    return true;
  }

  /**
   * The body, to be kept. A body that is most of its buffer is kept as it is: a big page's line was joined from
   * its chunks into a buffer of its own, and nothing writes into a line once it is read, so a copy (4.9 MB for
   * 10,000 tools, all of it memory touched for the first time) would only double it. A shorter one is copied, so
   * that it does not hold on to the whole chunk it was read in.
   */
  keep(): Buffer {
    const body = this.body;
    return (this.kept ??= body.length * 2 >= body.buffer.byteLength ? body : Buffer.from(body));
  }
}

/** A page of the wrapper's own listing: its bytes, and the answer they were parsed into. */
export interface OwnPage {
  bytes: PageBytes;
  message: Record<string, unknown>;
}

export const OwnPage = {
  /** The page of the answer `message`, read from `raw` (none when not written the usual way). */
  of(message: { id?: unknown }, raw: Buffer | undefined): OwnPage | undefined {
    const bytes = raw ? PageBytes.of(message.id, raw) : undefined;
    return bytes ? { bytes, message: message as Record<string, unknown> } : undefined;
  },
};

/**
 * The last page that differed in nothing from the wrapper's listing: its bytes, the count of the listing's
 * changes it was compared at (another count: something changed since, and the page is compared afresh), and
 * for a page of the wrapper's own, its entries' JSON texts and the answer it came in.
 */
export class AgreedPage {
  private agreed: { body: Buffer; changes: number; texts: string[] | null; message: Record<string, unknown> | undefined } | null = null;

  set(page: PageBytes, changes: number, texts: string[] | null, message?: Record<string, unknown>): void {
    this.agreed = { body: page.keep(), changes, texts, message };
  }

  clear(): void {
    this.agreed = null;
  }

  /** `page` has the bytes agreed, and the listing is still at `changes`. */
  agrees(page: PageBytes, changes: number): boolean {
    return this.agreed !== null && this.agreed.changes === changes && page.same(this.agreed.body);
  }

  /** The entries' texts of a page that agrees, when known. */
  texts(page: PageBytes, changes: number): string[] | undefined {
    return this.agreed?.texts && this.agrees(page, changes) ? this.agreed.texts : undefined;
  }

  /**
   * The answer with id `id` that `page` is, when it agrees and the page agreed with is the wrapper's own: the
   * same bytes after another id read as the same message with that id (see above), parsed once already.
   */
  answer(page: PageBytes, changes: number, id: string | number): Record<string, unknown> | undefined {
    const message = this.agreed?.message;
    return message && this.agrees(page, changes) ? { ...message, id } : undefined;
  }
}
