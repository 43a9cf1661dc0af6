/**
 * What the rewriter needs to know about one server entry in a file's text: where the command token and the
 * args list sit, and how a new property is spelled in this format. Each format (JSON/JSONC, TOML, YAML) finds
 * these with its own parser; the edits themselves are format-independent (see ../edit.ts).
 */
import type { CommandShape, DocPath } from '../types.js';

export interface Span {
  start: number;
  end: number;
}

export interface SeqItem extends Span {
  value: unknown;
  /** Where the item begins, including a YAML block `- ` indicator. */
  lead: number;
}

export interface SeqSyntax {
  /** `flow`: `[a, b]` (JSON, TOML, YAML flow); `block`: a YAML `- a` list. */
  style: 'flow' | 'block';
  /** flow: the offset just after `[`. */
  open: number;
  items: SeqItem[];
  /** block: the text before each `-` on its line. */
  indent: string;
  span: Span;
}

export interface PropertySyntax {
  keyStart: number;
  value: Span;
}

export interface EntrySyntax {
  command: PropertySyntax | undefined;
  /** `seq` is null when the value is not a list. */
  args: (PropertySyntax & { seq: SeqSyntax | null }) | undefined;
  /** Spelling of a new args property inserted before the command key: `key assign value separator`. */
  newArgs: { key: string; assign: string; separator: string };
  eol: string;
}

export class ConfigParseError extends Error {
  override name = 'ConfigParseError';
}

/** A change the rewriter refuses to make because it cannot make it safely. */
export class ConfigEditError extends Error {
  override name = 'ConfigEditError';
}

export interface FormatSyntax {
  /** Parse to plain data; throws ConfigParseError with a position. Empty text is an empty document. */
  parse(text: string): unknown;
  /** Locate an entry's command and args; throws ConfigEditError when the layout is one it won't edit. */
  locate(text: string, entryPath: DocPath, shape: CommandShape): EntrySyntax;
  /** A string literal in this format. */
  quote(value: string): string;
}

/** `\r\n` if the text uses it, else `\n`. */
export function eolOf(text: string): string {
  return /\r\n/.test(text) ? '\r\n' : '\n';
}

/** 1-based line and column of an offset, for error messages. */
export function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const col = offset - (before.lastIndexOf('\n') + 1) + 1;
  return `line ${line}, column ${col}`;
}

/** Offset of the start of the line holding `offset`. */
export function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}
