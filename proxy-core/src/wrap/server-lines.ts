/**
 * A line from the server, read once: parsed, checked for nesting past what the wrapper can safely walk, and
 * handed on with the bytes the client is to get. Those are the server's own bytes (re-serialising a 10 MB result
 * would cost more than the relay itself), unless they could read differently to a client whose parser keeps the
 * first of two "id" keys: then what the wrapper matched (a held call cannot be "answered" that way) is what the
 * client gets. A batch is split, each message re-serialised. A big answer to a call or a resource read the client
 * made is parsed without its content texts, which nothing here reads (unread-payload.ts).
 */
import { withholdDeepTools } from './deep-tools.js';
import { PAYLOAD_LINE, withoutPayload } from './unread-payload.js';
import { LIMITS } from '../protocol/limits.js';
import { RESULT_SEARCH_BYTES } from './capture.js';
import { MAX_NESTING, mayNestDeeper, nestedDeeperThan, parseLine } from '../jsonrpc/inbound.js';
import { BACKSLASH, closingQuote, QUOTE } from '../jsonrpc/json-bytes.js';
import { errorResponse, INTERNAL_ERROR, isId, isObject, type JsonRpcId, type Message } from '../jsonrpc/messages.js';

export interface ServerLinesContext {
  log(msg: string): void;
  /** A message to route, with the bytes the client gets if it is relayed. */
  message(m: Message, raw: Buffer): void;
  /** Is this the id of a listing (the wrapper's own, or the client's tools/list)? */
  listingAnswer(id: JsonRpcId): boolean;
  /**
   * A repeat of the last tools/list page answered, or an answer to the wrapper's own listing with the bytes of the
   * client's page just read, byte for byte after its id: taken unread (true).
   */
  repeatedListing(line: Buffer): boolean;
  /**
   * Is this the id of a client's call the server was sent, or of its resources/read, whose answer is relayed as its
   * bytes and read only for its envelope and result members (never a content item's text)? Such an answer of a MiB
   * and more is parsed without those texts (unread-payload.ts).
   */
  relaysUnread(id: JsonRpcId): boolean;
  /**
   * Is any such answer awaited at all? Asked before a big line is read for its structure: a big listing's page,
   * at start-up, is not read twice while no call is out.
   */
  awaitsUnread(): boolean;
}

/** One line from the server. */
export function readServerLine(line: Buffer, o: ServerLinesContext): void {
  if (o.repeatedListing(line)) return;
  const ids = idKeys(line);
  const parsed = (line.length >= PAYLOAD_LINE && ids <= 1 && o.awaitsUnread() && skeletonAnswer(line, o)) || parseLine(line);
  if (Array.isArray(parsed)) {
    for (const m of parsed) if (isObject(m) && !(mayNestDeeper(line.length) && tooDeep(m, o))) o.message(m, Buffer.from(JSON.stringify(m)));
    return;
  }
  if (!isObject(parsed)) {
    const what = parsed === undefined ? 'a line that is not JSON' : 'JSON that is not a message';
    o.log(`airlock: the server wrote ${what}; dropped (${preview(line)})`);
    return;
  }
  // a line that spells "id" more than once is read for its envelope's keys, and its nesting with them
  const envelope = ids > 1 ? readEnvelope(line) : undefined;
  if (mayNestDeeper(line.length) && (envelope === undefined || envelope.deepest > MAX_NESTING) && tooDeep(parsed, o)) return;
  if (envelope && !envelope.oneIdKey) return o.message(parsed, Buffer.from(JSON.stringify(parsed)));
  // a leading BOM is accepted on the way in, never passed on to the client
  o.message(parsed, line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf ? line.subarray(3) : line);
}

/**
 * A content text shorter than this is parsed as ever. Longer, a result holding one is more than three times what the
 * journal shows of a result, so the journal cuts it from the bytes (capture.ts) and never serialises the parsed
 * value, in which it is `""` (provided the journal finds where the result begins: RESULT_SEARCH_BYTES).
 */
const UNREAD_TEXT_MIN = 4 * LIMITS.resultShown;

/**
 * A big line parsed without its content texts, when it is an answer to a call relayed unread (one "id" in all: a
 * line that spells it twice may be re-serialised from the parse). Undefined otherwise: the line is parsed whole.
 */
function skeletonAnswer(line: Buffer, o: ServerLinesContext): Record<string, unknown> | undefined {
  const skeleton = withoutPayload(line, UNREAD_TEXT_MIN, RESULT_SEARCH_BYTES);
  if (skeleton === undefined) return undefined;
  const m = parseLine(skeleton);
  return isObject(m) && !Object.hasOwn(m, 'method') && isId(m.id) && o.relaysUnread(m.id) ? m : undefined;
}

/**
 * A server message nested past MAX_NESTING is not relayed (re-serialising it, journaling it or hashing it would
 * overflow the stack): an answer becomes an error answer to the same request, anything else is dropped. True
 * when the message was handled so.
 */
