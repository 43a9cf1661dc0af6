/**
 * The launcher (proxy-core/bin/airlock.js) starts `airlock wrap` from the build's bundle of its entry, and every
 * other command from the CLI's bundle, only while that bundle is at least as new as every compiled file it was
 * made from, and from the unbundled main.js otherwise: a dist/ recompiled without its bundles never runs
 * yesterday's wrapper or CLI. Checked on a copy of proxy-core's bin/ and dist/, whose files' times the test sets
 * (`--help` needs no broker; the packages resolve from the repository's node_modules, linked beside the copy),
 * both ways the launcher reads those times: through the native addon (proxy-core/native/mtime.c, two calls) when
 * it is built, and through fs.statSync, one file at a time, when it is not.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { cleanup, ROOT, tempDir } from '../helpers/airlock.js';

afterEach(cleanup);

const LOADER = join(ROOT, 'test', 'fixtures', 'loader', 'log-modules.mjs');
const ADDON = join(ROOT, 'proxy-core', 'native', 'build', 'Release', 'airlock_native.node');
// the launcher reads times through the addon on Linux, where `npm install` builds it (CI does): a missing one
// fails here, not skips
const addonHere = process.platform === 'linux';
let copy = '';

beforeEach(() => {
  copy = tempDir('al-entry-');
  for (const dir of ['bin', 'dist']) cpSync(join(ROOT, 'proxy-core', dir), join(copy, dir), { recursive: true, preserveTimestamps: true });
});

/** The built addon, beside the copy's bin/ where the launcher looks for it. */
function addAddon(): void {
  mkdirSync(join(copy, 'native', 'build', 'Release'), { recursive: true });
  cpSync(ADDON, join(copy, 'native', 'build', 'Release', 'airlock_native.node'));
}

/**
 * Run `airlock wrap ARGS` from the copy; the file: modules it loaded, the files it stat'ed one by one and the
 * addons it loaded (copy-relative), and its stdout.
 */
function wrap(args: string[]): { loaded: string[]; stats: string[]; addons: string[]; stdout: string } {
  return airlock(['wrap', ...args]);
}

