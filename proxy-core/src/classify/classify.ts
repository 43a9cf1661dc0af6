/**
 * The one tool classifier. Pure: a tools/list result, the user's trust setting and what was observed at run
 * time go in; a verdict per tool comes out. Shared by the wrapper (to gate calls), the broker (to show and
 * ticket them) and `airlock inspect` (to report on a catalog).
 *
 * Trust only tightens here: evidence (a contradiction, a withdrawn claim, a malformed entry) can make a tool
 * stricter than its annotations say, never looser. Loosening is the user's job (rules, trusting hints).
 *
 * Text in a definition that is hidden from a person or aimed at the model (hidden-text.ts, the detectors
 * `airlock inspect` uses) is named in the reasons, and is such evidence: a server that hides text in its
 * catalog is not taken at its word that a tool only reads.
 */
import { describeHits, scanJson } from './hidden-text.js';

export type ToolClass =
  | 'read-only-trusted'
  | 'read-only-unchecked'
  | 'mutating'
  | 'destructive'
  | 'unclassifiable';

/** Strictest last: used to compare classes and to pick the stricter of two. */
export const CLASS_ORDER: readonly ToolClass[] = [
  'read-only-trusted',
  'read-only-unchecked',
  'mutating',
  'destructive',
  'unclassifiable',
];

/** C0 and C1 controls, DEL, and the line/paragraph separators: no tool or method name has a reason to hold one. */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export const HINT_NAMES = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

export interface Verdict {
  name: string;
  class: ToolClass;
  /** Human-readable, each one a full sentence fragment a user can act on. */
  reasons: string[];
  /** The annotations exactly as the server declared them (undefined when absent). */
  declared: unknown;
}

export interface ClassifyOptions {
  /** The user chose to believe this server's read-only claims (flag or per-server setting). */
  trustReadOnlyHints: boolean;
  /** Tools whose read-only claim was contradicted by observed behaviour, with the evidence. */
  withdrawn?: ReadonlyMap<string, string>;
}

export interface Catalog {
  verdicts: Map<string, Verdict>;
  /** Problems with the listing itself (entries that cannot even be named). */
  problems: string[];
}

export function isReadOnlyClass(c: ToolClass): boolean {
  return c === 'read-only-trusted' || c === 'read-only-unchecked';
}

/**
 * The `_meta` key of a tool entry the wrapper withheld (wrap/deep-tools.ts): such an entry is unclassifiable.
 * A server that sets it itself only makes its own tool stricter.
 */
export const WITHHELD_META_KEY = 'airlock/withheld';

