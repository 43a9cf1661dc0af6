/** Glob patterns for server, tool and client names: `*` any run, `?` one character, everything else literal. */
const cache = new Map<string, RegExp>();

export function globToRegExp(glob: string): RegExp {
  let re = cache.get(glob);
  if (re) return re;
  let src = '^';
  for (const ch of glob) {
    if (ch === '*') src += '[\\s\\S]*';
    else if (ch === '?') src += '[\\s\\S]';
    else src += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  re = new RegExp(src + '$', 'u');
  if (cache.size > 1000) cache.clear();
  cache.set(glob, re);
  return re;
}

export function globMatch(glob: string, value: string): boolean {
  return globToRegExp(glob).test(value);
}

/** A glob that matches exactly this name (for rules made from a single approval). */
export function literalGlob(name: string): string {
  // `*` and `?` cannot be escaped in this syntax; a name containing them gets a rule that also matches
  // look-alikes, so refuse rather than over-allow.
  if (/[*?]/.test(name)) throw new Error(`cannot make an exact rule for a name containing * or ?: ${name}`);
  return name;
}
