import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { ROOT } from '../../helpers/airlock.js';
import { realPath } from '../../../proxy-core/src/util/real-path.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'al-realpath-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What a resolver says of a path: the path, or the error's code. */
function outcome(resolve: (p: string) => string, p: string): string {
  try {
    return resolve(p);
  } catch (err) {
    return `error ${(err as NodeJS.ErrnoException).code}`;
  }
}

// a tree with every kind of thing a path argument can run into
const deep = join(root, 'home', 'me', 'notes', 'a', 'b', 'c', 'd');
mkdirSync(deep, { recursive: true });
mkdirSync(join(root, 'home', 'me', 'Dropbox', 'x'), { recursive: true });
writeFileSync(join(deep, 'file.txt'), 'x');
symlinkSync(join(root, 'home', 'me', 'Dropbox'), join(root, 'home', 'me', 'notes', 'Dropbox'));
symlinkSync('../a/b', join(root, 'home', 'me', 'notes', 'a', 'rel'));
symlinkSync('rel', join(root, 'home', 'me', 'notes', 'a', 'chain'));
symlinkSync(join(root, 'nowhere'), join(root, 'dangling'));
symlinkSync(join(root, 'loop2'), join(root, 'loop1'));
symlinkSync(join(root, 'loop1'), join(root, 'loop2'));
execFileSync('mkfifo', [join(root, 'fifo')]);

/** A path, and what it resolves to (a path, or the error's code), as realpath(3) and the kernel say. */
const cases: [string, string, string][] = [
  ['a folder 8 deep', deep, deep],
  ['a file', join(deep, 'file.txt'), join(deep, 'file.txt')],
  ['a symlinked folder', join(root, 'home', 'me', 'notes', 'Dropbox'), join(root, 'home', 'me', 'Dropbox')],
  // written out, not joined: path.join would take the `..` away as text
  ['a `..` after a symlinked folder (read after the link, as the kernel does)', `${root}/home/me/notes/Dropbox/../notes/a`, join(root, 'home', 'me', 'notes', 'a')],
  ['below a symlinked folder', join(root, 'home', 'me', 'notes', 'Dropbox', 'x'), join(root, 'home', 'me', 'Dropbox', 'x')],
  ['a relative symlink', join(root, 'home', 'me', 'notes', 'a', 'rel', 'c'), join(root, 'home', 'me', 'notes', 'a', 'b', 'c')],
  ['a chain of symlinks', `${root}/home/me/notes/a/chain/c/../c`, join(root, 'home', 'me', 'notes', 'a', 'b', 'c')],
  ['a dangling symlink', join(root, 'dangling'), 'error ENOENT'],
  ['a symlink loop', join(root, 'loop1'), 'error ELOOP'],
  ['a missing file', join(deep, 'missing.txt'), 'error ENOENT'],
  ['a file taken for a folder', join(deep, 'file.txt', 'x'), 'error ENOTDIR'],
  ['a name past the limit', join(root, 'n'.repeat(300)), 'error ENAMETOOLONG'],
  ['a FIFO (nothing opened to block on)', join(root, 'fifo'), join(root, 'fifo')],
  ['a device', '/dev/null', '/dev/null'],
  ['the root', '/', '/'],
  ['a magic link to this process', '/proc/self/cwd', process.cwd()],
];

describe('realPath: what realpath(3) says, for every kind of path', () => {
  for (const [what, p, expected] of cases) {
    test(what, () => {
      expect(outcome((x) => realpathSync.native(x), p)).toBe(expected);
      expect(outcome(realPath, p)).toBe(expected);
    });
  }

  test('magic links to what has no path in the file tree (pipes, sockets): realpath(3) answers, as it would', () => {
    // a test worker's fds 0 to 2 are pipes or files, its IPC channel a socket: whatever each is, both agree
    for (const fd of [0, 1, 2, 3]) expect(outcome(realPath, `/proc/self/fd/${fd}`)).toBe(outcome((x) => realpathSync.native(x), `/proc/self/fd/${fd}`));
  });

  test('with no file descriptor left to ask with, realpath(3) answers', () => {
    // a child held to 40 descriptors opens files until it has none left, then resolves
    const code = `
      import { openSync, realpathSync } from 'node:fs';
      import { realPath } from ${JSON.stringify(join(ROOT, 'proxy-core', 'dist', 'util', 'real-path.js'))};
      const p = ${JSON.stringify(`${root}/home/me/notes/Dropbox/../notes/a`)};
      let open = 0;
      try { for (;;) { openSync('/dev/null', 'r'); open++; } } catch (err) { if (err.code !== 'EMFILE') throw err; }
      process.stdout.write(JSON.stringify({ open, fast: realPath(p), slow: realpathSync.native(p) }));
    `;
    const out = JSON.parse(execFileSync('sh', ['-c', 'ulimit -n 40 && exec "$0" --input-type=module -e "$1"', process.execPath, code], { encoding: 'utf8' }));
    expect(out.open).toBeGreaterThan(0);
    expect(out.fast).toBe(out.slow);
    expect(out.fast).toBe(join(root, 'home', 'me', 'notes', 'a'));
  });
});
