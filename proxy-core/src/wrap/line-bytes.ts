/**
 * A tools/list answer written straight into its bytes, entry by entry: its envelope as JSON.stringify writes the
 * message, and each entry's text written where it goes and dropped. A page of 10,000 entries is then never held
 * as one 7 MB string (built up in pieces that all live until the end, so every scavenge on the way copies
 * them) and then encoded again to be written; the client gets the same bytes.
 */

/** What an entry's annotations add to its text, about (a line's first guess at its size; it grows past it). */
export const ANNOTATION_ESTIMATE = 320;

/** A line's bytes, written piece by piece into one buffer that grows as it must. */
export class LineBytes {
  private buf: Buffer;
  private at = 0;

  constructor(estimate: number) {
    this.buf = Buffer.allocUnsafe(Math.max(estimate, 256));
  }

  get length(): number {
    return this.at;
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  text(s: string): void {
    // at most 3 bytes per UTF-16 unit
    this.room(s.length * 3);
    this.at += this.buf.write(s, this.at, 'utf8');
  }

  bytes(from: Buffer, start: number, end: number): void {
    this.room(end - start);
    this.at += from.copy(this.buf, this.at, start, end);
  }

  /**
   * The bytes written; in a buffer of their own size only when most of the guess went unused. What is left over
   * was never written, so it holds no memory of its own (a big buffer's untouched pages are never mapped in),
   * while a copy touches as many fresh pages as the line has: for a 10,000-tool page (7 MB, a guess of 8.2),
   * 1,725 page faults in the client's wait, each some microseconds and, in a virtual machine, up to twelve.
   */
  done(): Buffer {
    const used = this.buf.subarray(0, this.at);
    return this.at < this.buf.length / 2 ? Buffer.from(used) : used;
  }
}

/**
 * The JSON of `message` before and after its `result.tools` array, members in their order, as JSON.stringify
 * writes `{ ...message, result: { ...result, tools } }` around the array's own text.
 */
export function aroundTools(message: Record<string, unknown>, result: Record<string, unknown>): [head: string, tail: string] {
  const members = (o: Record<string, unknown>, key: string, text: string): string => {
    const out: string[] = [];
    for (const k of Object.keys(o)) {
      if (k === key) out.push(`${JSON.stringify(k)}:${text}`);
      else if (o[k] !== undefined) out.push(`${JSON.stringify(k)}:${JSON.stringify(o[k])}`);
    }
    return `{${out.join(',')}}`;
  };
  // the array goes where the NUL is (JSON.stringify escapes every NUL of the message's own)
  return members(message, 'result', members(result, 'tools', '\u0000')).split('\u0000') as [string, string];
}
