/**
 * Keeps the unit tests a mirror of the source: `test/proxy-core/<folder>/<file>.test.ts` tests
 * `proxy-core/src/<folder>/<file>.ts`, `test/renderer/` mirrors `renderer/src/`, `test/electron/` mirrors
 * `electron/src/`. A second file on one module says what it covers after a dot (`store.journal.test.ts`). So a
 * module's tests are found from its name, and a test left behind by a moved or removed module fails here.
 * Shared set-ups live in test/helpers, end-to-end suites in their own folders (e2e, clients, ui, inspect, app).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { expect, test } from 'vitest';
import { ROOT } from './helpers/airlock.js';

/** Each mirror folder under test/, the source folder it mirrors, and the endings a source file may have there. */
const MIRRORS = [
  { tests: 'proxy-core', source: join('proxy-core', 'src'), endings: ['.ts'] },
  { tests: 'renderer', source: join('renderer', 'src'), endings: ['.ts', '.svelte.ts', '.svelte'] },
  { tests: 'electron', source: join('electron', 'src'), endings: ['.ts', '.cts'] },
] as const;

/** Test files deliberately named after no source file, each with why (paths relative to test/). */
const EXCEPTIONS = new Map<string, string>([]);

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

const posix = (p: string) => p.split(sep).join('/');

test('every unit test is named after a source file that exists', () => {
  const orphans: string[] = [];
  let seen = 0;
  for (const m of MIRRORS) {
    const root = join(ROOT, 'test', m.tests);
    for (const file of walk(root)) {
      seen++;
      const rel = posix(relative(join(ROOT, 'test'), file));
      if (EXCEPTIONS.has(rel)) continue;
      const match = /^(.*\/)?([^/.]+)(\.[^/.]+)?\.test\.ts$/.exec(posix(relative(root, file)));
      const source = match && m.endings.map((e) => join(ROOT, m.source, `${match[1] ?? ''}${match[2]}${e}`)).find((p) => existsSync(p));
      if (!source) orphans.push(rel);
    }
  }
  expect(seen).toBeGreaterThan(50);
  expect(orphans, 'named after no source file (rename it after the module it tests, or say why in EXCEPTIONS)').toEqual([]);
});

test('the mirror folders hold only tests, and no test is left in the old flat folder', () => {
  const others = MIRRORS.flatMap((m) => walk(join(ROOT, 'test', m.tests))).filter((f) => !f.endsWith('.test.ts'));
  expect(others.map((f) => posix(relative(ROOT, f))), 'shared code goes to test/helpers').toEqual([]);
  expect(walk(join(ROOT, 'test', 'unit'))).toEqual([]);
});

/**
 * The end-to-end suites' folders, and the source folder of the same name when there is one: a test there that is
 * named after one of that folder's modules tests the module, and belongs in the mirror (test/clients/edit.test.ts
 * was proxy-core/src/clients/edit.ts's unit test, where nobody looking from the module would find it).
 */
const SUITES = ['e2e', 'clients', 'inspect', 'ui', 'app', 'service'] as const;

test("no end-to-end suite holds a module's unit test", () => {
  const misplaced: string[] = [];
  for (const suite of SUITES) {
    for (const file of walk(join(ROOT, 'test', suite))) {
      const match = /^([^/.]+)(\.[^/.]+)?\.test\.ts$/.exec(posix(relative(join(ROOT, 'test', suite), file)));
      if (match && existsSync(join(ROOT, 'proxy-core', 'src', suite, `${match[1]}.ts`))) misplaced.push(posix(relative(join(ROOT, 'test'), file)));
    }
  }
  expect(misplaced, `move to test/proxy-core/<folder>/, or name the suite after what it drives`).toEqual([]);
});

test('every exception is still there, so the list cannot outlive its reasons', () => {
  for (const rel of EXCEPTIONS.keys()) expect(existsSync(join(ROOT, 'test', rel)), rel).toBe(true);
});
