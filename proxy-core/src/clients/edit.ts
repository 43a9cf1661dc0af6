/**
 * Protect and unprotect as minimal text edits. Protect replaces the command token and inserts one run of
 * items at the front of the args list (or one args property, when there was none); unprotect removes exactly
 * that run and puts the original command token back. Every result is re-parsed and compared with the
 * expected data before it is accepted, so an edit either does precisely what it should or is refused.
 */
import { getAt, isRecord, sameData, setAt } from './docpath.js';
import type { FormatSyntax } from './formats/index.js';
import { ConfigEditError, type EntrySyntax, type SeqSyntax } from './formats/syntax.js';
import type { Launcher } from './launcher.js';
import type { ClientId, CommandShape, DocPath, StdioCommand } from './types.js';
import { unwrap, wrappedByHand, wrapPrefix } from './wrapped.js';

interface TextEdit {
  start: number;
  end: number;
  text: string;
}

/** Apply non-overlapping edits in one pass (thousands of them in a big file must not copy it each time). */
function apply(text: string, edits: TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - b.end);
  const parts: string[] = [];
  let at = 0;
  for (const e of sorted) {
    if (e.start < at) throw new ConfigEditError('refusing overlapping edits');
    parts.push(text.slice(at, e.start), e.text);
    at = e.end;
  }
  parts.push(text.slice(at));
  return parts.join('');
}

/** Args as the strings a client passes on; YAML and TOML may hold numbers or booleans there. */
export function argStrings(args: unknown): string[] | null {
  if (args === undefined) return [];
  if (!Array.isArray(args)) return null;
  const out: string[] = [];
  for (const a of args) {
    if (typeof a === 'string') out.push(a);
    else if (typeof a === 'number' || typeof a === 'boolean') out.push(String(a));
    else return null;
  }
  return out;
}

/** The stdio command of an entry object, or a reason why it has none we can edit. */
export function readCommand(obj: unknown, shape: CommandShape): StdioCommand | string {
  const base = getAt(obj, shape.base);
  if (!isRecord(base)) return 'the entry is not an object';
  if (shape.combined) {
    const all = argStrings(base[shape.commandKey]);
    const [program, ...rest] = all ?? [];
    if (!Array.isArray(base[shape.commandKey]) || program === undefined || program.trim() === '') return `"${shape.commandKey}" is not a list of strings starting with the program`;
    return { command: program, args: rest };
  }
  const command = base[shape.commandKey];
  if (typeof command !== 'string' || command.trim() === '') return `"${shape.commandKey}" is not a string`;
  const args = argStrings(base[shape.argsKey]);
  if (args === null) return `"${shape.argsKey}" is not a list of strings`;
  return { command, args };
}

interface Target {
  syntax: FormatSyntax;
  entryPath: DocPath;
  shape: CommandShape;
}

function located(text: string, t: Target, parsed?: unknown): { doc: unknown; obj: DocPath; syn: EntrySyntax; cmd: StdioCommand } {
  const doc = parsed === undefined ? t.syntax.parse(text) : parsed;
  const cmd = readCommand(getAt(doc, t.entryPath), t.shape);
  if (typeof cmd === 'string') throw new ConfigEditError(cmd);
  const syn = t.syntax.locate(text, t.entryPath, t.shape);
  if (!syn.command) throw new ConfigEditError(`"${t.shape.commandKey}" not found`);
  if (syn.args && !syn.args.seq) throw new ConfigEditError(`"${t.shape.argsKey}" is not a list`);
  return { doc, obj: [...t.entryPath, ...t.shape.base], syn, cmd };
}

/** Try the raw-token edit first (byte-exact round trips), then one with freshly quoted strings. */
function firstVerified(t: Target, text: string, expected: unknown, attempts: (() => TextEdit[])[]): string {
  let lastProblem = 'the result did not parse back to the expected data';
  for (const make of attempts) {
    const out = apply(text, make());
    try {
      if (sameData(t.syntax.parse(out), expected)) return out;
    } catch (err) {
      lastProblem = `the result would not parse (${err instanceof Error ? err.message : String(err)})`;
    }
  }
  throw new ConfigEditError(`refusing an unsafe edit: ${lastProblem}`);
}

function rawSlice(text: string, s: { start: number; end: number }): string {
  return text.slice(s.start, s.end);
}

/** A raw token can move only if it is one line (YAML block scalars and multi-line strings cannot). */
function movable(raw: string): boolean {
  return !/[\r\n]/.test(raw);
}