export function stricter(a: ToolClass, b: ToolClass): ToolClass {
  return CLASS_ORDER.indexOf(a) >= CLASS_ORDER.indexOf(b) ? a : b;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** The hidden-text findings of one entry, as a verdict's reasons name them (none for an entry that is not an object). */
export function hiddenTextFlags(entry: unknown): readonly string[] {
  return isPlainObject(entry) ? describeHits(scanJson(entry)) : [];
}

/**
 * Classify one tool entry, ignoring anything that needs the whole list (duplicates). `flags` are the entry's
 * hidden-text findings when the caller already has them (classify/entry-flags.ts keeps them by the entry's text).
 */
export function classifyTool(entry: unknown, opts: ClassifyOptions, flags: readonly string[] = hiddenTextFlags(entry)): Verdict {
  const verdict = classifyDeclaration(entry, opts);
  if (!isPlainObject(entry)) return verdict;
  if (flags.length === 0) return verdict;
  if (verdict.class === 'read-only-trusted') {
    return {
      ...verdict,
      class: 'read-only-unchecked',
      reasons: ["declares readOnlyHint: true, but its definition carries hidden or instruction-like text, so the claim is not trusted (even though you trust this server's hints)", ...flags],
    };
  }
  return { ...verdict, reasons: [...verdict.reasons, ...flags] };
}

function classifyDeclaration(entry: unknown, opts: ClassifyOptions): Verdict {
  if (!isPlainObject(entry)) {
    return { name: '', class: 'unclassifiable', reasons: [`tool entry is ${typeName(entry)}, not an object`], declared: undefined };
  }
  const name = typeof entry.name === 'string' ? entry.name : '';
  const declared = entry.annotations;
  const unclassifiable = (reason: string): Verdict => ({ name, class: 'unclassifiable', reasons: [reason], declared });

  if (typeof entry.name !== 'string') return unclassifiable(`tool name is ${typeName(entry.name)}, not a string`);
  if (name.length === 0) return unclassifiable('tool name is empty');
  // a server that stops reading a string at NUL (or a terminal that acts on an escape) would see another name
  if (CONTROL_CHARACTERS.test(name)) return unclassifiable(`tool name ${JSON.stringify(name)} contains control characters`);
  const withheld = isPlainObject(entry._meta) ? entry._meta[WITHHELD_META_KEY] : undefined;
  if (withheld !== undefined) return unclassifiable(`Airlock withheld this tool: ${typeof withheld === 'string' ? withheld.slice(0, 200) : 'its definition could not be read'}`);
  if (declared === undefined) {
    return { name, class: 'destructive', reasons: ['no annotations: destructive by spec default'], declared };
  }
  if (!isPlainObject(declared)) return unclassifiable(`annotations is ${typeName(declared)}, not an object`);
  for (const hint of HINT_NAMES) {
    const v = declared[hint];
    if (v !== undefined && typeof v !== 'boolean') return unclassifiable(`${hint} is ${typeName(v)}, not a boolean`);
  }

  const readOnly = declared.readOnlyHint === true;
  // Spec default for destructiveHint is true, but it only has meaning when readOnlyHint is false; an
  // explicit destructiveHint: true next to readOnlyHint: true is the contradiction.
  const destructive = declared.destructiveHint !== false;
  const notReadOnly = (reason: string): Verdict => ({
    name,
    class: destructive ? 'destructive' : 'mutating',
    reasons: [reason, destructive ? destructiveReason(declared) : 'declares destructiveHint: false'],
    declared,
  });

  if (readOnly) {
    if (declared.destructiveHint === true) {
      return {
        name,
        class: 'destructive',
        reasons: ['declares readOnlyHint: true and destructiveHint: true; a contradiction, so the read-only claim is not believed'],
        declared,
      };
    }
    const evidence = opts.withdrawn?.get(name);
    if (evidence !== undefined) return notReadOnly(`read-only claim withdrawn: ${evidence}`);
    if (opts.trustReadOnlyHints) {
      return { name, class: 'read-only-trusted', reasons: ['declares readOnlyHint: true; trusted by your setting for this server'], declared };
    }
    return {
      name,
      class: 'read-only-unchecked',
      reasons: ['declares readOnlyHint: true; Airlock cannot check the claim, so it asks (trust is opt-in)'],
      declared,
    };
  }
  return notReadOnly(declared.readOnlyHint === false ? 'declares readOnlyHint: false' : 'readOnlyHint not declared: false by spec default');
}

function destructiveReason(declared: Record<string, unknown>): string {
  return declared.destructiveHint === true ? 'declares destructiveHint: true' : 'destructiveHint not declared: true by spec default';
}

/** Classify a whole tools/list result (all pages joined); `classifyOne` classifies one entry (classifyTool unless given). */
export function classifyTools(tools: unknown, opts: ClassifyOptions, classifyOne: (entry: unknown, index: number) => Verdict = (entry) => classifyTool(entry, opts)): Catalog {
  const verdicts = new Map<string, Verdict>();
  const problems: string[] = [];
  if (!Array.isArray(tools)) {
    problems.push(`tools/list result has no tools array (got ${typeName(tools)})`);
    return { verdicts, problems };
  }
  const counts = new Map<string, number>();
  for (const entry of tools) {
    if (isPlainObject(entry) && typeof entry.name === 'string') counts.set(entry.name, (counts.get(entry.name) ?? 0) + 1);
  }
  tools.forEach((entry, index) => {
    const verdict = classifyOne(entry, index);
    if (!isPlainObject(entry) || typeof entry.name !== 'string' || entry.name === '') {
      problems.push(`tool #${index}: ${verdict.reasons[0]}`);
      if (!isPlainObject(entry) || typeof entry.name !== 'string') return;
    }
    const count = counts.get(verdict.name) ?? 0;
    if (count > 1) {
      verdicts.set(verdict.name, {
        name: verdict.name,
        class: 'unclassifiable',
        reasons: [`${count} tools share the name "${verdict.name}"; Airlock cannot tell which one a call reaches`],
        declared: verdict.declared,
      });
      return;
    }
    verdicts.set(verdict.name, verdict);
  });
  return { verdicts, problems };
}

/** The verdict for a call: a tool the listing never showed is unclassifiable. */
export function verdictFor(catalog: Catalog, name: string): Verdict {
  return (
    catalog.verdicts.get(name) ?? {
      name,
      class: 'unclassifiable',
      reasons: [`tool "${name}" was not in the server's tools/list`],
      declared: undefined,
    }
  );
}
