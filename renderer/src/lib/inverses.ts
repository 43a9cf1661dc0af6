/**
 * Declared inverses as the Tools page edits them: the form's fields turned into `inverses.set` params (with
 * the mapping typed as `ARG=PATH, ARG=PATH`), and a declaration in words. Pure; the broker checks again.
 */
import type { ParamsOf } from '@airlock/proxy-core/protocol/api';
import type { DeclaredInverse } from '@airlock/proxy-core/protocol/undo-api';

export interface InverseDraft {
  tool: string;
  inverse: string;
  /** Call the inverse with the call's result (its structuredContent) rather than its arguments. */
  fromResult: boolean;
  /** `ARG=PATH` pairs, separated by commas or new lines; empty: the source itself is the arguments. */
  mapping: string;
}

export function emptyInverseDraft(): InverseDraft {
  return { tool: '', inverse: '', fromResult: false, mapping: '' };
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const MAX_MAP = 32;

/** The mapping text as arguments and paths, or why it is not one; undefined when empty. */
export function parseMapping(text: string): Record<string, string> | undefined | string {
  const pairs = text
    .split(/[,\n]/)
    .map((p) => p.trim())
    .filter(Boolean);
  if (pairs.length === 0) return undefined;
  if (pairs.length > MAX_MAP) return `a mapping has at most ${MAX_MAP} arguments`;
  const map: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const arg = eq > 0 ? pair.slice(0, eq).trim() : '';
    const path = eq > 0 ? pair.slice(eq + 1).trim() : '';
    if (!arg || !path) return `"${pair}" is not ARG=PATH (for example entityNames=entities.name)`;
    if (CONTROL.test(arg) || /[=\s]/.test(arg)) return `"${arg}" is not an argument name`;
    if (CONTROL.test(path) || /[:=\s]/.test(path) || path.split('.').some((s) => s === '')) return `"${path}" is not a path (dotted keys, for example entities.name)`;
    if (Object.hasOwn(map, arg)) return `argument ${arg} is mapped twice`;
    map[arg] = path;
  }
  return map;
}

/** The params of `inverses.set` for a server, or why the form cannot be sent. */
export function inverseParams(server: string, d: InverseDraft): ParamsOf<'inverses.set'> | string {
  const tool = d.tool.trim();
  const inverse = d.inverse.trim();
  if (!tool || !inverse) return 'name the tool and its inverse';
  if (tool === inverse) return `${tool} cannot be its own inverse`;
  const map = parseMapping(d.mapping);
  if (typeof map === 'string') return map;
  return { server, tool, inverse, from: d.fromResult ? 'result' : 'args', ...(map ? { map } : {}) };
}

/** What the inverse is called with, in words. */
export function inverseSourceText(d: Pick<DeclaredInverse, 'from' | 'map'>): string {
  const source = d.from === 'result' ? 'the call’s result (structuredContent)' : 'the call’s arguments';
  if (!d.map || Object.keys(d.map).length === 0) return source;
  return `${Object.entries(d.map)
    .map(([arg, path]) => `${arg} = ${path}`)
    .join(', ')} from ${source}`;
}

/** The declarations of one server. */
export function inversesOf(all: readonly DeclaredInverse[], server: string): DeclaredInverse[] {
  return all.filter((d) => d.server === server);
}

const INVERSE_EVENTS = new Set(['inverse-declared', 'inverse-removed', 'inverse-refused']);

/** Whether an event can change a server's list of declarations (a wrapper's `--undo` comes and goes with it). */
export function isInverseEvent(e: { type: string; server: string | null }, server: string): boolean {
  if (e.type === 'session-up' || e.type === 'session-down') return true;
  return INVERSE_EVENTS.has(e.type) && (e.server === null || e.server === server);
}