function tooDeep(m: Record<string, unknown>, o: ServerLinesContext): boolean {
  if (!nestedDeeperThan(m, MAX_NESTING)) return false;
  const listingAnswer = isId(m.id) && !Object.hasOwn(m, 'method') && o.listingAnswer(m.id);
  const kept = listingAnswer ? withholdDeepTools(m, MAX_NESTING) : null;
  if (kept) {
    o.log(`airlock: the server listed ${kept.withheld.length} tool(s) nested deeper than ${MAX_NESTING} levels (${kept.withheld.map((n) => JSON.stringify(n.slice(0, 80))).join(', ')}); withheld, every call to them asks`);
    o.message(kept.message, Buffer.from(JSON.stringify(kept.message)));
    return true;
  }
  o.log(`airlock: the server wrote a message nested deeper than ${MAX_NESTING} levels; refused`);
  if (!Object.hasOwn(m, 'method') && isId(m.id)) {
    const answer: Message = { ...errorResponse(m.id, INTERNAL_ERROR, `Airlock refused the server's answer: it is nested deeper than ${MAX_NESTING} levels`) };
    o.message(answer, Buffer.from(JSON.stringify(answer)));
  }
  return true;
}

/** Every way JSON can spell the key "id" (its letters' \\u escapes have no hex letters, so case cannot vary). */
const ID_KEY_SPELLINGS = ['"id"', '"\\u0069d"', '"i\\u0064"', '"\\u0069\\u0064"'].map((k) => Buffer.from(k));
const PLAIN_ID_ONLY = [ID_KEY_SPELLINGS[0]!];
/** What every escaped spelling contains: a line without it can spell "id" only plainly. */
const ESCAPED_ZERO = Buffer.from('\\u00');

/**
 * How often the line spells "id" anywhere, up to 2. Only the envelope's keys matter to a client routing the
 * message: a line with one "id" in all has at most one there and is passed at once; one with more (every tool of a
 * big listing may have an `id` property) is read for its envelope's keys (`readEnvelope`) rather than
 * re-serialised whole.
 */
function idKeys(line: Buffer): number {
  let seen = 0;
  // the common line has no \u00 escape at all: one scan for it, and one for the plain spelling
  const spellings = line.indexOf(ESCAPED_ZERO) === -1 ? PLAIN_ID_ONLY : ID_KEY_SPELLINGS;
  for (const key of spellings) {
    for (let at = line.indexOf(key); at !== -1; at = line.indexOf(key, at + 1)) if (++seen > 1) return seen;
  }
  return seen;
}

/** The longest spelling of "id" with its quotes ("\u0069\u0064"): a longer key is not it. */
const LONGEST_ID_KEY = 16;

/** What one pass over a line's structure shows. */
interface Envelope {
  /** At most one key of the top-level object reads "id", however spelled (a false "no" only costs a re-serialisation). */
  oneIdKey: boolean;
  /** The deepest level an object or array nests to (the line's own object is level 1). */
  deepest: number;
}

/**
 * Read the keys of the line's top-level object that read "id", and how deep it nests (the line parsed as an
 * object, so it is valid JSON: a string at depth 1 followed by a colon is one of its keys, and the brackets
 * outside strings are its nesting, as the parse's walk would count it). Strings are skipped by their closing
 * quotes, so the cost is the line's structure, not its text; the nesting comes with it, so the parsed message
 * is not walked again for it.
 */
function readEnvelope(line: Buffer): Envelope {
  let depth = 0;
  let deepest = 0;
  let seen = 0;
  const n = line.length;
  for (let i = 0; i < n; i++) {
    const c = line[i]!;
    if (c === QUOTE) {
      const end = closingQuote(line, i);
      // not valid after all: nothing of it is believed (re-serialised, and walked for its nesting)
      if (end === -1) return { oneIdKey: false, deepest: Infinity };
      if (depth === 1 && end - i < LONGEST_ID_KEY && followedByColon(line, end + 1) && readsId(line, i, end)) seen++;
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return { oneIdKey: seen <= 1, deepest };
}

function followedByColon(line: Buffer, from: number): boolean {
  let i = from;
  while (line[i] === 0x20 || line[i] === 0x09 || line[i] === 0x0a || line[i] === 0x0d) i++;
  return line[i] === 0x3a;
}

/** Does the string from `open` to `close` (its quotes) read "id"? */
function readsId(line: Buffer, open: number, close: number): boolean {
  if (close - open === 3) return line[open + 1] === 0x69 && line[open + 2] === 0x64;
  // any other spelling of "id" has an escape in it
  let escaped = false;
  for (let i = open + 1; i < close && !escaped; i++) escaped = line[i] === BACKSLASH;
  if (!escaped) return false;
  try {
    return JSON.parse(line.toString('utf8', open, close + 1)) === 'id';
  } catch {
    return true;
  }
}

/** The start of a line, printable, for a log. */
export function preview(line: Buffer): string {
  const text = line.subarray(0, 120).toString('utf8').replace(/[\x00-\x1f\x7f]/g, '?');
  return line.length > 120 ? `${text}… ${line.length} bytes` : text;
}