type ProtectTarget = Target & { launcher: Launcher; name: string; client: ClientId; home?: string; whole?: boolean };

/** What wrapping one entry takes: the change to the data, and the text edits to try (raw token first). */
export interface ProtectPlan {
  expect(doc: unknown): void;
  attempts: (() => TextEdit[])[];
}

/** Plan the wrap of one entry in `text` (parsed as `doc`); null when it already is behind Airlock. */
export function planProtect(text: string, doc: unknown, t: ProtectTarget): ProtectPlan | null {
  const { obj, syn, cmd } = located(text, t, doc);
  // already behind Airlock: written by protect, or by hand (never wrap a wrapper); `whole`: the caller knows its
  // launcher is not Airlock's, so it is a server like any other
  if (!t.whole && (unwrap(cmd) || wrappedByHand(cmd))) return null;
  const prefix = wrapPrefix(t.launcher, t.name, t.client, t.home, cmd.command);
  if (t.shape.combined) return planCombined(doc, t, obj, syn, [t.launcher.command, ...prefix]);
  const command = syn.command!;
  const originalArgs = getAt(doc, [...obj, t.shape.argsKey]);
  const expect = (expected: unknown) => {
    setAt(expected, [...obj, t.shape.commandKey], t.launcher.command);
    setAt(expected, [...obj, t.shape.argsKey], [...prefix, cmd.command, ...(Array.isArray(originalArgs) ? originalArgs : [])]);
  };

  const attempt = (cmdItem: string) => (): TextEdit[] => {
    const items = [...prefix.map((s) => t.syntax.quote(s)), cmdItem];
    const edits: TextEdit[] = [{ start: command.value.start, end: command.value.end, text: t.syntax.quote(t.launcher.command) }];
    const seq = syn.args?.seq;
    if (!seq) {
      const { key, assign, separator } = syn.newArgs;
      edits.push({ start: command.keyStart, end: command.keyStart, text: `${key}${assign}[${items.join(', ')}]${separator}` });
    } else if (seq.style === 'block') {
      const first = seq.items[0]!;
      edits.push({ start: first.lead, end: first.lead, text: items.map((i) => `- ${i}${syn.eol}${seq.indent}`).join('') });
    } else if (seq.items.length > 0) {
      const first = seq.items[0]!;
      edits.push({ start: first.start, end: first.start, text: items.join(', ') + ', ' });
    } else {
      // An `args = []` right before the command would, once filled, read exactly like the args property protect
      // adds to an entry that had none, and unprotect would delete it: a space after `[` tells the two apart.
      const lead = text.slice(syn.args!.keyStart, command.keyStart) === addedArgs(syn, '') ? ' ' : '';
      edits.push({ start: seq.open, end: seq.open, text: lead + items.join(', ') });
    }
    return edits;
  };
  const raw = rawSlice(text, command.value);
  return { expect, attempts: movable(raw) ? [attempt(raw), attempt(t.syntax.quote(cmd.command))] : [attempt(t.syntax.quote(cmd.command))] };
}

/** opencode's one `command` list: the launcher and wrap's options go in front of its first item. */
function planCombined(doc: unknown, t: ProtectTarget, obj: DocPath, syn: EntrySyntax, words: string[]): ProtectPlan {
  const seq = syn.args?.seq;
  const first = seq?.items[0];
  if (!seq || !first) throw new ConfigEditError(`"${t.shape.commandKey}" is an empty list`);
  const key = [...obj, t.shape.commandKey];
  const original = getAt(doc, key) as unknown[];
  return {
    expect: (expected) => setAt(expected, key, [...words, ...original]),
    attempts: [() => [{ start: first.start, end: first.start, text: words.map((w) => t.syntax.quote(w)).join(', ') + ', ' }]],
  };
}

/** Unwrap opencode's one `command` list: drop what protect put in front of the server's program. */
function unprotectCombined(text: string, t: Target, doc: unknown, obj: DocPath, syn: EntrySyntax, separator: number): string {
  const seq = syn.args?.seq;
  // the list holds the launcher first, so the server's program sits two past the last of wrap's words in args
  const program = seq?.items[separator + 2];
  if (!seq || !program) throw new ConfigEditError('the wrapped command is not where protect puts it');
  const key = [...obj, t.shape.commandKey];
  const expected = structuredClone(doc);
  setAt(expected, key, (getAt(doc, key) as unknown[]).slice(separator + 2));
  return firstVerified(t, text, expected, [() => [{ start: seq.items[0]!.start, end: program.start, text: '' }]]);
}

