/** Keeps the shape true: proxy-core is plain Node, and the wrapper's import graph stays light. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT } from '../helpers/airlock.js';

const SRC = join(ROOT, 'proxy-core', 'src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/^\s*import\s+(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm)) found.push(m[1]!);
  for (const m of text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) found.push(m[1]!);
  for (const m of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1]!);
  return found;
}

describe('architecture', () => {
  test('proxy-core imports nothing from electron or the renderer, and never writes with console.log', () => {
    for (const f of files(SRC)) {
      for (const spec of imports(f)) {
        expect(spec, f).not.toMatch(/^electron$|(^|\/)(electron|renderer)\//);
      }
      expect(readFileSync(f, 'utf8'), f).not.toMatch(/console\.log/);
    }
  });

  test('a stdio wrapper loads no SQLite, no SDK, no schema or config libraries and no broker code', () => {
    const seen = new Set<string>();
    const external = new Set<string>();
    // the remote upstream (the SDK's HTTP transports) is imported only for --url
    const REMOTE = join(SRC, 'wrap', 'upstream-http.ts');
    const walk = (file: string) => {
      if (seen.has(file) || file === REMOTE) return;
      seen.add(file);
      for (const spec of imports(file)) {
        if (spec.startsWith('.')) walk(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
        else external.add(spec);
      }
    };
    walk(join(SRC, 'cli', 'commands', 'wrap.ts'));
    const heavy = [...external].filter((s) => !s.startsWith('node:'));
    // cross-spawn is imported on Windows only, where .cmd shims need it
    expect(heavy).toEqual(['cross-spawn']);
    expect([...seen].filter((f) => f.includes(`${join('src', 'broker')}`))).toEqual([]);
    const wrapSource = readFileSync(join(SRC, 'cli', 'commands', 'wrap.ts'), 'utf8');
    expect(wrapSource).not.toMatch(/^import[^(]*upstream-http/m);
  });
});
