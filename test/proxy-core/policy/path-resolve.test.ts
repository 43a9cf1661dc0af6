/**
 * Path arguments resolved as the kernel resolves them, judged against the kernel itself: each tricky path is
 * written through as given (open(2) on the raw text), and the file that appeared is the answer the resolver
 * must give. Then path rules on those paths (an allow needs both readings, a deny either), symlink loops and the
 * ELOOP limit, and an undo's folder walk that holds its folders while one is swapped for a symlink.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { conditionsMatch, parseArgCondition } from '../../../proxy-core/src/policy/arg-conditions.js';
import { argPaths, kernelPath, readingsOf, symlinkLimit, systemPathEnv } from '../../../proxy-core/src/policy/path-resolve.js';
import { FOLDERS_HELD_BY_DESCRIPTOR, folderChain, walkToFolder } from '../../../proxy-core/src/broker/undo/dirs.js';
import { writeBack } from '../../../proxy-core/src/broker/undo/files.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'al-resolve-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = { ...systemPathEnv, home: root };

// root/notes/Dropbox -> root/Dropbox; root/notes/deep/a/b/up -> root/far/x/y (absolute); rel -> ../Dropbox
// (relative); a chain notes/c1 -> c2 -> Dropbox; a dangling notes/dangling -> root/made-by-link.txt
mkdirSync(join(root, 'notes', 'deep', 'a', 'b'), { recursive: true });
mkdirSync(join(root, 'Dropbox'));
mkdirSync(join(root, 'far', 'x', 'y'), { recursive: true });
mkdirSync(join(root, '.ssh'));
symlinkSync(join(root, 'Dropbox'), join(root, 'notes', 'Dropbox'));
symlinkSync(join(root, 'far', 'x', 'y'), join(root, 'notes', 'deep', 'a', 'b', 'up'));
symlinkSync('../Dropbox', join(root, 'notes', 'rel'));
symlinkSync('Dropbox', join(root, 'notes', 'c2'));
symlinkSync('c2', join(root, 'notes', 'c1'));
symlinkSync(join(root, 'made-by-link.txt'), join(root, 'notes', 'dangling'));

/** Write through `p` as given and say which file appeared (the kernel's answer), then remove it. */
function kernelWrites(p: string): string {
  const marker = `marker-${Math.random()}`;
  writeFileSync(p, marker);
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, name.name);
      if (name.isDirectory()) walk(full);
      else if (name.isFile() && readFileSync(full, 'utf8') === marker) found.push(full);
    }
  };
  walk(root);
  expect(found).toHaveLength(1);
  rmSync(found[0]!);
  return found[0]!;
}

describe('the resolver gives the file the kernel writes', () => {
  const n = join(root, 'notes');
  test.each([
    ['`..` right after a symlink', `${n}/Dropbox/../.ssh/key`],
    ['`..` twice after a deep symlink', `${n}/deep/a/b/up/../../z.txt`],
    ['`..` after a relative symlink', `${n}/rel/../far/f.txt`],
    ['`..` after a chain of symlinks', `${n}/c1/../g.txt`],
    ['`..` past a symlink then back down', `${n}/Dropbox/../notes/Dropbox/h.txt`],
    ['`.` and doubled slashes', `${n}//./Dropbox/./i.txt`],
    ['no `..`: a file through a symlinked folder', `${n}/Dropbox/j.txt`],
    ['a dangling symlink: written where it points', `${n}/dangling`],
    ['plain `..` with no symlink before it', `${n}/deep/../k.txt`],
  ])('%s', (_name, p) => {
    const resolved = kernelPath(p, env);
    expect(kernelWrites(p)).toBe(resolved);
    // the kernel's reading is one of the readings every rule judges
    expect(argPaths(p, env)).toContain(resolved);
  });

  test('a missing folder after the symlink: taken as written', () => {
    expect(kernelPath(`${root}/notes/Dropbox/new/dir/f.txt`, env)).toBe(join(root, 'Dropbox', 'new', 'dir', 'f.txt'));
  });

  test('two readings when a `..` follows a symlink, one otherwise', () => {
    expect(readingsOf(`${root}/notes/Dropbox/../x`, env)).toEqual({ kernel: join(root, 'x'), lexical: join(root, 'notes', 'x') });
    expect(argPaths(`${root}/notes/deep/../x`, env)).toEqual([join(root, 'notes', 'x')]);
  });

  test('~ and a relative path with a working directory', () => {
    expect(argPaths('~/notes/Dropbox/../x', env)).toEqual([join(root, 'x'), join(root, 'notes', 'x')]);
    expect(argPaths('Dropbox/../x', env, join(root, 'notes'))).toEqual([join(root, 'x'), join(root, 'notes', 'x')]);
    expect(argPaths('Dropbox/x', env)).toBeNull();
  });

  test('a symlink loop is ELOOP, to the kernel and to the resolver', () => {
    symlinkSync(join(root, 'loop-b'), join(root, 'loop-a'));
    symlinkSync(join(root, 'loop-a'), join(root, 'loop-b'));
    expect(() => writeFileSync(join(root, 'loop-a', 'f'), 'x')).toThrow(/ELOOP/);
    expect(() => kernelPath(join(root, 'loop-a', 'f'), env)).toThrow(expect.objectContaining({ code: 'ELOOP' }));
    expect(argPaths(join(root, 'loop-a', 'f'), env)).toBeNull();
  });

  test('the symlink limit is the kernel’s: a chain one past it fails both ways, one at it resolves both ways', () => {
    const limit = symlinkLimit(process.platform);
    const chain = join(root, 'chain');
    mkdirSync(chain);
    mkdirSync(join(chain, 'end'));
    // l0 -> end, l1 -> l0, ...: opening l<k>/f follows k+1 links
    for (let i = 0; i <= limit; i++) symlinkSync(i === 0 ? 'end' : `l${i - 1}`, join(chain, `l${i}`));
    const atLimit = join(chain, `l${limit - 1}`, 'f');
    expect(kernelWrites(atLimit)).toBe(kernelPath(atLimit, env));
    const past = join(chain, `l${limit}`, 'f');
    expect(() => writeFileSync(past, 'x')).toThrow(/ELOOP/);
    expect(() => kernelPath(past, env)).toThrow(expect.objectContaining({ code: 'ELOOP' }));
  });
});

