/**
 * A JSON value as the lines of its pretty form (two spaces a level, as `JSON.stringify(v, null, 2)` writes
 * it), with every string escaped (escape.ts) and what is too long or too deep folded behind a "Show all"
 * toggle. Pure: which folds are open is passed in as a set of paths, so one component can draw any value.
 */
import { cutSegments, escapeText, lastSegments, markSpaceRuns, type Segment } from './escape.js';

/** `gap`: where a fold hides part of a string, with how much it hides. */
export type TokenKind = 'punct' | 'key' | 'string' | 'number' | 'literal' | 'escape' | 'gap' | 'more' | 'less';

export interface Token {
  kind: TokenKind;
  text: string;
  /** For `more` and `less`: the fold it opens or closes. */
  path?: string;
}

export interface Line {
  depth: number;
  tokens: Token[];
}

export interface JsonViewOptions {
  /** Strings longer than this (UTF-16 units) are cut. */
  maxString?: number;
  /** Objects and arrays this deep (the value itself is 0) are folded. */
  maxDepth?: number;
  /** Entries of one object or array shown before the rest is folded. */
  maxEntries?: number;
  /** Past this many lines, every further object or array is folded. */
  maxLines?: number;
  /** Characters of a folded string's end shown after the fold (its end is where padding hides things). */
  tail?: number;
  /** Every fold open ("Show everything"). */
  openAll?: boolean;
}

export const JSON_VIEW_DEFAULTS: Required<JsonViewOptions> = { maxString: 300, maxDepth: 6, maxEntries: 100, maxLines: 1500, tail: 80, openAll: false };

/** The label of a fold's toggle. */
export function showAllLabel(chars: number): string {
  return `Show all (${chars.toLocaleString('en-US')} chars)`;
}

/** A JSON Pointer segment (RFC 6901), so two keys never share a path. */
const pointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

const jsonLength = (v: unknown): number => JSON.stringify(v)?.length ?? 0;

const visibleLength = (segments: readonly Segment[]): number => segments.reduce((n, s) => n + s.text.length, 0);

/** How many folds the lines leave closed: what the person has not been shown yet. */
export function foldedCount(lines: readonly Line[]): number {
  let n = 0;
  for (const l of lines) for (const t of l.tokens) if (t.kind === 'more') n++;
  return n;
}

/** The words of a fold inside a string. */
export function gapText(hidden: number): string {
  return ` … ${hidden.toLocaleString('en-US')} chars folded here … `;
}

function segmentTokens(segments: readonly Segment[], kind: 'key' | 'string'): Token[] {
  return segments.map((s) => ({ kind: s.escaped ? 'escape' : kind, text: s.text }));
}

