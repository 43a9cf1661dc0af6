/**
 * Declared inverses (the seed's `--undo`): "this tool is undone by calling that one". Pure and dependency-free,
 * so the wrapper (which parses `airlock wrap --undo`), the broker (which checks and stores declarations) and the
 * CLI share one reading of the text form:
 *
 *   TOOL=INVERSE[:result][:ARG=PATH[,ARG=PATH]...]
 *
 * The inverse is called with the original call's arguments, or with its result's `structuredContent` when
 * `:result` is given. A mapping builds the inverse's arguments instead: each ARG gets the value at PATH in that
 * source, PATH being dotted keys; a key applied to a list is applied to each of its elements, a number indexes
 * it. The memory server's `create_entities` returns the entities it created (not those that already existed),
 * and `delete_entities` takes their names, so its inverse is
 *
 *   create_entities=delete_entities:result:entityNames=entities.name
 */

/** A declared inverse, as the API and the database keep it. */
export interface InverseDecl {
  tool: string;
  inverse: string;
  /** What the inverse is called with: the call's arguments, or its result's structuredContent. */
  from: 'args' | 'result';
  /** Arguments of the inverse built from paths in the source; absent: the source itself is the arguments. */
  map?: Record<string, string>;
}

export class UndoSpecError extends Error {
  override name = 'UndoSpecError';
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const MAX_NAME = 256;
const MAX_MAP = 32;

/** Parse `TOOL=INVERSE[:result][:ARG=PATH,...]`; throws UndoSpecError with what is wrong. */
export function parseUndoSpec(text: string): InverseDecl {
  const at = text.indexOf('=');
  if (at <= 0) throw new UndoSpecError(`"${text}" is not TOOL=INVERSE[:result][:ARG=PATH,...]`);
  const tool = text.slice(0, at);
  const [inverse = '', ...options] = text.slice(at + 1).split(':');
  const decl: InverseDecl = { tool, inverse, from: 'args' };
  let i = 0;
  if (options[i] === 'result') {
    decl.from = 'result';
    i++;
  }
  if (i < options.length) {
    decl.map = parseMap(options.slice(i).join(':'), text);
    i = options.length;
  }
  checkDecl(decl);
  return decl;
}

function parseMap(text: string, whole: string): Record<string, string> {
  const map: Record<string, string> = {};
  const pairs = text.split(',');
  if (pairs.length > MAX_MAP) throw new UndoSpecError(`"${whole}": at most ${MAX_MAP} mapped arguments`);
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || eq === pair.length - 1) throw new UndoSpecError(`"${whole}": "${pair}" is not ARG=PATH (after the inverse: "result", then ARG=PATH,...)`);
    const arg = pair.slice(0, eq);
    const path = pair.slice(eq + 1);
    if (Object.hasOwn(map, arg)) throw new UndoSpecError(`"${whole}": argument ${arg} is mapped twice`);
    map[arg] = path;
  }
  return map;
}

/** Whether one declaration can be meant (names, the mapping); throws UndoSpecError. */
export function checkDecl(d: InverseDecl): void {
  for (const [what, name] of [['tool', d.tool], ['inverse', d.inverse]] as const) {
    if (typeof name !== 'string' || name === '') throw new UndoSpecError(`the ${what} name is missing`);
    if (name.length > MAX_NAME || CONTROL.test(name)) throw new UndoSpecError(`the ${what} name ${JSON.stringify(name.slice(0, 80))} is not a tool name`);
  }
  if (d.tool === d.inverse) throw new UndoSpecError(`${d.tool} names itself as its own inverse`);
  if (d.from !== 'args' && d.from !== 'result') throw new UndoSpecError('the inverse is called with the call\'s "args" or its "result"');
  if (d.map === undefined) return;
  const entries = Object.entries(d.map);
  if (entries.length === 0 || entries.length > MAX_MAP) throw new UndoSpecError(`a mapping has 1 to ${MAX_MAP} arguments`);
  for (const [arg, path] of entries) {
    if (arg === '' || arg.length > MAX_NAME || CONTROL.test(arg) || /[,=]/.test(arg)) throw new UndoSpecError(`${JSON.stringify(arg)} is not an argument name`);
    if (typeof path !== 'string' || path.length > 1024 || CONTROL.test(path) || /[:=,]/.test(path) || path.split('.').some((s) => s === '')) {
      throw new UndoSpecError(`${JSON.stringify(path)} is not a path (dotted keys: entities.name)`);
    }
  }
}

/**
 * Problems with a set of declarations for one server: a tool declared twice, and (when the server's tools are
 * known) a tool or an inverse the server does not list. Empty when all can stand.
 */
export function declarationProblems(decls: readonly InverseDecl[], listed?: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const d of decls) {
    if (seen.has(d.tool)) problems.push(`${d.tool} has more than one declared inverse`);
    seen.add(d.tool);
    if (listed) {
      if (!listed.has(d.tool)) problems.push(`${d.tool} is not one of the server's tools`);
      if (!listed.has(d.inverse)) problems.push(`${d.inverse} (the inverse of ${d.tool}) is not one of the server's tools`);
    }
  }
  return problems;
}

/** The text form of a declaration (what `--undo` and `airlock inverses set` take). */
export function formatUndoSpec(d: InverseDecl): string {
  const map = d.map ? `:${Object.entries(d.map).map(([a, p]) => `${a}=${p}`).join(',')}` : '';
  return `${d.tool}=${d.inverse}${d.from === 'result' ? ':result' : ''}${map}`;
}

export type InverseArgs = { ok: true; args: Record<string, unknown> } | { ok: false; reason: string };

/**
 * The inverse's arguments for one call: from its arguments or its structuredContent (`source`), mapped when the
 * declaration says so. A path that is missing anywhere (in one element of a list too) is a refusal, not a
 * partial inverse: an undo that quietly leaves part of the change behind is worse than none.
 */
export function inverseArguments(d: InverseDecl, source: unknown): InverseArgs {
  const what = d.from === 'result' ? "the call's structuredContent" : "the call's arguments";
  if (d.map === undefined) {
    if (!isRecord(source)) return { ok: false, reason: `${what} is not an object, so it cannot be the arguments of ${d.inverse}` };
    return { ok: true, args: source };
  }
  const args: Record<string, unknown> = {};
  for (const [arg, path] of Object.entries(d.map)) {
    const value = valueAt(source, path.split('.'));
    if (value === MISSING) return { ok: false, reason: `${what} have no ${path} (for ${arg} of ${d.inverse})` };
    args[arg] = value;
  }
  return { ok: true, args };
}

const MISSING = Symbol('missing');

function valueAt(value: unknown, keys: readonly string[]): unknown {
  let current: unknown = value;
  for (const key of keys) {
    if (Array.isArray(current)) {
      if (/^\d+$/.test(key)) {
        const i = Number(key);
        if (i >= current.length) return MISSING;
        current = current[i];
        continue;
      }
      const out: unknown[] = [];
      for (const element of current) {
        if (!isRecord(element) || !Object.hasOwn(element, key)) return MISSING;
        out.push(element[key]);
      }
      current = out;
    } else if (isRecord(current) && Object.hasOwn(current, key)) {
      current = current[key];
    } else {
      return MISSING;
    }
  }
  return current;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
