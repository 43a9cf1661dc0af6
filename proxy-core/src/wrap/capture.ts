/**
 * What the journal keeps of a call's arguments and result: JSON text cut at a limit, marked when cut, with
 * the size of the whole. A result can be tens of MB; it is never re-serialised for this: past the limit, the
 * text is cut from the bytes the server sent.
 */
import { LIMITS } from '../protocol/limits.js';
import { closingQuote, QUOTE } from '../jsonrpc/json-bytes.js';

export interface Shown {
  /** JSON text, at most the limit (UTF-16 units). */
  text: string;
  truncated: boolean;
  /** Size of the whole: UTF-16 units for arguments (as tickets count them), UTF-8 bytes for a result. */
  bytes: number;
}

/** The arguments as a journal entry and a ticket show them. */
export function shownArguments(args: unknown): Shown {
  const text = JSON.stringify(args ?? {});
  const max = LIMITS.argsShown;
  return text.length > max ? { text: cutText(text, max), truncated: true, bytes: text.length } : { text, truncated: false, bytes: text.length };
}

/**
 * The result (or the JSON-RPC error) of a response, as JSON text. Small responses are serialised from the
 * parsed message; a large one is cut from `raw`, the server's own bytes, from where the value starts.
 */
export function capturedResult(message: Record<string, unknown>, raw: Buffer): Shown {
  const key = message.error !== undefined ? 'error' : 'result';
  const value = message[key];
  const max = LIMITS.resultShown;
  // a UTF-16 unit is at most 3 UTF-8 bytes: a message this small has a value within the limit
  if (raw.length <= max) return whole(value);
  const start = valueStart(raw, key);
  // the value may be small inside a big message (a huge id…): then serialising it is cheap
  if (start === -1 || raw.length - start <= 3 * max) return whole(value, max);
  const end = valueEnd(raw, start, message, key);
  const text = cutText(raw.toString('utf8', start, start + 3 * max), max);
  return { text, truncated: true, bytes: end - start };
}

function whole(value: unknown, max: number = LIMITS.resultShown): Shown {
  const text = JSON.stringify(value) ?? 'null';
  const bytes = Buffer.byteLength(text);
  return text.length > max ? { text: cutText(text, max), truncated: true, bytes } : { text, truncated: false, bytes };
}

/** Cut at `max` UTF-16 units without leaving half a surrogate pair (or a U+FFFD from a cut UTF-8 sequence) at the end. */
function cutText(text: string, max: number): string {
  let cut = text.length > max ? text.slice(0, max) : text;
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut;
}

/**
 * How far into a message the top-level key is looked for (the envelope's other members are small). Past it, the
 * parsed value is serialised: a big answer parsed without its texts (unread-payload.ts) must have its result begin
 * within it.
 */
export const RESULT_SEARCH_BYTES = 1 << 20;

/**
 * Where the value of the top-level member `key` starts in a JSON object's bytes, or -1. Scans only the
 * object's first members (strings skipped by their quotes, depth counted), never the whole message.
 */
function valueStart(raw: Buffer, key: string): number {
  let depth = 0;
  let i = 0;
  const stop = Math.min(raw.length, RESULT_SEARCH_BYTES);
  while (i < stop) {
    const c = raw[i]!;
    if (c === QUOTE) {
      const end = closingQuote(raw, i, stop);
      if (end === -1) return -1;
      if (depth === 1) {
        let j = end + 1;
        while (j < stop && isSpace(raw[j]!)) j++;
        if (raw[j] === 0x3a /* : */) {
          let name: unknown;
          try {
            name = JSON.parse(raw.toString('utf8', i, end + 1));
          } catch {
            return -1;
          }
          j++;
          while (j < stop && isSpace(raw[j]!)) j++;
          if (name === key) return j < stop ? j : -1;
          i = j;
          continue;
        }
      }
      i = end + 1;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) depth++;
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
    i++;
  }
  return -1;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Where the value of `key` ends: the message's members after it are known from the parse (JSON.parse keeps
 * their order), so their text is matched backwards from the end of the line, blanks aside. If the server
 * spelled them in a way that does not match, the end of the line is taken (a few bytes too many).
 */
function valueEnd(raw: Buffer, start: number, message: Record<string, unknown>, key: string): number {
  const keys = Object.keys(message);
  const after = keys.slice(keys.indexOf(key) + 1);
  const tail = Buffer.from(after.map((k) => `,${JSON.stringify(k)}:${JSON.stringify(message[k])}`).join('') + '}');
  let i = raw.length - 1;
  for (let t = tail.length - 1; t >= 0; t--) {
    while (i > start && isSpace(raw[i]!)) i--;
    if (raw[i] !== tail[t]) return lastNonSpace(raw, start);
    i--;
  }
  while (i > start && isSpace(raw[i]!)) i--;
  return i + 1;
}

/** The index of the last byte that is not a blank (the message's closing brace). */
function lastNonSpace(raw: Buffer, start: number): number {
  let i = raw.length - 1;
  while (i > start && isSpace(raw[i]!)) i--;
  return i;
}