/** `airlock ARGS` from the copy, as `wrap` above. */
function airlock(args: string[]): { loaded: string[]; stats: string[]; addons: string[]; stdout: string } {
  const log = join(tempDir('al-log-'), 'modules');
  writeFileSync(log, '');
  const stdout = execFileSync(process.execPath, ['--import', LOADER, join(copy, 'bin', 'airlock.js'), ...args], {
    env: { ...process.env, AIRLOCK_TEST_MODULE_LOG: log },
    encoding: 'utf8',
  });
  const lines = readFileSync(log, 'utf8').split('\n').filter((u) => u.includes(copy));
  const inCopy = (u: string) => u.slice(u.indexOf(copy) + copy.length + 1).replace(/^bin\/\.\.\//, '');
  const kind = (prefix: string) => lines.filter((u) => u.startsWith(prefix)).map(inCopy);
  return { loaded: lines.filter((u) => u.startsWith('file:')).map(inCopy), stats: kind('stat '), addons: kind('dlopen '), stdout };
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

const WAYS: [string, boolean][] = [['through fs.statSync (no addon)', false]];
if (addonHere) WAYS.push(['through the native addon', true]);

describe.each(WAYS)('the bundle\'s freshness read %s', (_how, withAddon) => {
  beforeEach(() => {
    if (withAddon) addAddon();
  });

  test('the bundle when fresh; and read the way this test names', () => {
    const fresh = wrap(['--help']);
    expect(fresh.loaded).toContain('dist/wrap-bundle/wrap.js');
    if (withAddon) {
      expect(fresh.addons).toEqual(['native/build/Release/airlock_native.node']);
      expect(fresh.stats).toEqual([]);
    } else {
      expect(fresh.addons).toEqual([]);
      // every chunk and every input, one by one
      expect(fresh.stats.length).toBe(chunks().length + inputs().length);
    }
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
    // an input made a symlink: read through it, as the kernel does; to a newer file, not the bundle; to an older
    // one, the bundle; dangling, not the bundle
    const target = join(tempDir('al-link-'), 'relay.js');
    writeFileSync(target, before);
    // newer than the chunks made newer above (by its time, not the clock's: a build a moment ago made them newer than now)
    const newer = new Date(oldest + 120_000);
    utimesSync(target, newer, newer);
    symlinkSync(target, input);
    expect(wrap(['--help']).loaded).not.toContain('dist/wrap-bundle/wrap.js');
    const earlier = new Date(oldest - 60_000);
    utimesSync(target, earlier, earlier);
    expect(wrap(['--help']).loaded).toContain('dist/wrap-bundle/wrap.js');
    rmSync(target);
    expect(wrap(['--help']).loaded).not.toContain('dist/wrap-bundle/wrap.js');
    rmSync(input);
    writeFileSync(input, before);
    // no list of inputs at all: not the bundle
    rmSync(join(copy, 'dist', 'wrap-bundle', 'inputs.json'));
    expect(existsSync(join(copy, 'dist', 'wrap-bundle', 'wrap.js'))).toBe(true);
    expect(wrap(['--help']).loaded).not.toContain('dist/wrap-bundle/wrap.js');
  });
});

describe("every other command: the CLI's bundle", () => {
  const manifest = (): { chunks: string[]; inputs: string[] } => JSON.parse(readFileSync(join(copy, 'dist', 'cli-bundle', 'inputs.json'), 'utf8')) as { chunks: string[]; inputs: string[] };

  test('when fresh, it alone runs (zod inside it), and says what the unbundled entry says', () => {
    expect(manifest().inputs).toEqual(expect.arrayContaining(['cli/main.js', 'cli/commands/status.js', 'cli/install-paths.js', 'protocol/api.js']));
    const bundled = airlock(['status', '--help']);
    expect(bundled.loaded).toContain('dist/cli-bundle/main.js');
    expect(bundled.loaded.filter((f) => f.startsWith('dist/') && !f.startsWith('dist/cli-bundle/'))).toEqual([]);
    expect(bundled.stdout).toMatch(/^Usage: airlock status/);
    expect(execFileSync(process.execPath, [join(copy, 'dist', 'cli', 'main.js'), 'status', '--help'], { encoding: 'utf8' })).toBe(bundled.stdout);
    expect(airlock(['--help']).stdout).toBe(execFileSync(process.execPath, [join(copy, 'dist', 'cli', 'main.js'), '--help'], { encoding: 'utf8' }));
    // its paths found from its own place, one folder below dist/ as cli/ is: the launcher a client config gets
    const chunk = manifest().chunks.map((c) => readFileSync(join(copy, 'dist', c), 'utf8')).find((t) => t.includes('bin/airlock.js'));
    expect(chunk).toMatch(/new URL\(["']\.\.\/\.\.\/\.\.\/bin\/airlock\.js["'], import\.meta\.url\)/);
    for (const c of manifest().chunks) expect(readFileSync(join(copy, 'dist', c), 'latin1'), c).toMatch(/^[\x00-\x7f]*$/);
  });

  test('a compiled file newer than it, and main.js runs instead', () => {
    const input = join(copy, 'dist', 'cli', 'commands', 'status.js');
    const oldest = Math.min(...manifest().chunks.map((c) => statSync(join(copy, 'dist', c)).mtimeMs));
    const later = new Date(oldest + 60_000);
    utimesSync(input, later, later);
    const stale = airlock(['status', '--help']);
    expect(stale.loaded).not.toContain('dist/cli-bundle/main.js');
    expect(stale.loaded).toEqual(expect.arrayContaining(['dist/cli/main.js', 'dist/cli/commands/registry.js']));
    expect(stale.stdout).toMatch(/^Usage: airlock status/);
    // the wrapper's own bundle is not made from that file: `wrap` still runs from it
    expect(wrap(['--help']).loaded).toContain('dist/wrap-bundle/wrap.js');
  });
});

test('the addon reads the times fs.statSync reads, and answers null for any file it cannot read', () => {
  if (!addonHere) return;
  expect(existsSync(ADDON)).toBe(true);
  const { mtimeRange } = createRequire(import.meta.url)(ADDON) as { mtimeRange(dir: unknown, names?: unknown): [number, number] | null };
  const dist = join(copy, 'dist');
  const names = [...chunks(), ...inputs()];
  // times the test sets, fractions of a millisecond included, so the two ways must agree to the last digit
  names.forEach((n, i) => utimesSync(join(dist, n), 1.7e9 + i * 0.37, 1.7e9 + i * 0.37 + 0.000123));
  const times = names.map((n) => statSync(join(dist, n)).mtimeMs);
  expect(mtimeRange(dist, names)).toEqual([Math.min(...times), Math.max(...times)]);
  expect(mtimeRange(dist, names.slice(3, 4))).toEqual([times[3], times[3]]);
  // nothing it cannot read is taken for a time: the launcher then reads them one by one
  for (const bad of [[...names, 'wrap/none.js'], [], [1], ['wrap-bundle/wrap.js\u0000x'], ['a'.repeat(5000)], 'wrap-bundle/wrap.js']) {
    expect(mtimeRange(dist, bad)).toBeNull();
  }
  expect(mtimeRange('x'.repeat(5000), names)).toBeNull();
  expect(mtimeRange('', names)).toBeNull();
  expect(mtimeRange(dist)).toBeNull();
});
