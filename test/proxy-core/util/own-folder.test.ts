import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { ensureOwnFolder, holdOwnFolder, NotOwnFolderError, PROC_FD } from '../../../proxy-core/src/util/own-folder.js';
import { cleanup, tempDir } from '../../helpers/airlock.js';

afterEach(cleanup);

const modeOf = (p: string) => statSync(p).mode & 0o7777;
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

describe('ensureOwnFolder', () => {
  test('makes a missing folder, and the folders above it, with the mode asked for', () => {
    const path = join(tempDir(), 'a', 'b');
    ensureOwnFolder(path, 'the test folder');
    expect(statSync(path).isDirectory()).toBe(true);
    expect(modeOf(path)).toBe(0o700);
  });

  test("sets the mode of a folder of this user's that has another", () => {
    const path = join(tempDir(), 'open');
    mkdirSync(path, { mode: 0o755 });
    chmodSync(path, 0o755);
    ensureOwnFolder(path, 'the test folder');
    expect(modeOf(path)).toBe(0o700);
    ensureOwnFolder(path, 'the test folder', 0o750);
    expect(modeOf(path)).toBe(0o750);
  });

  test('refuses a symlink to a folder, and leaves the folder it points to as it was', () => {
    const target = tempDir();
    chmodSync(target, 0o755);
    writeFileSync(join(target, 'notes.txt'), 'precious');
    const link = join(tempDir(), 'snapshots');
    symlinkSync(target, link);
    expect(() => ensureOwnFolder(link, "undo's snapshots folder")).toThrow(NotOwnFolderError);
    expect(() => ensureOwnFolder(link, "undo's snapshots folder")).toThrow(
      `undo's snapshots folder ${link} is a symlink: Airlock keeps its own files only in a real folder of its own, and will not use this one. Move it away and Airlock makes a new one.`,
    );
    expect(modeOf(target)).toBe(0o755);
    expect(readdirSync(target)).toEqual(['notes.txt']);
  });

  test('refuses a dangling symlink and a file', () => {
    const dir = tempDir();
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    // mkdir -p stops at the link (it exists); the folder it would lead to is not made
    expect(() => ensureOwnFolder(join(dir, 'dangling'), 'the test folder')).toThrow(/dangling is a symlink:/);
    expect(readdirSync(dir).sort()).toEqual(['dangling']);
    writeFileSync(join(dir, 'file'), 'x');
    expect(() => ensureOwnFolder(join(dir, 'file'), 'the test folder')).toThrow(/the test folder .*file is not a folder:/);
  });

  test.runIf(isRoot)("refuses another user's folder (where /tmp lets anyone make one first)", () => {
    const path = join(tempDir(), 'theirs');
    mkdirSync(path, { mode: 0o777 });
    chownSync(path, 65534, 65534);
    expect(() => ensureOwnFolder(path, "the broker's socket folder")).toThrow(/is uid 65534's folder, not this user's \(uid 0\)/);
    expect(statSync(path).uid).toBe(65534);
  });
});

describe('holdOwnFolder', () => {
  test.runIf(PROC_FD !== null)('a held folder is reached through its descriptor: swapped for a link after the check, the link is not followed', () => {
    const base = tempDir();
    const path = join(base, 'snapshots');
    const folder = holdOwnFolder(path, 'the test folder');
    try {
      const elsewhere = tempDir();
      renameSync(path, join(base, 'moved'));
      symlinkSync(elsewhere, path);
      writeFileSync(folder.at('blob'), 'kept');
      expect(readdirSync(folder.self)).toEqual(['blob']);
      expect(readFileSync(join(base, 'moved', 'blob'), 'utf8')).toBe('kept');
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      folder.close();
    }
    // let go: the descriptor's path no longer names it
    expect(() => readdirSync(folder.self)).toThrow();
  });

  test('gone: a held folder removed is gone; one moved elsewhere is still there to write in', () => {
    const base = tempDir();
    const moved = holdOwnFolder(join(base, 'a'), 'the test folder');
    const removed = holdOwnFolder(join(base, 'b'), 'the test folder');
    try {
      renameSync(join(base, 'a'), join(base, 'a2'));
      rmSync(join(base, 'b'), { recursive: true });
      expect(moved.gone()).toBe(false);
      expect(removed.gone()).toBe(true);
    } finally {
      moved.close();
      removed.close();
    }
  });
});