describe('hostile lengths', () => {
  test('a path longer than the kernel takes is not resolved (the kernel refuses it too), and fast', () => {
    const t0 = performance.now();
    expect(argPaths(`${root}/${'a/'.repeat(500_000)}f`, env)).toBeNull();
    expect(conditionsMatch([parseArgCondition('path=~/**', env)], { path: `${root}/${'a/'.repeat(500_000)}f` }, 'deny', env)).toBe(true);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
  test('a long path of `..` steps at the limit resolves as the kernel does', () => {
    const p = `${root}/notes/Dropbox/${'../Dropbox/'.repeat(300)}deep.txt`;
    expect(p.length).toBeLessThan(4095);
    expect(kernelWrites(p)).toBe(kernelPath(p, env));
  });
});

describe('path rules on a `..` after a symlink', () => {
  const value = `${root}/notes/Dropbox/../.ssh/authorized_keys`;
  test('a deny of the folder it reaches holds', () => {
    expect(conditionsMatch([parseArgCondition('path=~/.ssh/**', env)], { path: value }, 'deny', env)).toBe(true);
  });
  test('an allow of the folder it is written under does not stretch to it', () => {
    expect(conditionsMatch([parseArgCondition('path=~/notes/**', env)], { path: value }, 'allow', env)).toBe(false);
  });
  test('an allow holds when both readings are inside', () => {
    expect(conditionsMatch([parseArgCondition('path=~/**', env)], { path: value }, 'allow', env)).toBe(true);
  });
  test('an ask of the folder the text names still asks (a server may normalise the text)', () => {
    mkdirSync(join(root, 'notes', '.ssh'), { recursive: true });
    expect(conditionsMatch([parseArgCondition('path=~/notes/.ssh/**', env)], { path: value }, 'ask', env)).toBe(true);
  });
  test('a dangling symlink inside an allowed folder that points out is not allowed', () => {
    expect(conditionsMatch([parseArgCondition('path=~/notes/**', env)], { path: join(root, 'notes', 'dangling') }, 'allow', env)).toBe(false);
  });
  test('a loop is allowed by nothing and denied by its folder', () => {
    const loop = join(root, 'notes', 'self');
    symlinkSync(loop, loop);
    expect(conditionsMatch([parseArgCondition('path=~/notes/**', env)], { path: join(loop, 'f') }, 'allow', env)).toBe(false);
    expect(conditionsMatch([parseArgCondition('path=~/notes/**', env)], { path: join(loop, 'f') }, 'deny', env)).toBe(true);
  });
});

describe("an undo's folder walk", () => {
  test('a folder swapped for a symlink before the walk is a conflict', () => {
    const base = join(root, 'undo1');
    mkdirSync(join(base, 'allowed', 'sub'), { recursive: true });
    mkdirSync(join(base, 'victim'));
    const file = join(base, 'allowed', 'sub', 'notes.txt');
    const chain = folderChain(file);
    renameSync(join(base, 'allowed', 'sub'), join(base, 'moved'));
    symlinkSync(join(base, 'victim'), join(base, 'allowed', 'sub'));
    const walk = walkToFolder(file, chain, true);
    expect(walk.ok).toBe(false);
    // another real folder put in its place is not the one the call wrote in either
    rmSync(join(base, 'allowed', 'sub'));
    mkdirSync(join(base, 'allowed', 'sub'));
    expect(walkToFolder(file, chain, true).ok).toBe(false);
  });

  test.runIf(FOLDERS_HELD_BY_DESCRIPTOR)('a folder swapped for a symlink after the walk: the write lands in the folder verified, never the symlink’s target', async () => {
    const base = join(root, 'undo2');
    mkdirSync(join(base, 'allowed', 'sub'), { recursive: true });
    mkdirSync(join(base, 'victim'));
    const file = join(base, 'allowed', 'sub', 'notes.txt');
    const walk = walkToFolder(file, folderChain(file), false);
    if (walk.ok !== true) throw new Error('the walk should succeed');
    // the race: swapped between the check and the write
    renameSync(join(base, 'allowed', 'sub'), join(base, 'moved'));
    symlinkSync(join(base, 'victim'), join(base, 'allowed', 'sub'));
    await writeBack(walk.folder.at('notes.txt'), Buffer.from('old bytes'), 0o644, Date.now());
    walk.folder.close();
    expect(existsSync(join(base, 'victim', 'notes.txt'))).toBe(false);
    expect(readFileSync(join(base, 'moved', 'notes.txt'), 'utf8')).toBe('old bytes');
    expect(statSync(join(base, 'victim')).isDirectory()).toBe(true);
  });
});
