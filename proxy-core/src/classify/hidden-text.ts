/**
 * Tool poisoning: text a model reads but a person reviewing the catalog does not see (hidden Unicode, bidi
 * controls, terminal escapes) or text that talks to the model rather than describing the tool. Every string
 * in the entry is scanned, keys included, because a model reads the nested schema descriptions too.
 *
 * The one implementation: the classifier flags these in a verdict's reasons (so the wrapper, on every
 * listing), and `airlock inspect` reports them as findings. Plain TypeScript with no imports, because the
 * wrapper loads it on its start-up path.
 */

export type PoisonKind = 'hidden-unicode' | 'tag-characters' | 'private-use' | 'bidi-control' | 'ansi-escape' | 'control-character' | 'instruction';

export interface PoisonHit {
  kind: PoisonKind;
  /** Where in the entry, as a JSON path (`description`, `inputSchema.properties.q.description`). */
  path: string;
  /** What was found, printable (code points spelled out, matched phrase quoted). */
  detail: string;
}

const ZERO_WIDTH = /[\u200B-\u200D\u2060-\u2064\uFEFF\u180E\u00AD\u034F\u115F\u1160\u3164\uFFA0]/u;
const TAG = /[\u{E0000}-\u{E007F}]/u;
const PRIVATE_USE = /[\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}]/u;
const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/u;
const ANSI = /\u001B[[\]()#;?]|\u009B|\u001B[@-Z\\-_]/u;
// C0/C1 controls other than tab, newline and carriage return (ESC is reported as ANSI above).
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001A\u001C-\u001F\u007F-\u009A\u009C-\u009F]/u;

/** How much of one string the phrase check reads. */
const MAX_PHRASE_SCAN = 256 * 1024;

const CHAR_CHECKS: ReadonlyArray<[PoisonKind, RegExp, string]> = [
  ['tag-characters', TAG, 'Unicode tag characters (invisible text)'],
  ['bidi-control', BIDI, 'bidirectional control characters (text can display in a different order than it reads)'],
  ['ansi-escape', ANSI, 'ANSI escape sequences (can rewrite what a terminal shows)'],
  ['hidden-unicode', ZERO_WIDTH, 'zero-width or invisible characters'],
  ['private-use', PRIVATE_USE, 'private-use characters'],
  ['control-character', CONTROL, 'control characters'],
];

// Phrases that address the model (or hide things from the user) rather than describe a tool. Kept specific:
// a description that says "returns the previous instructions" should not trip this.
const INSTRUCTION_PATTERNS: readonly RegExp[] = [
  /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding|other|system)\s+(?:instructions?|prompts?|rules|messages?|directions?)/i,
  /\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|mention\s+(?:this\s+)?to|show|reveal\s+(?:this\s+)?to)\s+the\s+user/i,
  /\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+the\s+user/i,
  /\bthe\s+user\s+(?:must|should)\s+not\s+(?:know|see|be\s+told)/i,
  /<\s*\/?\s*(?:important|system|instructions?|secret|hidden|admin)\s*>/i,
  /\[\s*(?:system|important|instructions?)\s*\]/i,
  /\b(?:before|prior\s+to)\s+(?:using|calling|invoking)\s+(?:this|any)\s+tool,?\s+(?:you\s+must|first|always)/i,
  // bounded gap: an unbounded `.*` backtracks over the whole string from every "you must read" in it
  /\byou\s+(?:must|should)\s+(?:first\s+)?(?:read|send|upload|include|pass|call)\b.{0,400}?\b(?:~\/|\.ssh|id_rsa|\.env\b|credentials|api[\s_-]?keys?|passwords?|secrets?|tokens?)/i,
  /(?:~\/\.ssh|id_rsa|\.aws\/credentials|\/etc\/passwd)/i,
  /\b(?:you\s+are\s+now|act\s+as|new\s+instructions?\s*:|system\s+prompt\s*:)/i,
  /\bsecretly\b|\bcovertly\b|\bsilently\s+(?:send|forward|copy|exfiltrate|upload)/i,
];

/**
 * The patterns' union: a text it does not match matches none of them (most texts), so they are tried one by one
 * only on a text it matches. Exact only while every pattern has the same flags (and no backreference): else none.
 */
const ANY_INSTRUCTION = INSTRUCTION_PATTERNS.every((re) => re.flags === 'i') ? new RegExp(INSTRUCTION_PATTERNS.map((re) => `(?:${re.source})`).join('|'), 'i') : null;

function codePoints(text: string, re: RegExp): string {
  const seen = new Set<string>();
  for (const ch of text) {
    if (re.test(ch)) seen.add(`U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`);
    if (seen.size >= 6) break;
  }
  return [...seen].join(', ');
}

