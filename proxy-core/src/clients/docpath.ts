/** Reading and writing plain parsed data by key path, without trusting its shape. */
import type { DocPath } from './types.js';

/** The value at `path`, or undefined when any step is missing or of the wrong kind. */
export function getAt(root: unknown, path: DocPath): unknown {
  let node = root;
  for (const seg of path) {
    if (typeof seg === 'number') {
      if (!Array.isArray(node)) return undefined;
      node = node[seg];
    } else {
      if (!isRecord(node) || !Object.prototype.hasOwnProperty.call(node, seg)) return undefined;
      node = node[seg];
    }
  }
  return node;
}

/** Set (or with `undefined`, delete) the value at `path` in place; the parent must exist. */
export function setAt(root: unknown, path: DocPath, value: unknown): void {
  const parent = getAt(root, path.slice(0, -1));
  const last = path[path.length - 1];
  if (last === undefined) return;
  if (typeof last === 'number') {
    if (Array.isArray(parent)) parent[last] = value;
    return;
  }
  if (!isRecord(parent)) return;
  if (value === undefined) delete parent[last];
  else Object.defineProperty(parent, last, { value, enumerable: true, writable: true, configurable: true });
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Deep equality of parsed data, ignoring key order and prototypes (jsonc-parser builds null-prototype objects,
 * TOML dates are Date subclasses): only the data counts.
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime() && String(a) === String(b);
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameData(x, b[i]));
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const rb = b as Record<string, unknown>;
  const ra = a as Record<string, unknown>;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(rb, k) && sameData(ra[k], rb[k]));
}
