/**
 * Keeps the shape true: proxy-core is plain Node, the wrapper's import graph stays light, the composer (the CLI
 * here, the desktop app later) owns the process and the launcher, and shared helpers live once.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT } from './helpers/airlock.js';

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

  test('the broker and the wrapper import nothing of each other: what both use (undo declarations, the spill file) lies below them', () => {
    for (const [from, to] of [
      ['broker', 'wrap'],
      ['wrap', 'broker'],
    ]) {
      for (const f of files(join(SRC, from!))) {
        for (const spec of imports(f).filter((x) => x.startsWith('.'))) {
          expect(resolve(dirname(f), spec).startsWith(join(SRC, to!) + sep), `${f} imports ${spec}`).toBe(false);
        }
      }
    }
  });

  test('three bands whose imports point down: roots (cli, daemon) over processes (broker, wrap, inspect, http) over shared ground', () => {
    const bands: Record<string, number> = { cli: 2, daemon: 2, service: 1, broker: 1, wrap: 1, inspect: 1, http: 1, clients: 0, protocol: 0, policy: 0, classify: 0, ipc: 0, jsonrpc: 0, util: 0 };
    const folders = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());
    // a new top folder must say which band it is in
    expect(folders.filter((f) => bands[f] === undefined)).toEqual([]);
    for (const folder of folders) {
      for (const f of files(join(SRC, folder))) {
        for (const spec of imports(f).filter((x) => x.startsWith('.'))) {
          const target = relative(SRC, resolve(dirname(f), spec)).split(sep)[0]!;
          if (bands[target] === undefined || target === folder) continue;
          expect(bands[target]! <= bands[folder]!, `${relative(SRC, f)} (band ${bands[folder]}) imports ${spec} (band ${bands[target]})`).toBe(true);
        }
      }
    }
  });

  test('no source file of proxy-core is over 400 lines: a room that grows is opened into smaller ones', () => {
    const long = files(SRC)
      .map((f) => [relative(SRC, f), readFileSync(f, 'utf8').split('\n').length - 1] as const)
      .filter(([, n]) => n > 400);
    expect(long).toEqual([]);
  });

  test('protocol/ is vocabulary: it imports only itself and the classifier', () => {
    for (const f of files(join(SRC, 'protocol'))) {
      for (const spec of imports(f).filter((x) => x.startsWith('.'))) {
        const target = resolve(dirname(f), spec);
        const inside = [join(SRC, 'protocol') + sep, join(SRC, 'classify') + sep].some((dir) => target.startsWith(dir));
        expect(inside, `${f} imports ${spec}`).toBe(true);
      }
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
    // the command, and the entry bin/airlock.js starts for `wrap` (bundled by the build)
    walk(join(SRC, 'cli', 'commands', 'wrap.ts'));
    walk(join(SRC, 'cli', 'wrap-entry.ts'));
    expect(seen).not.toContain(join(SRC, 'cli', 'commands', 'registry.ts'));
    const heavy = [...external].filter((s) => !s.startsWith('node:'));
    // cross-spawn is imported on Windows only, where .cmd shims need it
    expect(heavy).toEqual(['cross-spawn']);
    expect([...seen].filter((f) => f.includes(`${join('src', 'broker')}`))).toEqual([]);
    const wrapSource = readFileSync(join(SRC, 'cli', 'commands', 'wrap.ts'), 'utf8');
    expect(wrapSource).not.toMatch(/^import[^(]*upstream-http/m);
  });

  /** proxy-core/src-relative paths, with `/`, of the files whose text matches. */
  const matching = (re: RegExp): string[] =>
    files(SRC)
      .filter((f) => re.test(readFileSync(f, 'utf8')))
      .map((f) => relative(SRC, f).split(sep).join('/'));

  test('only the CLI names its own binary, and only its ending (cli/exit.ts, for both entries) ends the process', () => {
    // inside Electron, process.execPath is the Electron binary: written into a client config it would start the app
    expect(matching(/process\.execPath/).filter((f) => !f.startsWith('cli/'))).toEqual([]);
    expect(matching(/process\.exit\s*\(/)).toEqual(['cli/exit.ts']);
  });

  test('shared helpers live once, below their users', () => {
    // the process-tree kill: stdin end, SIGTERM, SIGKILL to the group, taskkill /T /F on Windows
    expect(matching(/taskkill|process\.kill\(\s*-/)).toEqual(['util/process-tree.ts']);
    // JSON Schema validation
    const ajv = files(SRC).filter((f) => imports(f).some((spec) => spec === 'ajv' || spec.startsWith('ajv/')));
    expect(ajv.map((f) => relative(SRC, f).split(sep).join('/'))).toEqual(['util/json-schema.ts']);
    // the tool-poisoning detectors (hidden Unicode, bidi, ANSI, injection text): the classifier's, which inspect reuses
    expect(matching(/\\u\{E0000\}|\\u202A-\\u202E/)).toEqual(['classify/hidden-text.ts']);
    // canonical JSON (what pins, argument hashes and challenges are made from): one writer
    expect(matching(/function canonical(Json|Text|Shallow|Deep)\(/)).toEqual(['util/canonical-json.ts']);
    // Airlock's data dir and the broker's socket are derived in one place
    expect(matching(/['"]airlock['"]|['"]broker\.sock['"]|env\.XDG_DATA_HOME/i)).toEqual(['ipc/paths.ts']);
    // util/ is the bottom layer, and nothing below the CLI reaches up into it
    for (const f of files(join(SRC, 'util'))) {
      for (const spec of imports(f)) expect(spec.startsWith('../'), `${f} imports ${spec}`).toBe(false);
    }
    for (const f of files(SRC).filter((x) => !x.startsWith(join(SRC, 'cli') + sep))) {
      for (const spec of imports(f).filter((x) => x.startsWith('.'))) {
        expect(resolve(dirname(f), spec).startsWith(join(SRC, 'cli') + sep), `${f} imports ${spec}`).toBe(false);
      }
    }
  });

  test('the renderer imports no Node module and no runtime code of proxy-core (types only, through the package)', () => {
    const dir = join(ROOT, 'renderer', 'src');
    const walk = (d: string): string[] =>
      readdirSync(d).flatMap((name) => {
        const p = join(d, name);
        return statSync(p).isDirectory() ? walk(p) : /\.(ts|svelte)$/.test(p) ? [p] : [];
      });
    const sources = walk(dir);
    expect(sources.length).toBeGreaterThan(0);
    for (const f of sources) {
      const text = readFileSync(f, 'utf8');
      // every import, type-only ones included
      const specs = [...text.matchAll(/\bimport\s+(type\s+)?(?:[^'"]*?from\s+)?['"]([^'"]+)['"]/g)].map((m) => ({ typeOnly: Boolean(m[1]), spec: m[2]! }));
      specs.push(...[...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => ({ typeOnly: false, spec: m[1]! })));
      for (const { typeOnly, spec } of specs) {
        expect(spec, f).not.toMatch(/^node:|^(fs|path|os|child_process|net|crypto)$|^electron$|better-sqlite3/);
        // proxy-core/src is never reached into by path, and its package only for types
        expect(spec, f).not.toMatch(/proxy-core\/src|^\.\.\/\.\.\/proxy-core/);
        if (spec.startsWith('@airlock/proxy-core')) expect(typeOnly, `${f} imports ${spec} at run time`).toBe(true);
      }
    }
  });
});
