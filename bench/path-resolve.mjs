// Judging a path rule in the wrapper: the cost of resolving one path argument as the kernel does (what exists by
// one lookup of the kernel's, util/real-path.ts; past it, one lstat per component and a readlink per symlink:
// proxy-core/src/policy/path-resolve.ts), against the baseline of one
// realpath(3) of the whole path (what a path rule cost before, and which reads `..` before symlinks). Both are
// timed on the same tree in the same run: a path 8 folders deep through a symlinked folder, one with a `..` after
// that symlink, and a file not yet written below it. Not a test: nothing here passes or fails.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { conditionsMatch } from '../proxy-core/dist/policy/arg-conditions.js';
import { argPaths, systemPathEnv } from '../proxy-core/dist/policy/path-resolve.js';

function timeEach(fn, n) {
  for (let i = 0; i < Math.min(200, n); i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1000 / n;
}

export async function pathResolveRows({ quick = false } = {}) {
  const n = quick ? 2_000 : 20_000;
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'al-bench-paths-')));
  try {
    const deep = join(root, 'home', 'me', 'notes', 'a', 'b', 'c', 'd');
    mkdirSync(deep, { recursive: true });
    mkdirSync(join(root, 'home', 'me', 'Dropbox'));
    symlinkSync(join(root, 'home', 'me', 'Dropbox'), join(root, 'home', 'me', 'notes', 'Dropbox'));
    const env = { ...systemPathEnv, home: join(root, 'home', 'me') };
    const rule = [{ arg: 'path', kind: 'path', glob: join(root, 'home', 'me', 'notes', '**') }];
    const f = (us) => us.toFixed(1);
    const cases = [
      ['an existing folder 8 deep', deep],
      ['a `..` after a symlinked folder', `${root}/home/me/notes/Dropbox/../notes/a/b/c/d`],
      ['a file not yet written', join(deep, 'new', 'file.txt')],
    ];
    const rows = [];
    for (const [what, p] of cases) {
      const baseline = timeEach(() => {
        try {
          realpathSync.native(p);
        } catch {
          // a missing file: the old code then tried each parent in turn
        }
      }, n);
      const resolve = timeEach(() => argPaths(p, env), n);
      const judged = timeEach(() => conditionsMatch(rule, { path: p }, 'allow', env), n);
      rows.push([
        `path rule, ${what}: resolve one argument as the kernel does (µs)`,
        f(baseline),
        '–',
        f(resolve),
        `baseline: one realpath(3) of the whole path; a whole allow-rule check: ${f(judged)} µs (${n} runs)`,
        '≤ 50 µs',
      ]);
    }
    return rows;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await pathResolveRows({ quick: process.argv.includes('--quick') })) console.log(`| ${row.join(' | ')} |`);
}