/** The lines of `value`; `expanded` holds the paths of the folds the person opened. */
export function jsonLines(value: unknown, expanded: ReadonlySet<string> = new Set(), options: JsonViewOptions = {}): Line[] {
  const o = { ...JSON_VIEW_DEFAULTS, ...options };
  const lines: Line[] = [];
  const isOpen = (path: string): boolean => o.openAll || expanded.has(path);

  const stringTokens = (s: string, path: string, kind: 'key' | 'string'): { tokens: Token[]; more: Token | null } => {
    const segments = markSpaceRuns(escapeText(s, { json: true }));
    const length = visibleLength(segments);
    const open = kind === 'key' || isOpen(path) || length <= o.maxString;
    if (open) {
      const tokens = [{ kind: 'punct', text: '"' } as Token, ...segmentTokens(segments, kind), { kind: 'punct', text: '"' } as Token];
      const less = kind === 'string' && !o.openAll && length > o.maxString ? ({ kind: 'less', text: 'Show less', path } as Token) : null;
      return { tokens, more: less };
    }
    // the start and the end stay in view, and the fold says how much lies between them
    const tail = lastSegments(segments, Math.min(o.tail, Math.floor(o.maxString / 3)));
    const { shown } = cutSegments(segments, o.maxString - visibleLength(tail));
    const hidden = length - visibleLength(shown) - visibleLength(tail);
    return {
      tokens: [{ kind: 'punct', text: '"' }, ...segmentTokens(shown, 'string'), { kind: 'gap', text: gapText(hidden) }, ...segmentTokens(tail, 'string'), { kind: 'punct', text: '"' }],
      more: { kind: 'more', text: showAllLabel(s.length), path },
    };
  };

  // `inOpen`: below a fold the person opened, where only long strings stay cut ("Show all" shows all)
  const emit = (v: unknown, path: string, depth: number, prefix: Token[], suffix: string, inOpen = false): void => {
    const end = suffix ? [{ kind: 'punct', text: suffix } as Token] : [];
    if (v === null || v === undefined || typeof v === 'boolean') {
      lines.push({ depth, tokens: [...prefix, { kind: 'literal', text: String(v ?? null) }, ...end] });
      return;
    }
    if (typeof v === 'number' || typeof v === 'bigint') {
      lines.push({ depth, tokens: [...prefix, { kind: 'number', text: typeof v === 'number' ? (JSON.stringify(v) ?? 'null') : String(v) }, ...end] });
      return;
    }
    if (typeof v === 'string') {
      const { tokens, more } = stringTokens(v, path, 'string');
      lines.push({ depth, tokens: [...prefix, ...tokens, ...end, ...(more ? [{ kind: 'punct', text: ' ' } as Token, more] : [])] });
      return;
    }
    if (typeof v !== 'object') {
      lines.push({ depth, tokens: [...prefix, { kind: 'literal', text: 'null' }, ...end] });
      return;
    }
    const isArray = Array.isArray(v);
    const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
    const entries: [string | null, unknown][] = isArray ? (v as unknown[]).map((x) => [null, x]) : Object.entries(v as Record<string, unknown>);
    if (entries.length === 0) {
      lines.push({ depth, tokens: [...prefix, { kind: 'punct', text: open + close }, ...end] });
      return;
    }
    const opened = isOpen(path);
    const wouldFold = !inOpen && (depth >= o.maxDepth || lines.length >= o.maxLines);
    if (wouldFold && !opened) {
      const count = `${entries.length} ${isArray ? (entries.length === 1 ? 'item' : 'items') : entries.length === 1 ? 'key' : 'keys'}`;
      lines.push({
        depth,
        tokens: [...prefix, { kind: 'punct', text: `${open} … ${count} ` }, { kind: 'more', text: showAllLabel(jsonLength(v)), path }, { kind: 'punct', text: ` ${close}` }, ...end],
      });
      return;
    }
    const limit = opened || inOpen ? entries.length : Math.min(entries.length, o.maxEntries);
    const less = opened && !o.openAll && !inOpen && (wouldFold || entries.length > o.maxEntries) ? [{ kind: 'punct', text: ' ' } as Token, { kind: 'less', text: 'Show less', path } as Token] : [];
    lines.push({ depth, tokens: [...prefix, { kind: 'punct', text: open }, ...less] });
    for (let i = 0; i < limit; i++) {
      const [key, child] = entries[i]!;
      const childPath = `${path}/${key === null ? String(i) : pointer(key)}`;
      const childPrefix = key === null ? [] : [...stringTokens(key, childPath, 'key').tokens, { kind: 'punct', text: ': ' } as Token];
      emit(child, childPath, depth + 1, childPrefix, i < entries.length - 1 ? ',' : '', inOpen || (opened && (wouldFold || entries.length > o.maxEntries)));
    }
    if (limit < entries.length) {
      const rest = entries.length - limit;
      lines.push({
        depth: depth + 1,
        tokens: [{ kind: 'punct', text: `… ${rest} more ${isArray ? (rest === 1 ? 'item' : 'items') : rest === 1 ? 'key' : 'keys'} ` }, { kind: 'more', text: showAllLabel(jsonLength(v)), path }],
      });
    }
    lines.push({ depth, tokens: [{ kind: 'punct', text: close }, ...end] });
  };

  emit(value, '', 0, [], '');
  return lines;
}

/** The text the lines show (toggles left out), indented two spaces a level. */
export function linesToText(lines: readonly Line[]): string {
  return lines
    .map((l) => '  '.repeat(l.depth) + l.tokens.filter((t) => t.kind !== 'more' && t.kind !== 'less').map((t) => (t.kind === 'gap' ? '…' : t.text)).join(''))
    .map((l) => l.replace(/ +$/, ''))
    .join('\n');
}

/** Parse JSON text, or say it is not JSON (a journal entry's arguments cut at their limit are not). */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** Bytes of a string as UTF-8 (what `argsBytes` counts). */
export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}
