/**
 * A journal batch's entries read from its text (a JSON array, as a wrapper sends it), in pieces.
 *
 * Decoding a batch whole makes one string of its size, and a string over V8's largest young object (128 KB) is
 * a large object: memory mapped for it alone, first touched as it is filled, and unmapped at the next scavenge. A
 * wrapper under load sends a batch every 10 ms of some 200 KB, and such a string cost the broker 0.8 to 1.4 ms of
 * CPU to make against some 30 µs for one of 120 KB (most of it in page faults, which cost up to 12 µs a page in a
 * virtual machine). So a big batch is read in pieces of about PIECE bytes, each cut where one entry ends and the
 * next begins, and parsed as an array of its own.
 *
 * The result is JSON.parse's, always. A wrapper's entry starts `{"id":`, so the pieces are cut before a `{"id":`
 * that follows `},`: in valid JSON that quote opens a string (after a closing one only `:`, `,`, `}` or `]` may
 * follow), so the cut falls between two values of some array. When every piece parses as an array, the pieces
 * joined by commas are the whole array, and its elements are theirs, in order. When one does not (the cut fell
 * inside a nested array, or the text is not JSON at all), the batch is parsed whole, as it always was.
 */

/** About how many bytes a piece holds: well under the 128 KB past which a string is a large object. */
export const PIECE = 64 * 1024;
/** A batch this size or smaller is parsed whole (its string is no large object). */
const WHOLE_MAX = 96 * 1024;
const CUT = Buffer.from('},{"id":');
const OPEN = 0x5b;
const CLOSE = 0x5d;

/** The batch's entries, as JSON.parse reads them; undefined when its text is not a JSON array. */
export function batchEntries(text: Buffer): unknown[] | undefined {
  if (text.length > WHOLE_MAX && text[0] === OPEN && text[text.length - 1] === CLOSE) {
    const entries = inPieces(text);
    if (entries) return entries;
  }
  return whole(text);
}

function whole(text: Buffer): unknown[] | undefined {
  try {
    const v: unknown = JSON.parse(text.toString('utf8'));
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The elements of every piece, or undefined when one piece is not an array's elements. */
function inPieces(text: Buffer): unknown[] | undefined {
  const end = text.length - 1;
  const entries: unknown[] = [];
  for (let start = 1; start < end; ) {
    const cut = start + PIECE < end ? text.indexOf(CUT, start + PIECE) : -1;
    // the piece ends with the `}` before the cut; the next begins at its `{`
    const stop = cut === -1 || cut >= end ? end : cut + 1;
    let piece: unknown;
    try {
      piece = JSON.parse(`[${text.toString('utf8', start, stop)}]`);
    } catch {
      return undefined;
    }
    for (const e of piece as unknown[]) entries.push(e);
    start = stop === end ? end : stop + 1;
  }
  return entries;
}
