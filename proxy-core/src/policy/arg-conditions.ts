/**
 * Conditions on a call's named arguments, for rules finer than a tool: a path under a folder, a string glob,
 * an exact value, a number in a range. Pure but for one thing: a path is judged as the file it really is
 * (absolute, resolved one component at a time as the kernel does, the platform's case rules: path-resolve.ts),
 * because that is what the server will open, not the text the model wrote. A path with two readings (a `..`
 * after a symlink: the kernel's, and a server's that normalises `..` as text) names both.
 *
 * The asymmetry is deliberate. An allow needs proof: an argument that is missing, of another type, relative,
 * or a list with any element outside, or a path one of whose readings is outside, never matches it. A deny
 * or an ask fails closed: an argument that is present but cannot be checked (wrong type, relative path, a
 * symlink loop) counts as matching, and so does a path either of whose readings matches.
 */
import type { ArgCondition } from '../protocol/api.js';
import { Glob, globMatch } from './glob.js';
import { argPaths, kernelPath, pathApi, type PathEnv, systemPathEnv } from './path-resolve.js';

export type { ArgCondition };

export type MatchEnv = PathEnv;

export const systemMatchEnv: MatchEnv = systemPathEnv;

/** Parse `NAME=VALUE` from the command line: a path glob, a number range, an exact JSON value, or a string glob. */
export function parseArgCondition(spec: string, env: Pick<MatchEnv, 'home' | 'platform'> = systemMatchEnv): ArgCondition {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new Error(`--arg takes NAME=VALUE, got "${spec}"`);
  const arg = spec.slice(0, eq);
  const value = spec.slice(eq + 1);
  if (value === '') throw new Error(`--arg ${arg}= needs a value`);
  const path = pathApi(env.platform);
  if (value === '~' || value.startsWith('~/') || path.isAbsolute(value)) {
    const expanded = value === '~' ? env.home : value.startsWith('~/') ? path.join(env.home, value.slice(2)) : value;
    return { arg, kind: 'path', glob: path.resolve(expanded) };
  }
  const range = /^(-?\d+(?:\.\d+)?)?\.\.(-?\d+(?:\.\d+)?)?$/.exec(value);
  if (range && (range[1] !== undefined || range[2] !== undefined)) {
    const c: ArgCondition = { arg, kind: 'range' };
    if (range[1] !== undefined) c.min = Number(range[1]);
    if (range[2] !== undefined) c.max = Number(range[2]);
    if (c.min !== undefined && c.max !== undefined && c.min > c.max) throw new Error(`--arg ${arg}: ${c.min} is above ${c.max}`);
    return c;
  }
  if (/^(-?\d+(\.\d+)?|true|false|null|".*")$/.test(value)) {
    return { arg, kind: 'exact', value: JSON.parse(value) as string | number | boolean | null };
  }
  return { arg, kind: 'glob', glob: value };
}

export function describeCondition(c: ArgCondition): string {
  if (c.kind === 'path') return `${c.arg} under ${c.glob}`;
  if (c.kind === 'glob') return `${c.arg} like ${c.glob}`;
  if (c.kind === 'exact') return `${c.arg} = ${JSON.stringify(c.value)}`;
  return `${c.arg} in ${c.min ?? ''}..${c.max ?? ''}`;
}

/**
 * Do all of a rule's conditions hold for these arguments? `args` undefined means "not known" (judging a tool
 * rather than a call): an allow with conditions then does not apply, a deny or an ask does.
 */
export function conditionsMatch(
  conditions: readonly ArgCondition[],
  args: Record<string, unknown> | undefined,
  action: 'allow' | 'deny' | 'ask',
  env: MatchEnv = systemMatchEnv,
): boolean {
  if (conditions.length === 0) return true;
  if (args === undefined) return action !== 'allow';
  return conditions.every((c) => conditionMatches(c, args, action, env));
}

function conditionMatches(c: ArgCondition, args: Record<string, unknown>, action: 'allow' | 'deny' | 'ask', env: MatchEnv): boolean {
  if (!Object.hasOwn(args, c.arg)) return false;
  const v = args[c.arg];
  const unsure = action !== 'allow';
  if (c.kind === 'exact') return v === c.value;
  if (c.kind === 'range') {
    if (typeof v !== 'number' || !Number.isFinite(v)) return unsure;
    return (c.min === undefined || v >= c.min) && (c.max === undefined || v <= c.max);
  }
  const values = typeof v === 'string' ? [v] : Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string') ? (v as string[]) : null;
  if (values === null) return unsure;
  const one = (s: string): boolean | null => (c.kind === 'glob' ? globMatch(c.glob, s) : pathUnder(c.glob, s, action, env));
  const results = values.map(one);
  // a path that cannot be judged (relative) is "no" for an allow and "yes" for a deny or an ask
  const judged = results.map((r) => (r === null ? unsure : r));
  return action === 'allow' ? judged.every(Boolean) : judged.some(Boolean);
}

/**
 * The path as the file system will see it: absolute, resolved as the kernel does (path-resolve.ts). Null when
 * it is relative or cannot be resolved. A path with two readings gets the kernel's here; rules judge both.
 */
export function realPath(p: string, env: MatchEnv): string | null {
  return argPaths(p, env)?.[0] ?? null;
}

/**
 * Is `value` (a path argument) inside `glob` (an absolute path glob: `*` within a segment, `**` any depth)? For
 * an allow, every reading of the path must be; for a deny or an ask, one is enough. Null: cannot be judged.
 */
function pathUnder(glob: string, value: string, action: 'allow' | 'deny' | 'ask', env: MatchEnv): boolean | null {
  const path = pathApi(env.platform);
  const readings = argPaths(value, env);
  if (readings === null) return null;
  // the glob's literal folder is judged as a real path too, so a rule on a symlinked folder still holds
  const segments = glob.split(path.sep);
  const firstWild = segments.findIndex((s) => /[*?]/.test(s));
  const literal = firstWild === -1 ? glob : segments.slice(0, firstWild).join(path.sep) || path.sep;
  let realLiteral = literal;
  try {
    realLiteral = path.isAbsolute(literal) ? kernelPath(path.resolve(literal), env) : literal;
  } catch {
    // a rule's folder that cannot be resolved is matched as written
  }
  const pattern = firstWild === -1 ? realLiteral : [realLiteral, ...segments.slice(firstWild)].join(path.sep).replace(/\/\/+/g, '/');
  const fold = env.platform === 'darwin' || env.platform === 'win32';
  const matcher = Glob.path(fold ? pattern.toLowerCase() : pattern, path.sep);
  const test = (real: string) => matcher.test(fold ? real.toLowerCase() : real);
  return action === 'allow' ? readings.every(test) : readings.some(test);
}

