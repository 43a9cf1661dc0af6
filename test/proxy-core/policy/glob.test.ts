/**
 * Globs (glob.ts) match what the regular expressions they were once turned into matched, character for
 * character, and take time in proportion to the pattern times the value, never exponential in the stars: a deny
 * rule anyone may add cannot hold the broker or a wrapper.
 */
import { describe, expect, test } from 'vitest';
import { Glob, globMatch } from '../../../proxy-core/src/policy/glob.js';
import { seeded } from '../../helpers/seeded.js';

// the readings the globs had as regular expressions (a `u` expression, code point by code point), as an oracle
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
function nameRegExp(glob: string): RegExp {
  let src = '^';
  for (const ch of glob) src += ch === '*' ? '[\\s\\S]*' : ch === '?' ? '[\\s\\S]' : esc(ch);
  return new RegExp(`${src}$`, 'u');
}
function pathRegExp(glob: string, sep: string): RegExp {
  const seg = `[^${esc(sep)}]`;
  let src = '^';
  const g = [...glob];
  for (let i = 0; i < g.length; i++) {
    const ch = g[i]!;
    if (ch === '*' && g[i + 1] === '*') {
      if (g[i + 2] === undefined && src.endsWith(esc(sep))) src = `${src.slice(0, -esc(sep).length)}(?:${esc(sep)}.*)?`;
      else src += '.*';
      i++;
    } else if (ch === '*') src += `${seg}*`;
    else if (ch === '?') src += seg;
    else src += esc(ch);
  }
  return new RegExp(`${src}$`, 'su');
}


describe('globs', () => {
  test('names: what the regular expression matched, for random patterns and names', () => {
    const next = seeded(7);
    const alphabet = ['a', 'b', '-', '.', '😀', '\n', 'é', '\uD83D', '\uDE00'];
    const pick = (from: string[]) => from[Math.floor(next() * from.length)]!;
    for (let round = 0; round < 4000; round++) {
      const glob = Array.from({ length: Math.floor(next() * 7) }, () => pick([...alphabet, '*', '?', '*'])).join('');
      const value = Array.from({ length: Math.floor(next() * 9) }, () => pick(alphabet)).join('');
      expect(globMatch(glob, value), `${JSON.stringify(glob)} ~ ${JSON.stringify(value)}`).toBe(nameRegExp(glob).test(value));
    }
  });

  test('paths: what the regular expression matched, `*` and `?` within a segment, `**` across, `dir/**` the folder too', () => {
    const next = seeded(11);
    const parts = ['a', 'b', '/', '.', '😀', '\n'];
    const pick = (from: string[]) => from[Math.floor(next() * from.length)]!;
    for (let round = 0; round < 6000; round++) {
      const glob = `/${Array.from({ length: Math.floor(next() * 7) }, () => pick([...parts, '*', '?', '**', '/**'])).join('')}`;
      const value = `/${Array.from({ length: Math.floor(next() * 9) }, () => pick(parts)).join('')}`;
      expect(Glob.path(glob, '/').test(value), `${JSON.stringify(glob)} ~ ${JSON.stringify(value)}`).toBe(pathRegExp(glob, '/').test(value));
    }
    for (const [glob, value, expected] of [
      ['/home/u/**', '/home/u', true],
      ['/home/u/**', '/home/u/', true],
      ['/home/u/**', '/home/u/a/b', true],
      ['/home/u/**', '/home/user', false],
      ['/home/*/x', '/home/u/v/x', false],
      ['/home/**/x', '/home/u/v/x', true],
      ['C:\\u\\**', 'C:\\u\\a', true],
    ] as const) expect(Glob.path(glob, glob.includes('\\') ? '\\' : '/').test(value), `${glob} ~ ${value}`).toBe(expected);
  });

  test('a pattern of a hundred stars and a letter, against a name and a deep path, is judged at once', () => {
    const t0 = performance.now();
    expect(globMatch(`${'*'.repeat(100)}Q`, 'filesystem-server-with-a-long-name')).toBe(false);
    expect(globMatch(`${'*a'.repeat(60)}Q`, 'a'.repeat(200))).toBe(false);
    expect(Glob.path(`/${'**/'.repeat(60)}Q`, '/').test(`/${'d/'.repeat(100)}x`)).toBe(false);
    expect(Glob.path(`/${'*a'.repeat(60)}Q`, '/').test(`/${'a'.repeat(200)}`)).toBe(false);
    // as regular expressions, a twelfth of this took seconds
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
