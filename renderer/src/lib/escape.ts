/**
 * Untrusted text made safe to look at. A tool's arguments, names, reasons and diffs can hide what they say
 * with characters that do not show (zero-width, tag characters), that reorder what does show (bidi controls)
 * or that a terminal would act on (ANSI escapes). Each such character becomes a visible escape (`\u202E`,
 * `\x1b[31m`, `\u{E0041}`) in a segment marked `escaped`, which the UI draws in a style of its own; nothing
 * of it ever reaches the page raw.
 */

/** A run of text: shown as is, or an escape drawn as one. */
export interface Segment {
  text: string;
  escaped: boolean;
}

export interface EscapeOptions {
  /** Characters to leave raw (e.g. `'\t'` in a diff of tab-indented code, `'\n'` in a multi-line note). */
  allow?: string;
  /** Inside a JSON string: `"` and `\` as `\"` and `\\`, and `\n`, `\r`, `\t`, `\b`, `\f` as JSON writes them. */
  json?: boolean;
}

/** Inclusive code point ranges that never show as themselves (beyond what the property classes below catch). */
const INVISIBLE: readonly (readonly [number, number])[] = [
  [0x0000, 0x001f], // C0 controls
  [0x007f, 0x009f], // DEL and C1 controls
  [0x00a0, 0x00a0], // no-break space
  [0x00ad, 0x00ad], // soft hyphen
  [0x034f, 0x034f], // combining grapheme joiner
  [0x061c, 0x061c], // Arabic letter mark (bidi)
  [0x115f, 0x1160], // Hangul fillers
  [0x1680, 0x1680], // Ogham space mark
  [0x17b4, 0x17b5], // Khmer inherent vowels
  [0x180b, 0x180f], // Mongolian variation selectors, vowel separator
  [0x2000, 0x200a], // spaces of other widths
  [0x200b, 0x200d], // zero-width space, non-joiner, joiner
  [0x200e, 0x200f], // left-to-right and right-to-left marks (bidi)
  [0x2028, 0x2029], // line and paragraph separators
  [0x202a, 0x202e], // bidi embeddings and overrides
  [0x202f, 0x202f], // narrow no-break space
  [0x205f, 0x205f], // medium mathematical space
  [0x2060, 0x2065], // word joiner, invisible operators
  [0x2066, 0x2069], // bidi isolates
  [0x206a, 0x206f], // deprecated format characters
  [0x2800, 0x2800], // braille blank
  [0x3000, 0x3000], // ideographic space
  [0x3164, 0x3164], // Hangul filler
  [0xfe00, 0xfe0d], // variation selectors (VS15/VS16, which pick emoji or text style, stay)
  [0xfeff, 0xfeff], // zero-width no-break space (BOM)
  [0xffa0, 0xffa0], // halfwidth Hangul filler
  [0xfff9, 0xfffb], // interlinear annotation controls
  [0xfffe, 0xffff], // noncharacters
  [0x1d173, 0x1d17a], // musical format controls
  [0xe0000, 0xe007f], // tag characters
  [0xe0100, 0xe01ef], // variation selectors supplement
];

/** Every other format character, separator or control, and a surrogate without its pair. */
const FORMAT = /^[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]$/u;

const JSON_SHORT: Readonly<Record<number, string>> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r' };
/** Tab, line feed and carriage return: everyday text, which JSON writes as `\t`, `\n`, `\r`. */
const PLAIN_IN_JSON = new Set([0x09, 0x0a, 0x0d]);

/** Whether this code point is drawn as an escape rather than as itself. */
export function isInvisible(cp: number): boolean {
  if (cp >= 0x20 && cp < 0x7f) return false;
  for (const [lo, hi] of INVISIBLE) if (cp >= lo && cp <= hi) return true;
  return FORMAT.test(String.fromCodePoint(cp));
}

const hex = (n: number, width: number): string => n.toString(16).toUpperCase().padStart(width, '0');

/** The visible escape of one code point: `\x1b` up to U+00FF, `\u202E` in the BMP, `\u{E0041}` above it. */
export function escapeCodePoint(cp: number, json = false): string {
  if (json && JSON_SHORT[cp] !== undefined) return JSON_SHORT[cp];
  if (cp <= 0xff) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp <= 0xffff) return `\\u${hex(cp, 4)}`;
  return `\\u{${hex(cp, 5)}}`;
}

