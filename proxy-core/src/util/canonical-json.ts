/**
 * Canonical JSON: object keys sorted by UTF-16 code units (what `Array.prototype.sort()` gives strings), members
 * whose value is undefined dropped, undefined in arrays (and holes) written as null, everything else as
 * JSON.stringify writes it. Two values that differ only in key order get the same text, so their hashes agree:
 * the pins of a tool's definition, a call's arguments, a challenge's parameters.
 *
 * One writer for all of them, written for a 10,000-tool catalog fingerprinted at every listing: it allocates
 * little besides the text (keys sorted in place, quoted keys kept, plain strings quoted without a copy). It
 * takes any nesting depth JSON.parse accepts (about 100,000 levels, where recursion stops near 4,000) by handing
 * over to a writer with its own stack.
 */

/** Past this depth the recursive writer hands over to the one with its own stack. */
const RECURSION_LIMIT = 1000;
const TOO_DEEP = new Error('nested too deep to recurse');

export function canonicalJson(value: unknown): string {
  try {
    return write(value, 0);
  } catch (err) {
    if (err !== TOO_DEEP) throw err;
    return writeDeep(value);
  }
}

/**
 * `"key":` for keys seen before: the same few keys (type, description, properties…) come back in every entry of
 * a catalog. Bounded in count and in each key's length, so what a hostile listing or call puts in it (a million
 * distinct keys, keys of a megabyte) stays under a few megabytes for the process's life.
 */
const quotedKeys = new Map<string, string>();
const QUOTED_KEYS_MAX = 4096;
const QUOTED_KEY_CHARS = 64;

/** What is kept of quoted keys: how many, and their characters (quoted). */
export function quotedKeysKept(): { keys: number; chars: number } {
  let chars = 0;
  for (const text of quotedKeys.values()) chars += text.length;
  return { keys: quotedKeys.size, chars };
}

function keyText(key: string): string {
  let text = quotedKeys.get(key);
  if (text === undefined) {
    text = `${JSON.stringify(key)}:`;
    if (key.length <= QUOTED_KEY_CHARS && quotedKeys.size < QUOTED_KEYS_MAX) quotedKeys.set(key, text);
  }
  return text;
}

/** What a string needs escaped in JSON: a quote, a backslash, a control character, any surrogate (a lone one is escaped). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function stringText(s: string): string {
  // a plain string is quoted as a rope, not copied: the text is copied once, when it is hashed or written
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** The object's keys whose value is defined, sorted in place. */
function sortedKeys(obj: Record<string, unknown>): string[] {
  const keys = Object.keys(obj);
  let n = 0;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (obj[k] !== undefined) keys[n++] = k;
  }
  keys.length = n;
  if (n > 12) return keys.sort();
  // insertion sort: the few keys of a schema object, without the work array a library sort allocates
  for (let i = 1; i < n; i++) {
    const k = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > k) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = k;
  }
  return keys;
}

/**
 * The text by concatenation: V8 joins strings as ropes and copies them once, when the text is hashed, so this
 * costs about what JSON.stringify does.
 */
function write(value: unknown, depth: number): string {
  if (typeof value === 'string') return stringText(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (depth > RECURSION_LIMIT) throw TOO_DEEP;
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const item: unknown = value[i];
      out += item === undefined ? 'null' : write(item, depth + 1);
    }
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = sortedKeys(obj);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (i > 0) out += ',';
    out += keyText(key);
    out += write(obj[key], depth + 1);
  }
  return `${out}}`;
}

class Raw {
  constructor(readonly text: string) {}
}
const COMMA = new Raw(',');
const CLOSE_ARRAY = new Raw(']');
const CLOSE_OBJECT = new Raw('}');

/** The same text, with an explicit stack: for values nested deeper than recursion goes. */
function writeDeep(value: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item instanceof Raw) {
      out.push(item.text);
    } else if (Array.isArray(item)) {
      out.push('[');
      stack.push(CLOSE_ARRAY);
      for (let i = item.length - 1; i >= 0; i--) {
        stack.push(item[i] === undefined ? null : item[i]);
        if (i > 0) stack.push(COMMA);
      }
    } else if (item !== null && typeof item === 'object') {
      const obj = item as Record<string, unknown>;
      const keys = sortedKeys(obj);
      out.push('{');
      stack.push(CLOSE_OBJECT);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        stack.push(obj[key]);
        stack.push(new Raw(i > 0 ? `,${keyText(key)}` : keyText(key)));
      }
    } else if (typeof item === 'string') {
      out.push(stringText(item));
    } else {
      out.push(JSON.stringify(item) ?? 'null');
    }
  }
  return out.join('');
}
