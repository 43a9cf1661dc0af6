/**
 * The launcher (proxy-core/bin/airlock.js) starts `airlock wrap` from the build's bundle of its entry only while
 * that bundle is at least as new as every compiled file it was made from, and from the unbundled main.js
 * otherwise: a dist/ recompiled without its bundle never runs yesterday's wrapper. Checked on a copy of
 * proxy-core's bin/ and dist/, whose files' times the test sets (`wrap --help` needs no broker and no package).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { cleanup, ROOT, tempDir } from '../helpers/airlock.js';

afterEach(cleanup);

const LOADER = join(ROOT, 'test', 'fixtures', 'loader', 'log-modules.mjs');
let copy = '';

beforeEach(() => {
  copy = tempDir('al-entry-');
  for (const dir of ['bin', 'dist']) cpSync(join(ROOT, 'proxy-core', dir), join(copy, dir), { recursive: true, preserveTimestamps: true });
});

/** Run `airlock wrap ARGS` from the copy; the file: modules it loaded (copy-relative) and its stdout. */
function wrap(args: string[]): { loaded: string[]; stdout: string } {
  const log = join(tempDir('al-log-'), 'modules');
  writeFileSync(log, '');
  const stdout = execFileSync(process.execPath, ['--import', LOADER, join(copy, 'bin', 'airlock.js'), 'wrap', ...args], {
    env: { ...process.env, AIRLOCK_TEST_MODULE_LOG: log },
    encoding: 'utf8',
  });
  const loaded = readFileSync(log, 'utf8').split('\n').filter((u) => u.includes(copy)).map((u) => u.slice(u.indexOf(copy) + copy.length + 1));
  return { loaded, stdout };
}

const inputs = (): string[] => (JSON.parse(readFileSync(join(copy, 'dist', 'wrap-bundle', 'inputs.json'), 'utf8')) as { inputs: string[] }).inputs;
const chunks = (): string[] => (JSON.parse(readFileSync(join(copy, 'dist', 'wrap-bundle', 'inputs.json'), 'utf8')) as { chunks: string[] }).chunks;

test('a fresh bundle is what runs, and says the same as the unbundled entry', () => {
  expect(chunks()).toContain('wrap-bundle/wrap.js');
  expect(inputs()).toEqual(expect.arrayContaining(['cli/wrap-entry.js', 'cli/commands/wrap.js', 'wrap/run-wrapper.js', 'wrap/relay.js']));
  const bundled = wrap(['--help']);
  expect(bundled.loaded).toContain('dist/wrap-bundle/wrap.js');
  expect(bundled.loaded.filter((f) => f.startsWith('dist/') && !f.startsWith('dist/wrap-bundle/'))).toEqual([]);
  expect(bundled.stdout).toMatch(/^Usage: airlock wrap --name NAME/);
  // the same text from the unbundled entry
  expect(execFileSync(process.execPath, [join(copy, 'dist', 'cli', 'main.js'), 'wrap', '--help'], { encoding: 'utf8' })).toBe(bundled.stdout);
  // every chunk in ASCII (what is past it escaped): one character past U+00FF and V8 keeps that chunk's source as a
  // two-byte string for the wrapper's life
  for (const c of chunks()) expect(readFileSync(join(copy, 'dist', c), 'latin1'), c).toMatch(/^[\x00-\x7f]*$/);
});

test('a compiled file newer than the bundle, or one gone, and main.js runs instead', () => {
  const input = join(copy, 'dist', 'wrap', 'relay.js');
  const oldest = Math.min(...chunks().map((c) => statSync(join(copy, 'dist', c)).mtimeMs));
  const later = new Date(oldest + 60_000);
  const before = readFileSync(input);
  utimesSync(input, later, later);
  const stale = wrap(['--help']);
  expect(stale.loaded).not.toContain('dist/wrap-bundle/wrap.js');
  expect(stale.loaded).toEqual(expect.arrayContaining(['dist/cli/main.js', 'dist/cli/wrap-main.js']));
  expect(stale.stdout).toMatch(/^Usage: airlock wrap --name NAME/);
  // the bundle rebuilt after it (its chunks as new): the bundle again
  for (const c of chunks()) utimesSync(join(copy, 'dist', c), later, later);
  expect(wrap(['--help']).loaded).toContain('dist/wrap-bundle/wrap.js');
  // an input removed: not the bundle
  rmSync(input);
  expect(wrap(['--help']).loaded).not.toContain('dist/wrap-bundle/wrap.js');
  writeFileSync(input, before);
  // no list of inputs at all: not the bundle
  rmSync(join(copy, 'dist', 'wrap-bundle', 'inputs.json'));
  expect(existsSync(join(copy, 'dist', 'wrap-bundle', 'wrap.js'))).toBe(true);
  expect(wrap(['--help']).loaded).not.toContain('dist/wrap-bundle/wrap.js');
});
