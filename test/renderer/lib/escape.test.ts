/** The UI's escaping of untrusted text: every character that could hide or disguise what a call does is shown as an escape. */
import { describe, expect, test } from 'vitest';
import { cutSegments, escapeCodePoint, escapeText, hasInvisible, isInvisible, visibleText } from '../../../renderer/src/lib/escape.js';

const escapesOf = (s: string): string[] => escapeText(s).filter((x) => x.escaped).map((x) => x.text);
const range = (lo: number, hi: number): number[] => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);

describe('escapeText', () => {
  test('plain text, accents, CJK and a plain emoji pass as they are', () => {
    for (const s of ['hello world', 'café déjà vu', '日本語のテキスト', 'ok 👍', 'a "quoted" \\ text']) {
      expect(escapeText(s)).toEqual([{ text: s, escaped: false }]);
    }
    expect(escapeText('')).toEqual([]);
  });

  test.each([
    ['LRE', 0x202a, '\\u202A'],
    ['RLE', 0x202b, '\\u202B'],
    ['PDF', 0x202c, '\\u202C'],
    ['LRO', 0x202d, '\\u202D'],
    ['RLO', 0x202e, '\\u202E'],
    ['LRI', 0x2066, '\\u2066'],
    ['RLI', 0x2067, '\\u2067'],
    ['FSI', 0x2068, '\\u2068'],
    ['PDI', 0x2069, '\\u2069'],
    ['LRM', 0x200e, '\\u200E'],
    ['RLM', 0x200f, '\\u200F'],
    ['ALM', 0x061c, '\\u061C'],
  ])('bidi control %s is shown as %s', (_name, cp, shown) => {
    const s = `rm -rf ${String.fromCodePoint(cp)}/tmp`;
    expect(escapeText(s)).toEqual([
      { text: 'rm -rf ', escaped: false },
      { text: shown, escaped: true },
      { text: '/tmp', escaped: false },
    ]);
  });

  test.each([
    ['zero-width space', 0x200b, '\\u200B'],
    ['zero-width non-joiner', 0x200c, '\\u200C'],
    ['zero-width joiner', 0x200d, '\\u200D'],
    ['word joiner', 0x2060, '\\u2060'],
    ['zero-width no-break space (BOM)', 0xfeff, '\\uFEFF'],
  ])('%s is shown as %s', (_name, cp, shown) => {
    expect(escapesOf(`a${String.fromCodePoint(cp)}b`)).toEqual([shown]);
  });

  test('every tag character (U+E0000–U+E007F), a surrogate pair in UTF-16, is one escape', () => {
    for (const cp of range(0xe0000, 0xe007f)) {
      const ch = String.fromCodePoint(cp);
      expect(ch.length).toBe(2);
      const segs = escapeText(`x${ch}y`);
      expect(segs).toEqual([
        { text: 'x', escaped: false },
        { text: `\\u{${cp.toString(16).toUpperCase()}}`, escaped: true },
        { text: 'y', escaped: false },
      ]);
    }
  });

  test('a hidden instruction in tag characters is spelled out, one escape per character', () => {
    const hidden = [...'ignore'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
    const segs = escapeText(`hello${hidden}`);
    expect(segs[0]).toEqual({ text: 'hello', escaped: false });
    expect(segs.slice(1).map((s) => s.text)).toEqual(['\\u{E0069}', '\\u{E0067}', '\\u{E006E}', '\\u{E006F}', '\\u{E0072}', '\\u{E0065}']);
    expect(segs.slice(1).every((s) => s.escaped)).toBe(true);
  });

  test('every C0 control, DEL and every C1 control is escaped as \\xNN', () => {
    for (const cp of [...range(0x00, 0x1f), 0x7f, ...range(0x80, 0x9f)]) {
      if (cp === 0x1b) continue; // ESC: below, with the sequences it starts
      expect(escapesOf(`a${String.fromCodePoint(cp)}b`), `U+${cp.toString(16)}`).toEqual([`\\x${cp.toString(16).padStart(2, '0')}`]);
    }
  });

  test('ANSI CSI sequences are one escape each, never raw', () => {
    expect(escapeText('\x1b[31mred\x1b[0m')).toEqual([
      { text: '\\x1b[31m', escaped: true },
      { text: 'red', escaped: false },
      { text: '\\x1b[0m', escaped: true },
    ]);
    expect(escapesOf('\x1b[1;32;40mx')).toEqual(['\\x1b[1;32;40m']);
    expect(escapesOf('\x1b[2J\x1b[H')).toEqual(['\\x1b[2J', '\\x1b[H']);
    expect(escapesOf('\x1b[?25l')).toEqual(['\\x1b[?25l']);
  });

  test('an ESC that starts no CSI sequence is escaped alone; what follows is ordinary text', () => {
    expect(escapeText('\x1b]0;title\x07')).toEqual([
      { text: '\\x1b', escaped: true },
      { text: ']0;title', escaped: false },
      { text: '\\x07', escaped: true },
    ]);
    expect(escapesOf('end\x1b')).toEqual(['\\x1b']);
  });

  test('line separators, soft hyphen, odd spaces, fillers and variation selectors are escaped; emoji presentation selectors are not', () => {
    for (const cp of [0x2028, 0x2029, 0x00ad, 0x00a0, 0x2003, 0x3000, 0x3164, 0x115f, 0xfe00, 0xe0100, 0x180e, 0x2061, 0xfff9]) {
      expect(isInvisible(cp), `U+${cp.toString(16)}`).toBe(true);
    }
    expect(escapeText('❤\ufe0f')).toEqual([{ text: '❤\ufe0f', escaped: false }]);
  });

  test('a surrogate without its pair is escaped, not passed on', () => {
    expect(escapesOf('a\ud800b')).toEqual(['\\uD800']);
    expect(escapesOf('a\udc41b')).toEqual(['\\uDC41']);
    expect(escapesOf('\udb40')).toEqual(['\\uDB40']);
  });

  test('JSON mode: quotes and backslashes as JSON writes them, common controls by their short escapes', () => {
    expect(visibleText('say "hi"\\n', { json: true })).toBe('say \\"hi\\"\\\\n');
    expect(escapesOf('a\nb')).toEqual(['\\x0a']);
    // line breaks and tabs are written as JSON writes them, and not flagged; \b and \f are
    expect(escapeText('a\nb\tc\r', { json: true })).toEqual([{ text: 'a\\nb\\tc\\r', escaped: false }]);
    expect(escapeText('a\bb\fc', { json: true }).filter((s) => s.escaped).map((s) => s.text)).toEqual(['\\b', '\\f']);
    // an escape and the literal text of one stay apart: the literal backslash is doubled
    expect(escapeText('\\u202E', { json: true })).toEqual([{ text: '\\\\u202E', escaped: false }]);
  });

  test('allow leaves the named characters raw', () => {
    expect(escapeText('a\tb', { allow: '\t' })).toEqual([{ text: 'a\tb', escaped: false }]);
    expect(escapesOf('a\tb\u202e')).toEqual(['\\x09', '\\u202E']);
  });
});

describe('helpers', () => {
  test('escapeCodePoint picks the shortest clear form', () => {
    expect(escapeCodePoint(0x1b)).toBe('\\x1b');
    expect(escapeCodePoint(0x9b)).toBe('\\x9b');
    expect(escapeCodePoint(0x202e)).toBe('\\u202E');
    expect(escapeCodePoint(0xe0041)).toBe('\\u{E0041}');
    expect(escapeCodePoint(0x0a, true)).toBe('\\n');
  });

  test('visibleText and hasInvisible', () => {
    expect(visibleText('a\u202eb')).toBe('a\\u202Eb');
    expect(hasInvisible('plain')).toBe(false);
    expect(hasInvisible('pl\u200bain')).toBe(true);
  });

  test('cutSegments never splits an escape or a surrogate pair and counts what it hid', () => {
    const segs = escapeText('abc\u202edef');
    expect(cutSegments(segs, 4)).toEqual({ shown: [{ text: 'abc', escaped: false }, { text: '\\u202E', escaped: true }], hidden: 3 });
    expect(cutSegments(escapeText('a😀b'), 2)).toEqual({ shown: [{ text: 'a', escaped: false }], hidden: 3 });
    expect(cutSegments(segs, 100).hidden).toBe(0);
  });
});
