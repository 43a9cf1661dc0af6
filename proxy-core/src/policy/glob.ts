/**
 * Glob patterns: for server, tool and client names `*` any run and `?` one character (everything else literal);
 * for path rules (arg-conditions.ts) the same within a segment, `**` across segments.
 *
 * Matched by walking the pattern's steps alongside the value, every place the pattern could be at once, so a
 * match costs at most the value's length times the pattern's: a pattern turned into a backtracking regular
 * expression took time exponential in its stars (`*` × 12 then `Q`, against a 19-character name: 1.9 s), and
 * a deny rule, which anyone may add without a presence proof, could hold the broker and every wrapper with it.
 * Characters are code points, as a `u` regular expression reads them.
 */

/** One step of a pattern: a character as it is, any one character, or any run of them. */
type Step = { kind: 'char'; code: number } | { kind: 'one' } | { kind: 'run'; crossing: boolean };

export class Glob {
  /**
   * `sep`: the separator a `?` or a `*` does not match (a `**` does); undefined: they match anything. `under`: the
   * pattern ended in `<sep>**`, which matches the folder itself as well as everything under it.
   */
  private constructor(
    private readonly steps: readonly Step[],
    private readonly sep: number | undefined,
    private readonly under: Glob | undefined,
  ) {
    this.at = new Uint8Array(steps.length + 1);
    this.next = new Uint8Array(steps.length + 1);
  }

  /** Where the pattern may be, before and after a character (`test` runs to its end before it runs again). */
  private at: Uint8Array;
  private next: Uint8Array;

  /** A name pattern: `*` any run, `?` one character. */
  static name(pattern: string): Glob {
    const steps: Step[] = [];
    for (const ch of pattern) steps.push(ch === '*' ? { kind: 'run', crossing: true } : ch === '?' ? { kind: 'one' } : { kind: 'char', code: ch.codePointAt(0)! });
    return new Glob(steps, undefined, undefined);
  }

  /** A path pattern: `*` and `?` within a segment, `**` across them; `dir<sep>**` is `dir` and all under it. */
  static path(pattern: string, sep: string): Glob {
    const chars = [...pattern];
    const at = sep.codePointAt(0)!;
    const steps: Step[] = [];
    let under: Glob | undefined;
    for (let i = 0; i < chars.length; i++) {
      const ch = chars[i]!;
      if (ch === '*' && chars[i + 1] === '*') {
        const last = steps.at(-1);
        if (i + 2 === chars.length && last?.kind === 'char' && last.code === at) under = new Glob(steps.slice(0, -1), at, undefined);
        steps.push({ kind: 'run', crossing: true });
        i++;
      } else if (ch === '*') steps.push({ kind: 'run', crossing: false });
      else if (ch === '?') steps.push({ kind: 'one' });
      else steps.push({ kind: 'char', code: ch.codePointAt(0)! });
    }
    return new Glob(steps, at, under);
  }

  test(value: string): boolean {
    if (this.under?.test(value)) return true;
    const steps = this.steps;
    const n = steps.length;
    let at = this.at;
    let next = this.next;
    at.fill(0);
    this.reach(at, 0);
    for (let k = 0; k < value.length; ) {
      const code = value.codePointAt(k)!;
      k += code > 0xffff ? 2 : 1;
      next.fill(0);
      let any = false;
      for (let i = 0; i < n; i++) {
        if (at[i] === 0) continue;
        const step = steps[i]!;
        if (step.kind === 'char') {
          if (step.code === code) any = this.reach(next, i + 1);
        } else if (code !== this.sep || (step.kind === 'run' && step.crossing)) any = this.reach(next, step.kind === 'run' ? i : i + 1);
      }
      if (!any) return false;
      const was = at;
      at = next;
      next = was;
    }
    return at[n] === 1;
  }

  /** Mark `i` reached, and the steps after each run there (a run may match nothing). */
  private reach(set: Uint8Array, i: number): true {
    set[i] = 1;
    while (i < this.steps.length && this.steps[i]!.kind === 'run') set[++i] = 1;
    return true;
  }
}

/** Each name pattern's matcher, made once: most patterns are a name, `*`, `prefix*` or `*suffix`, which need no walk. */
const matchers = new Map<string, (value: string) => boolean>();
const SURROGATE = /[\uD800-\uDFFF]/;

function nameMatcher(glob: string): (value: string) => boolean {
  const star = glob.indexOf('*');
  if (glob.includes('?') || SURROGATE.test(glob) || star !== glob.lastIndexOf('*')) {
    // (a pattern with half a surrogate pair is walked: the value's pairs are one character each)
    const walk = Glob.name(glob);
    return (value) => walk.test(value);
  }
  if (star === -1) return (value) => value === glob;
  if (glob === '*') return () => true;
  const prefix = glob.slice(0, star);
  const suffix = glob.slice(star + 1);
  if (suffix === '') return (value) => value.startsWith(prefix);
  if (prefix === '') return (value) => value.endsWith(suffix);
  return (value) => value.length >= prefix.length + suffix.length && value.startsWith(prefix) && value.endsWith(suffix);
}

/** Does the name `value` match the name pattern `glob`? */
export function globMatch(glob: string, value: string): boolean {
  let matcher = matchers.get(glob);
  if (!matcher) {
    matcher = nameMatcher(glob);
    if (matchers.size > 1000) matchers.clear();
    matchers.set(glob, matcher);
  }
  return matcher(value);
}

/** A glob that matches exactly this name (for rules made from a single approval). */
export function literalGlob(name: string): string {
  // `*` and `?` cannot be escaped in this syntax; a name containing them gets a rule that also matches
  // look-alikes, so refuse rather than over-allow.
  if (/[*?]/.test(name)) throw new Error(`cannot make an exact rule for a name containing * or ?: ${name}`);
  return name;
}