/** A CSI sequence (ESC [ parameters intermediates final), the ANSI escapes that colour or move a terminal. */
const CSI = /\x1b\[[0-?]*[ -/]*[@-~]/y;

/** Split `text` into plain runs and escapes. Never returns an empty segment. */
export function escapeText(text: string, options: EscapeOptions = {}): Segment[] {
  const allow = options.allow ?? '';
  const json = options.json === true;
  const out: Segment[] = [];
  let plain = '';
  const push = (seg: string, escaped: boolean): void => {
    if (!escaped) {
      plain += seg;
      return;
    }
    if (plain) out.push({ text: plain, escaped: false });
    plain = '';
    // one segment per escape, so a long run of them can still be cut between two
    out.push({ text: seg, escaped: true });
  };
  let i = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    if (cp === 0x1b) {
      CSI.lastIndex = i;
      const m = CSI.exec(text);
      if (m) {
        push(`\\x1b${m[0].slice(1)}`, true);
        i += m[0].length;
        continue;
      }
    }
    const ch = text.slice(i, i + width);
    // a line break or tab inside a JSON string is ordinary JSON (`\n`, `\t`): written so, not flagged
    if (json && PLAIN_IN_JSON.has(cp)) push(escapeCodePoint(cp, true), false);
    else if (isInvisible(cp) && !allow.includes(ch)) push(escapeCodePoint(cp, json), true);
    else if (json && (ch === '"' || ch === '\\')) push(`\\${ch}`, false);
    else push(ch, false);
    i += width;
  }
  if (plain) out.push({ text: plain, escaped: false });
  return out;
}

/** The same text with every escape written inline: for places that take a plain string (a title, a label). */
export function visibleText(text: string, options: EscapeOptions = {}): string {
  return escapeText(text, options)
    .map((s) => s.text)
    .join('');
}

/** Whether anything in `text` would be shown as an escape. */
export function hasInvisible(text: string, options: EscapeOptions = {}): boolean {
  return escapeText(text, options).some((s) => s.escaped);
}

/**
 * The first `max` visible characters of some segments (an escape counts as its own length and is never cut),
 * and how many characters of the whole were left out.
 */
export function cutSegments(segments: readonly Segment[], max: number): { shown: Segment[]; hidden: number } {
  const shown: Segment[] = [];
  let used = 0;
  let total = 0;
  for (const s of segments) total += s.text.length;
  for (const s of segments) {
    if (used >= max) break;
    if (s.escaped) {
      shown.push(s);
      used += s.text.length;
      continue;
    }
    const room = max - used;
    if (s.text.length <= room) {
      shown.push(s);
      used += s.text.length;
    } else {
      let cut = room;
      // never split a surrogate pair
      const code = s.text.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
      if (cut > 0) shown.push({ text: s.text.slice(0, cut), escaped: false });
      used += cut;
      break;
    }
  }
  return { shown, hidden: Math.max(0, total - used) };
}

/** Runs of this many spaces or more are drawn as a count: padding that pushes the rest of a value out of sight. */
export const SPACE_RUN = 8;

/** The words for a run of `n` spaces, as drawn in place of it. */
export function spaceRunText(n: number): string {
  return `[${n.toLocaleString('en-US')} spaces]`;
}

/**
 * The same segments with every run of SPACE_RUN or more plain spaces drawn as one escape that counts them, so a
 * value padded to hide its end (`"echo hello" + 3,000 spaces + "&& rm -rf ~/"`) shows the end where it is.
 */
export function markSpaceRuns(segments: readonly Segment[]): Segment[] {
  const out: Segment[] = [];
  const run = new RegExp(` {${SPACE_RUN},}`, 'g');
  for (const s of segments) {
    if (s.escaped || !s.text.includes(' '.repeat(SPACE_RUN))) {
      out.push(s);
      continue;
    }
    let at = 0;
    for (const m of s.text.matchAll(run)) {
      if (m.index > at) out.push({ text: s.text.slice(at, m.index), escaped: false });
      out.push({ text: spaceRunText(m[0].length), escaped: true });
      at = m.index + m[0].length;
    }
    if (at < s.text.length) out.push({ text: s.text.slice(at), escaped: false });
  }
  return out;
}

/** The last `max` visible characters of some segments (an escape is never cut), the counterpart of cutSegments. */
export function lastSegments(segments: readonly Segment[], max: number): Segment[] {
  const shown: Segment[] = [];
  let used = 0;
  for (let i = segments.length - 1; i >= 0 && used < max; i--) {
    const s = segments[i]!;
    if (s.escaped || s.text.length <= max - used) {
      shown.unshift(s);
      used += s.text.length;
      continue;
    }
    let from = s.text.length - (max - used);
    // never split a surrogate pair
    const code = s.text.charCodeAt(from);
    if (code >= 0xdc00 && code <= 0xdfff) from += 1;
    if (from < s.text.length) shown.unshift({ text: s.text.slice(from), escaped: false });
    break;
  }
  return shown;
}
