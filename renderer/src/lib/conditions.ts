/**
 * Rules and their argument conditions in words, and the small forms that make them: a draft as typed (all
 * strings) becomes an `ArgCondition`, or the reason it cannot.
 */
import type { ArgCondition, Rule, RuleAction } from '@airlock/proxy-core/protocol/api';

export type ConditionKind = ArgCondition['kind'];

export const CONDITION_KINDS: readonly { kind: ConditionKind; label: string; help: string }[] = [
  { kind: 'path', label: 'path glob', help: 'a file path (made absolute, symlinks resolved) matching a glob, e.g. /home/me/notes/**' },
  { kind: 'glob', label: 'glob', help: 'the text of the argument matching a glob, e.g. *.example.com' },
  { kind: 'exact', label: 'exact', help: 'exactly this value: a number, true, false or null as written, anything else as text' },
  { kind: 'range', label: 'range', help: 'a number from a minimum to a maximum (either may be left empty)' },
];

export const ACTION_WORDS: Readonly<Record<RuleAction, string>> = { allow: 'Allow', deny: 'Deny', ask: 'Ask' };

const quote = (v: unknown): string => JSON.stringify(v) ?? 'null';

/** One condition in words: "path is under /home/me/** (path glob)". */
export function describeCondition(c: ArgCondition): string {
  switch (c.kind) {
    case 'path':
      return `${c.arg} is a path matching ${c.glob}`;
    case 'glob':
      return `${c.arg} matches ${c.glob}`;
    case 'exact':
      return `${c.arg} is exactly ${quote(c.value)}`;
    case 'range':
      if (c.min !== undefined && c.max !== undefined) return `${c.arg} is from ${c.min} to ${c.max}`;
      if (c.min !== undefined) return `${c.arg} is at least ${c.min}`;
      if (c.max !== undefined) return `${c.arg} is at most ${c.max}`;
      return `${c.arg} is any number`;
  }
}

/** What "Always allow…" was narrowed to: argument conditions, only the calls Airlock can undo, or neither. */
export interface AlwaysScope {
  args?: ArgCondition[];
  undoable?: true;
}

/** Which calls a rule's condition on undo picks, as the form offers it. */
export const UNDO_CHOICES: readonly { value: 'any' | 'undoable' | 'irreversible'; label: string; help: string }[] = [
  { value: 'any', label: 'Any call', help: '' },
  { value: 'undoable', label: 'Only calls Airlock can undo', help: 'a file snapshot is taken first, or an inverse is declared' },
  { value: 'irreversible', label: 'Only calls that cannot be undone', help: 'they change something and Airlock has no way back; not for Allow' },
];

/** A rule's condition on undo in words. */
export function describeUndoable(undoable: boolean): string {
  return undoable ? 'it can be undone' : 'it cannot be undone';
}

/** All of a rule's conditions in words, or "any arguments". */
export function describeConditions(args: readonly ArgCondition[] | undefined, undoable?: boolean): string {
  const all = [...(args ?? []).map(describeCondition), ...(undoable === undefined ? [] : [describeUndoable(undoable)])];
  return all.length ? all.join(' and ') : 'any arguments';
}

/** A rule in one line: "Allow write_file on filesystem (from cursor) when path is a path matching /tmp/**". */
export function describeRule(rule: Pick<Rule, 'action' | 'server' | 'tool' | 'client' | 'args' | 'undoable'>): string {
  const who = rule.client ? ` (from ${rule.client})` : '';
  const when = rule.args?.length || rule.undoable !== undefined ? ` when ${describeConditions(rule.args, rule.undoable)}` : '';
  return `${ACTION_WORDS[rule.action]} ${rule.tool} on ${rule.server}${who}${when}`;
}

/** A condition as its form holds it. */
export interface ConditionDraft {
  arg: string;
  kind: ConditionKind;
  /** path and glob */
  glob: string;
  /** exact */
  value: string;
  /** range */
  min: string;
  max: string;
}

export function emptyDraft(kind: ConditionKind = 'path', arg = ''): ConditionDraft {
  return { arg, kind, glob: '', value: '', min: '', max: '' };
}

/** The value an "exact" field means: a JSON number, boolean or null as written, anything else as text. */
export function exactValue(text: string): string | number | boolean | null {
  const t = text.trim();
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t === 'null') return null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(t)) {
    const n = Number(t);
    if (Number.isFinite(n)) return n;
  }
  // a quoted string says it is text ("42" is the text 42)
  if (/^".*"$/s.test(t)) {
    try {
      const s = JSON.parse(t) as unknown;
      if (typeof s === 'string') return s;
    } catch {
      // not valid JSON: taken as written
    }
  }
  return text;
}

function number(text: string, what: string): number | undefined | string {
  const t = text.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : `${what} must be a number`;
}

/** The condition a draft describes, or why it does not describe one. */
export function parseCondition(d: ConditionDraft): ArgCondition | string {
  const arg = d.arg.trim();
  if (!arg) return 'name the argument';
  if (arg.length > 256) return 'an argument name has at most 256 characters';
  switch (d.kind) {
    case 'path':
    case 'glob': {
      const glob = d.glob.trim();
      if (!glob) return `give a ${d.kind === 'path' ? 'path glob' : 'glob'} for ${arg}`;
      if (glob.length > 4096) return 'a glob has at most 4096 characters';
      return { arg, kind: d.kind, glob };
    }
    case 'exact': {
      const value = exactValue(d.value);
      if (typeof value === 'string' && value.length > 4096) return 'an exact value has at most 4096 characters';
      return { arg, kind: 'exact', value };
    }
    case 'range': {
      const min = number(d.min, 'the minimum');
      const max = number(d.max, 'the maximum');
      if (typeof min === 'string') return min;
      if (typeof max === 'string') return max;
      if (min === undefined && max === undefined) return `give a minimum, a maximum or both for ${arg}`;
      if (min !== undefined && max !== undefined && min > max) return 'the minimum is above the maximum';
      return { arg, kind: 'range', ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
    }
  }
}

/** Every draft as a condition, or the first problem (numbered from 1). */
export function parseConditions(drafts: readonly ConditionDraft[]): ArgCondition[] | string {
  const out: ArgCondition[] = [];
  for (const [i, d] of drafts.entries()) {
    const c = parseCondition(d);
    if (typeof c === 'string') return drafts.length > 1 ? `condition ${i + 1}: ${c}` : c;
    out.push(c);
  }
  if (out.length > 16) return 'a rule takes at most 16 conditions';
  return out;
}