/** Tag characters mirror ASCII (U+E0020–U+E007E); spelling them out shows what the hidden text says. */
function decodeTags(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0xe0020 && cp <= 0xe007e) out += String.fromCharCode(cp - 0xe0000);
  }
  return out.slice(0, 80);
}

const INVISIBLE = new RegExp(`${ZERO_WIDTH.source}|${TAG.source}|${BIDI.source}`, 'gu');

/** Any character a check above looks for (their union): a string without one needs no character check. */
const ANY_FLAGGED_CHARACTER = new RegExp([TAG, BIDI, ANSI, ZERO_WIDTH, PRIVATE_USE, CONTROL].map((re) => re.source).join('|'), 'u');

/** What one string holds, wherever it is: the hits without their path. */
type Findings = readonly Omit<PoisonHit, 'path'>[];
const NOTHING: Findings = [];

/**
 * Findings by string, so that the same text is read once however often it appears (schema keys and types,
 * descriptions shared by many tools, the same catalog listed again). Pure function of the string: a cache
 * cannot make it say anything else. Bounded in characters; emptied when full.
 */
const findingsByText = new Map<string, Findings>();
let findingsChars = 0;
const FINDINGS_CACHE_CHARS = 16 * 1024 * 1024;
/** Strings longer than this are read every time (they would crowd out the rest). */
const FINDINGS_CACHE_LONGEST = 64 * 1024;

function findingsOf(text: string): Findings {
  const known = findingsByText.get(text);
  if (known) return known;
  const found = readText(text);
  if (text.length <= FINDINGS_CACHE_LONGEST) {
    if (findingsChars + text.length > FINDINGS_CACHE_CHARS) {
      findingsByText.clear();
      findingsChars = 0;
    }
    findingsByText.set(text, found);
    findingsChars += text.length;
  }
  return found;
}

function readText(text: string): Findings {
  const hits: Omit<PoisonHit, 'path'>[] = [];
  const flagged = ANY_FLAGGED_CHARACTER.test(text);
  if (flagged) {
    for (const [kind, re, label] of CHAR_CHECKS) {
      if (!re.test(text)) continue;
      const detail =
        kind === 'ansi-escape'
          ? label
          : kind === 'tag-characters' && decodeTags(text) !== ''
            ? `${label} spelling "${decodeTags(text)}"`
            : `${label}: ${codePoints(text, re)}`;
      hits.push({ kind, detail });
    }
  }
  // Hidden characters inside a phrase ("ign\u200Bore previous") must not hide it from the phrase check. The
  // phrase check reads a bounded prefix of a huge string (the character checks above read all of it).
  const prefix = text.length > MAX_PHRASE_SCAN ? text.slice(0, MAX_PHRASE_SCAN) : text;
  const visible = flagged ? prefix.replace(INVISIBLE, '') : prefix;
  const m = !ANY_INSTRUCTION || ANY_INSTRUCTION.test(visible) ? firstInstruction(visible) : null;
  if (m) hits.push({ kind: 'instruction', detail: `instruction-like text: "${m[0].slice(0, 60)}"` });
  return hits.length === 0 ? NOTHING : hits;
}

/** The match of the first pattern (in their order) that matches. */
function firstInstruction(text: string): RegExpExecArray | null {
  for (const re of INSTRUCTION_PATTERNS) {
    const m = re.exec(text);
    if (m) return m;
  }
  return null;
}

/**
 * False when the JSON text of a value shows that no string in the value (key or member) has a finding, without
 * reading it string by string; true when it may (the value is then scanned as always). Exact for the JSON text
 * JSON.stringify writes: without a backslash in it, every string of the value stands in it as it is (any
 * character JSON escapes is written with one), between quotes, which no word or check character is; so a
 * character or a phrase found in a string is found in the text, and a text where neither check finds anything
 * holds no string where one would. A text long enough for a string to be read only in part is always scanned.
 */
export function mayHaveFindings(jsonText: string): boolean {
  if (!ANY_INSTRUCTION || jsonText.length > MAX_PHRASE_SCAN || jsonText.includes('\\')) return true;
  return ANY_FLAGGED_CHARACTER.test(jsonText) || ANY_INSTRUCTION.test(jsonText);
}

/**
 * mayHaveFindings for a whole JSON text as it came from elsewhere (a server's page of 10,000 tools), not as
 * JSON.stringify wrote it: false when no string in any value read from it has a finding. The same argument holds
 * for any JSON text without a backslash: every string stands in it as it is, between quotes (JSON has no other
 * way to write a quote or a control character in a string, and bytes that are not UTF-8 read as U+FFFD both
 * here and when parsed). Read whole, however long: a string read only in part by the scan is read in full here,
 * which finds more, never less. `plain`: the caller knows the text holds only ASCII characters other than DEL,
 * none of which a character check looks for (a check of its bytes is far cheaper than of its characters).
 */
