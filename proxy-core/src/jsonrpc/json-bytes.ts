/**
 * JSON read as bytes, where a line is too big to decode for the little that is wanted of it (its envelope, where a
 * member starts, which texts to leave out).
 */

/** The two bytes that shape a JSON string: its quote, and the escape that takes the byte after it. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;

/**
 * The quote that closes the string opening at `open`, looked for before `stop`, or -1. Read byte by byte, each
 * backslash taking the byte after it (in JSON every escape is a backslash and one byte, `\u` then four hex digits
 * that hold neither a quote nor a backslash): most strings of a line are keys and short values, for which a call
 * into Buffer.indexOf per string cost more than the bytes it skipped (a 5 MB page: 15 to 18 ms against 9, run once,
 * as at start-up).
 */
export function closingQuote(bytes: Buffer, open: number, stop = bytes.length): number {
  for (let at = open + 1; at < stop; at++) {
    const c = bytes[at];
    if (c === QUOTE) return at;
    if (c === BACKSLASH) at++;
  }
  return -1;
}
