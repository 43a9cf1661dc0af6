/**
 * A segment of the wrapper's journal queue (journal-queue.ts): entries written as JSON text into one buffer,
 * comma-separated, as a batch carries them to the broker, with where each ends, its flags, and where the
 * arguments of those the broker has already are (a batch leaves them out; the spill keeps them). A spill file
 * replayed to the broker goes in segments too (journal-sender.ts), so a batch is bounded the same way.
 */

/** Entries in one segment: one batch to the broker. */
export const MAX_SEGMENT = 1000;
/**
 * Bytes past which a segment takes no more entries (the one that crosses it is the last): the broker files a batch
 * in one transaction, never split, and a batch of calls with big arguments and results (64 KB of each kept) would
 * otherwise hold it for most of a second.
 */
export const MAX_SEGMENT_BYTES = 1024 * 1024;

const ARGUMENTS_KEY = Buffer.from(',"arguments":');
const AFTER_ARGUMENTS_KEY = Buffer.from(',"argsTruncated":');

/**
 * Entries written as JSON text, comma-separated, as a batch carries them.
 *
 * Where each entry ends and its flags are kept in typed arrays of MAX_SEGMENT slots, outside the JS heap, and a
 * segment acknowledged is used again (`reuse`) with its buffer. A segment lives until the broker acknowledges it,
 * longer than two scavenges, so growing JS arrays here had every copy of their backing stores promoted to the
 * old generation: 10 to 15 of the 86 bytes a pipelined call left there (measured with V8's heap statistics), in
 * a heap that grows by megabytes between two full collections.
 */
export class Segment {
  buf: Buffer;
  len = 0;
  private n = 0;
  /** Where each entry ends in `buf` (it starts after the comma following the one before). */
  private readonly ends: Uint32Array;
  /** Each entry's flags (the queue's). */
  readonly flags: Uint8Array;
  /** Calls with a copy here whose outcome may still change: the broker has their arguments once this is acknowledged. */
  readonly openIds: string[] = [];
  /** Calls whose final copy is here while a copy of theirs is known or out: forgotten once this is acknowledged. */
  readonly finalIds: string[] = [];
  /** Entries the broker has the arguments of: entry index, then where `,"arguments":…` starts and ends in `buf`. */
  readonly strip: number[] = [];

  constructor(buf: Buffer) {
    this.buf = buf;
    this.ends = new Uint32Array(MAX_SEGMENT);
    this.flags = new Uint8Array(MAX_SEGMENT);
  }

  get count(): number {
    return this.n;
  }

  /** Empty again, to take new entries in the same buffer and tables (nothing may still read this one's). */
  reuse(): this {
    this.len = 0;
    this.n = 0;
    this.openIds.length = 0;
    this.finalIds.length = 0;
    this.strip.length = 0;
    return this;
  }

  /** It takes no more entries: MAX_SEGMENT of them, or MAX_SEGMENT_BYTES. */
  get full(): boolean {
    return this.n >= MAX_SEGMENT || this.len >= MAX_SEGMENT_BYTES;
  }

  /** The entries' bytes, as a batch sends them (between `[` and `]`): without the arguments the broker has. */
  wire(): Buffer {
    const whole = this.buf.subarray(0, this.len);
    if (this.strip.length === 0) return whole;
    const parts: Buffer[] = [];
    let at = 0;
    for (let k = 0; k < this.strip.length; k += 3) {
      parts.push(whole.subarray(at, this.strip[k + 1]));
      at = this.strip[k + 2]!;
    }
    parts.push(whole.subarray(at));
    return Buffer.concat(parts);
  }

  /** Write an entry; `known`: the broker has its arguments (a batch leaves them out, the spill keeps them). */
  write(text: string, flags: number, known = false): void {
    // the queue starts another segment once this one is `full`: one more entry has no slot in the tables
    if (this.n >= MAX_SEGMENT) throw new Error('a journal segment is full');
    const need = this.len + 1 + text.length * 3;
    if (need > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2));
      this.buf.copy(bigger, 0, 0, this.len);
      this.buf = bigger;
    }
    if (this.n > 0) this.buf[this.len++] = 0x2c /* , */;
    const start = this.len;
    this.len += this.buf.write(text, this.len, 'utf8');
    if (known) {
      // an entry's keys come in the record's order (id, client, server, tool, arguments, argsTruncated…), and no
      // string value can hold these keys unescaped: the first of each is the key itself
      const from = this.buf.indexOf(ARGUMENTS_KEY, start);
      const to = from === -1 ? -1 : this.buf.indexOf(AFTER_ARGUMENTS_KEY, from);
      if (to !== -1 && to < this.len) this.strip.push(this.n, from, to);
    }
    this.ends[this.n] = this.len;
    this.flags[this.n] = flags;
    this.n++;
  }

  /** Entry i's bytes. */
  entry(i: number): Buffer {
    return this.buf.subarray(i === 0 ? 0 : this.ends[i - 1]! + 1, this.ends[i]);
  }
}