/** The text with the entry wrapped by `launcher`; unchanged if it already is. */
export function protectText(text: string, t: ProtectTarget): string {
  const doc = t.syntax.parse(text);
  const plan = planProtect(text, doc, t);
  if (!plan) return text;
  const expected = structuredClone(doc);
  plan.expect(expected);
  return firstVerified(t, text, expected, plan.attempts);
}

/**
 * Wrap many entries of one file in one pass: one parse, every entry's edits applied together, one parse to
 * check the result (a config with thousands of servers costs one rewrite, not one per server). Refused as a
 * whole when the combined result is not exactly what each entry's wrap should give.
 */
export function protectAllText(text: string, syntax: FormatSyntax, targets: Omit<ProtectTarget, 'syntax'>[]): string {
  const doc = syntax.parse(text);
  const plans = targets.map((t) => planProtect(text, doc, { ...t, syntax })).filter((p): p is ProtectPlan => p !== null);
  if (plans.length === 0) return text;
  const expected = structuredClone(doc);
  for (const p of plans) p.expect(expected);
  const tries = [0, 1].map((i) => () => plans.flatMap((p) => (p.attempts[i] ?? p.attempts[p.attempts.length - 1]!)()));
  return firstVerified({ syntax, entryPath: [], shape: targets[0]!.shape }, text, expected, tries);
}

/** The text of the args property protect inserts before the command key of an entry that had none. */
function addedArgs(syn: EntrySyntax, items: string): string {
  const { key, assign, separator } = syn.newArgs;
  return `${key}${assign}[${items}]${separator}`;
}

/** True when the args property is exactly what protect adds to an entry that had none. */
function addedByProtect(text: string, syn: EntrySyntax, seq: SeqSyntax, separator: number): boolean {
  const args = syn.args!;
  const command = syn.command!;
  if (seq.style !== 'flow' || seq.items.length !== separator + 2 || args.keyStart > command.keyStart) return false;
  const items = seq.items.map((i) => rawSlice(text, i)).join(', ');
  return text.slice(args.keyStart, command.keyStart) === addedArgs(syn, items);
}

/** The text with the entry's original command restored; unchanged if it is not wrapped. */
export function unprotectText(text: string, t: Target): string {
  const { doc, obj, syn, cmd } = located(text, t);
  const un = unwrap(cmd);
  if (!un) return text;
  if (t.shape.combined) return unprotectCombined(text, t, doc, obj, syn, un.separator);
  const seq = syn.args?.seq;
  const d = un.separator;
  const origItem = seq?.items[d + 1];
  if (!seq || !origItem) throw new ConfigEditError('the wrapped args are not where protect puts them');
  const command = syn.command!;
  const byUs = addedByProtect(text, syn, seq, d);
  const args = getAt(doc, [...obj, t.shape.argsKey]) as unknown[];
  const expected = structuredClone(doc);
  setAt(expected, [...obj, t.shape.commandKey], args[d + 1]);
  setAt(expected, [...obj, t.shape.argsKey], byUs ? undefined : args.slice(d + 2));
  if (typeof args[d + 1] !== 'string') setAt(expected, [...obj, t.shape.commandKey], un.original.command);

  const attempt = (cmdText: string) => (): TextEdit[] => {
    const edits: TextEdit[] = [{ start: command.value.start, end: command.value.end, text: cmdText }];
    const first = seq.items[0]!;
    const firstOriginal = seq.items[d + 2];
    if (byUs) edits.push({ start: syn.args!.keyStart, end: command.keyStart, text: '' });
    else if (firstOriginal) edits.push({ start: first.lead, end: firstOriginal.lead, text: '' });
    else if (seq.style === 'flow') {
      // `[ items]`: what protect wrote into an `args = []` that stands right before the command (see protectText)
      const spaced = text.slice(seq.open, first.start) === ' ' && text.slice(origItem.end, seq.span.end) === ']';
      edits.push({ start: spaced ? seq.open : first.start, end: origItem.end, text: '' });
    }
    // A block list cannot be empty: an emptied one becomes `[]`.
    else edits.push({ start: seq.span.start, end: seq.span.end, text: '[]' });
    return edits;
  };
  const raw = rawSlice(text, origItem);
  const quoted = t.syntax.quote(un.original.command);
  const attempts = movable(raw) ? [attempt(raw), attempt(quoted)] : [attempt(quoted)];
  return firstVerified(t, text, expected, attempts);
}