export function jsonTextMayHaveFindings(text: string, plain = false): boolean {
  if (!ANY_INSTRUCTION || text.includes('\\')) return true;
  return (!plain && ANY_FLAGGED_CHARACTER.test(text)) || ANY_INSTRUCTION.test(text);
}

/** Scan one string; `path` names where it came from. */
export function scanText(text: string, path: string): PoisonHit[] {
  return findingsOf(text).map((f) => ({ kind: f.kind, path, detail: f.detail }));
}

/** Scan every string (and key) in a JSON value; bounded so a huge entry cannot stall the scan. */
export function scanJson(value: unknown, basePath = ''): PoisonHit[] {
  const hits: PoisonHit[] = [];
  let budget = 20_000;
  // the path of the node being read, as steps: written out only for a hit (most strings have none)
  const steps: (string | number)[] = [];
  const pathHere = (): string => {
    let path = basePath;
    for (const step of steps) path = typeof step === 'number' ? `${path}[${step}]` : path === '' ? step : `${path}.${step}`;
    return path;
  };
  const walk = (node: unknown, depth: number): void => {
    if (--budget < 0 || depth > 64) return;
    if (typeof node === 'string') {
      const found = findingsOf(node);
      if (found.length > 0) {
        const path = pathHere();
        for (const f of found) hits.push({ kind: f.kind, path: path === '' ? '(value)' : path, detail: f.detail });
      }
    } else if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        steps.push(i);
        walk(node[i], depth + 1);
        steps.pop();
      }
    } else if (typeof node === 'object' && node !== null) {
      for (const key of Object.keys(node)) {
        steps.push(key);
        const found = findingsOf(key);
        if (found.length > 0) {
          const path = `${pathHere()} (key)`;
          for (const f of found) hits.push({ kind: f.kind, path, detail: f.detail });
        }
        walk((node as Record<string, unknown>)[key], depth + 1);
        steps.pop();
      }
    }
  };
  walk(value, 0);
  return hits;
}

const ESCAPE_FOR_DISPLAY = new RegExp(
  `${ZERO_WIDTH.source}|${TAG.source}|${PRIVATE_USE.source}|${BIDI.source}|${CONTROL.source}|[\\u001B\\u009B]`,
  'gu',
);

/** One character as its code point, written out: `\u{202E}`. */
const spelled = (ch: string): string => `\\u{${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`;

/** Make server-supplied text safe to print on a terminal: invisible and control characters spelled out. */
export function printable(text: string, maxLength = 200): string {
  const escaped = text.replace(ESCAPE_FOR_DISPLAY, spelled);
  const oneLine = escaped.replace(/\r?\n|\r|\t/g, ' ');
  return oneLine.length > maxLength ? `${oneLine.slice(0, maxLength - 1)}…` : oneLine;
}

// what a terminal would act on or not show, in text of many lines: all of the above, and a carriage return,
// which sends the cursor back to overwrite what the line said
const TERMINAL_UNSAFE = new RegExp(`${ESCAPE_FOR_DISPLAY.source}|\\r`, 'gu');

/** Text of many lines for a terminal: every character printable() spells out, spelled out; lines and tabs kept. */
export function spellOutHidden(text: string): string {
  return text.replace(TERMINAL_UNSAFE, spelled);
}

/**
 * JSON text for a terminal: the same characters as `\uXXXX` escapes, which JSON reads back as the very same
 * string (JSON.stringify leaves C1 controls, bidi controls and tag characters raw). They only occur inside strings.
 */
export function spellOutHiddenJson(json: string): string {
  return json.replace(TERMINAL_UNSAFE, (ch) => {
    let out = '';
    for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}

/**
 * Hits grouped into one line per kind, naming up to `places` paths: what a verdict's reasons say (the hidden
 * characters spelled out, so the line itself is safe to print).
 */
export function describeHits(hits: readonly PoisonHit[], places = 3): string[] {
  const byKind = new Map<PoisonKind, PoisonHit[]>();
  for (const hit of hits) {
    const group = byKind.get(hit.kind);
    if (group) group.push(hit);
    else byKind.set(hit.kind, [hit]);
  }
  const lines: string[] = [];
  for (const group of byKind.values()) {
    const where = group.slice(0, places).map((h) => printable(h.path, 120)).join(', ');
    const more = group.length > places ? ` and ${group.length - places} more` : '';
    lines.push(`possible tool poisoning: ${printable(group[0]!.detail, 300)} in ${where}${more}`);
  }
  return lines;
}
