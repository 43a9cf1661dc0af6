/**
 * A big answer to a tools/call or a resources/read, read without the texts it carries. The wrapper relays a call's
 * answer as the server's own bytes and reads only its envelope and a few small members of its result (isError, a
 * task's handle, a round's request); the journal cuts what it keeps of the result from those bytes (capture.ts). A
 * resource's answer it only routes by its id. The texts of the result's content items are read by nothing.
 * Decoding a 10 MB text into a string and having JSON.parse copy it into another cost the wrapper some 70 ms of a
 * 10 MB answer, on memory touched for the first time; checking its bytes as JSON.parse would check them takes
 * about 10.
 *
 * So a line of a MiB and more is first read once for its structure: every long string in a content item's `text`,
 * `data` or `blob` (or its resource's), or in one of a resource read's `contents`, is checked as a JSON string (no
 * control character, no escape JSON does not know) and left out, `""` in its place, and the rest (the skeleton) is
 * parsed by JSON.parse as any line.
 * A line the skeleton does not fit (not an object, a string that fails the check, a structure read otherwise) is
 * parsed whole, as before: a check that says "valid" only where JSON.parse would, and otherwise sends the line
 * the usual way, can never let through what the whole parse would refuse.
 */

import { MAX_NESTING } from '../jsonrpc/inbound.js';
import { BACKSLASH, closingQuote, QUOTE } from '../jsonrpc/json-bytes.js';

/** Lines shorter than this are parsed whole: the check and the second pass cost more than they save. */
export const PAYLOAD_LINE = 1 << 20;

const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * Where a container stands on the way to a content item's text: result, its content (a call's; a resource read's
 * `contents`), an item, its resource.
 */
const Role = { Other: 0, Top: 1, Result: 2, Content: 3, Item: 4, Resource: 5 } as const;
type Role = (typeof Role)[keyof typeof Role];

/** The members on the way, as the line spells them plainly (an escaped spelling is simply not cut). */
const RESULT = Buffer.from('"result"');
const CONTENT = Buffer.from('"content"');
const CONTENTS = Buffer.from('"contents"');
const RESOURCE = Buffer.from('"resource"');
const TEXT = Buffer.from('"text"');
const DATA = Buffer.from('"data"');
const BLOB = Buffer.from('"blob"');

/**
 * `line` with every content text of at least `minCut` bytes replaced by `""`, or undefined when nothing was cut or
 * the line is not read that way (it is then parsed whole). The journal must keep what it shows of such a result
 * from the bytes, never from the parse: `minCut` large enough that a result holding a text that long is cut from
 * the bytes, and a result that opens at `resultWithin` or later (past where the journal looks for it) left whole.
 */
export function withoutPayload(line: Buffer, minCut: number, resultWithin = line.length): Buffer | undefined {
  const n = line.length;
  /** The role of each open container, and for an object whether a key comes next. */
  const roles: Role[] = [];
  const keyNext: boolean[] = [];
  /** The last key read in each open object (its quoted bytes' bounds). */
  const keyAt: number[] = [];
  const keyEnd: number[] = [];
  const kept: Buffer[] = [];
  let from = 0;
  // (a leading byte-order mark is no structure: it is passed over as any byte, and kept for parseLine to drop)
  let i = 0;
  while (i < n) {
    const c = line[i]!;
    if (c === QUOTE) {
      const d = roles.length - 1;
      if (d < 0) return undefined;
      const isKey = keyNext[d] === true;
      const longEnough = !isKey && i + minCut < n && cuttable(roles[d]!, line, keyAt[d]!, keyEnd[d]!);
      const end = longEnough ? checkedStringEnd(line, i) : closingQuote(line, i);
      if (end === -1) return undefined;
      if (isKey) {
        keyAt[d] = i;
        keyEnd[d] = end + 1;
        keyNext[d] = false;
      } else if (longEnough && end - i - 1 >= minCut) {
        kept.push(line.subarray(from, i), EMPTY_STRING);
        from = end + 1;
      }
      i = end + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const d = roles.length - 1;
      const role = d < 0 ? (c === OPEN_OBJECT ? Role.Top : Role.Other) : inner(roles[d]!, c, line, keyAt[d]!, keyEnd[d]!);
      // past where the journal looks for the result, or nested past what the wrapper walks: parsed whole, as ever
      if ((role === Role.Result && i >= resultWithin) || roles.length >= MAX_NESTING) return undefined;
      roles.push(role);
      keyNext.push(c === OPEN_OBJECT);
      keyAt.push(-1);
      keyEnd.push(-1);
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (roles.length === 0) return undefined;
      roles.pop();
      keyNext.pop();
      keyAt.pop();
      keyEnd.pop();
    } else if (c === COMMA) {
      const d = roles.length - 1;
      // a comma in an object is followed by a key; the last key is forgotten with its value
      if (d >= 0 && keyAt[d] !== -1) {
        keyNext[d] = true;
        keyAt[d] = keyEnd[d] = -1;
      }
    }
    i++;
  }
  if (kept.length === 0) return undefined;
  kept.push(line.subarray(from));
  return Buffer.concat(kept);
}

const EMPTY_STRING = Buffer.from('""');

/** The role of a container opening (`c`) inside one of role `outer`, after the key at [at, end) (-1: none). */
function inner(outer: Role, c: number, line: Buffer, at: number, end: number): Role {
  if (outer === Role.Top) return c === OPEN_OBJECT && is(line, at, end, RESULT) ? Role.Result : Role.Other;
  if (outer === Role.Result) return c === OPEN_ARRAY && (is(line, at, end, CONTENT) || is(line, at, end, CONTENTS)) ? Role.Content : Role.Other;
  if (outer === Role.Content) return c === OPEN_OBJECT ? Role.Item : Role.Other;
  if (outer === Role.Item) return c === OPEN_OBJECT && is(line, at, end, RESOURCE) ? Role.Resource : Role.Other;
  return Role.Other;
}

/** Is a string value under the key at [at, end) in a container of `role` one of the texts left out? */
function cuttable(role: Role, line: Buffer, at: number, end: number): boolean {
  if (role === Role.Item) return is(line, at, end, TEXT) || is(line, at, end, DATA) || is(line, at, end, BLOB);
  if (role === Role.Resource) return is(line, at, end, TEXT) || is(line, at, end, BLOB);
  return false;
}

function is(line: Buffer, at: number, end: number, name: Buffer): boolean {
  return at !== -1 && end - at === name.length && line.compare(name, 0, name.length, at, end) === 0;
}

/**
 * The quote closing the string that opens at `open`, checked as JSON.parse checks a string, or -1 when it would
 * not parse: no byte below 0x20, and every backslash one of JSON's escapes (`\u` with four hex digits). Bytes of
 * 0x80 and up pass, as the decoding before a parse turns any that are not UTF-8 into U+FFFD.
 */
export function checkedStringEnd(line: Buffer, open: number): number {
  const n = line.length;
  for (let i = open + 1; i < n; i++) {
    const c = line[i]!;
    if (c === QUOTE) return i;
    if (c < 0x20) return -1;
    if (c !== BACKSLASH) continue;
    const e = line[++i];
    if (e === 0x75 /* u */) {
      for (let k = 0; k < 4; k++) if (!isHex(line[++i])) return -1;
    } else if (!(e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74)) {
      return -1;
    }
  }
  return -1;
}

function isHex(h: number | undefined): boolean {
  return h !== undefined && ((h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66));
}
