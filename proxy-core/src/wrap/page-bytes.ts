/**
 * A tools/list answer by its bytes: what follows its id, when the server wrote the answer the usual way,
 * `{"jsonrpc":"2.0","id":<id>,"result":…`. Two answers whose bytes after that prefix are the same carry the
 * very same result (JSON read from the same bytes in the same place is the same value), so a page listed again
 * unchanged can be known as such by comparing bytes (memcmp), without serialising a single entry.
 *
 * The prefix is matched exactly, byte for byte, against the id as the relay parsed it: an answer written any
 * other way (other members first, spaces, an id spelt differently, a duplicate member) has no body here, and is
 * read entry by entry as always.
 */
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

  /** The same bytes after the prefix as `other`'s kept ones. */
  same(kept: Buffer | undefined): boolean {
    return kept !== undefined && this.body.equals(kept);
  }

  /** The body, copied once to be kept (the relay's buffer is not ours to hold). */
  keep(): Buffer {
    return (this.kept ??= Buffer.from(this.body));
  }
}
