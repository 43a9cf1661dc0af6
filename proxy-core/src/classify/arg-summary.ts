/**
 * A call's arguments in a few words, for a list of calls: the path, the command, the recipient. Which arguments
 * say most comes from what Airlock knows of the tool: the arguments that name the files it changes (its file-tool
 * declaration, built in or the person's), then the string properties its input schema lists (required ones
 * first), then names that usually say what a call is about, then the first string the call itself holds. Pure:
 * the broker computes it for its journal pages, so the CLI and the UI show the same words.
 *
 * The arguments come from an agent: control characters, bidi overrides and zero-width characters are spelled
 * out (hidden-text.ts printable) so the summary cannot rearrange or hide what a row says, line breaks become
 * spaces, and it is cut at a length a row holds.
 */
import { printable } from './hidden-text.js';

export interface ArgHints {
  /** Arguments naming the paths a file tool changes, in order (move: source, destination). */
  paths?: readonly string[];
  /** The tool's input schema as listed (any shape: only an object's string properties are read). */
  schema?: unknown;
}

/** How long a summary may be, in characters. */
export const ARG_SUMMARY_MAX = 160;

/** Names that usually say what a call is about, for a tool Airlock knows nothing of. */
const TELLING = ['path', 'file', 'filename', 'filepath', 'source', 'destination', 'command', 'cmd', 'script', 'to', 'recipient', 'recipients', 'email', 'channel', 'url', 'uri', 'query', 'q', 'name', 'title', 'subject', 'repo', 'branch', 'id'];

/** Argument names, in the order their values are most telling, from the hints. */
export function summaryKeys(hints: ArgHints): string[] {
  const keys: string[] = [];
  const add = (k: unknown) => {
    if (typeof k === 'string' && k !== '' && !keys.includes(k)) keys.push(k);
  };
  for (const p of hints.paths ?? []) add(p);
  const schema = hints.schema;
  if (isRecord(schema) && isRecord(schema.properties)) {
    const props = schema.properties;
    const isString = (k: string) => {
      const p = props[k];
      return isRecord(p) && (p.type === 'string' || (Array.isArray(p.type) && p.type.includes('string')));
    };
    const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string' && Object.hasOwn(props, k)) : [];
    for (const k of required) if (isString(k)) add(k);
    for (const k of Object.keys(props)) if (isString(k)) add(k);
  }
  return keys;
}

/**
 * The summary of a call's arguments (JSON text as journaled, possibly cut at its limit), or '' when it holds no
 * string worth showing. Path arguments read "a → b"; otherwise up to two values, "first · second".
 */
export function argSummary(argumentsText: string, hints: ArgHints = {}, max = ARG_SUMMARY_MAX): string {
  const values = readValues(argumentsText);
  if (values === null) return '';
  const pathKeys = (hints.paths ?? []).filter((k) => typeof values.get(k) === 'string' && values.get(k) !== '');
  if (pathKeys.length) return printable(pathKeys.map((k) => values.get(k)!.trim()).join(' → '), max);
  const picked: string[] = [];
  const take = (k: string) => {
    const v = values.get(k);
    if (typeof v === 'string' && v.trim() !== '' && !picked.includes(k)) picked.push(k);
  };
  for (const k of summaryKeys(hints)) if (picked.length < 2) take(k);
  if (picked.length === 0) for (const k of TELLING) if (picked.length < 1) take(k);
  if (picked.length === 0) for (const k of values.keys()) if (picked.length < 1) take(k);
  return printable(picked.map((k) => values.get(k)!.trim()).join(' · '), max);
}

/** The call's top-level string arguments by name, in the call's own order; null when it has none to read. */
function readValues(text: string): Map<string, string> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return scanValues(text);
  }
  if (!isRecord(parsed)) return null;
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v === 'string') out.set(k, v);
    else if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) out.set(k, v.join(', '));
  }
  return out;
}

/**
 * Arguments cut at the journal's limit are not JSON any more: the `"name": "value"` pairs still whole at the top
 * of the text are read one by one, and a value cut off is left out rather than shown as if it were whole.
 */
function scanValues(text: string): Map<string, string> | null {
  if (!text.trimStart().startsWith('{')) return null;
  const out = new Map<string, string>();
  const pair = /"((?:[^"\\]|\\.){1,256})"\s*:\s*"((?:[^"\\]|\\.)*)"/g;
  let depth = 0;
  let last = 0;
  for (let m = pair.exec(text); m !== null; m = pair.exec(text)) {
    depth += nesting(text.slice(last, m.index));
    last = m.index + m[0].length;
    // a pair inside a nested object is not one of the call's own arguments
    if (depth !== 1) continue;
    try {
      const k = JSON.parse(`"${m[1]}"`) as string;
      if (!out.has(k)) out.set(k, JSON.parse(`"${m[2]}"`) as string);
    } catch {
      // an escape cut in two: not a value to show
    }
  }
  return out;
}

/** How much deeper the text between two pairs goes (strings in it were pairs, so brackets here are structure). */
function nesting(between: string): number {
  let d = 0;
  for (const ch of between) {
    if (ch === '{' || ch === '[') d++;
    else if (ch === '}' || ch === ']') d--;
  }
  return d;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
