import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { ensureOwnFolder, holdOwnFolder, inOwnFolder, NotOwnFolderError, PROC_FD } from '../../../proxy-core/src/util/own-folder.js';
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

describe('inOwnFolder', () => {
  test('holds the folder while fn runs, and lets it go once fn returns or its promise settles', async () => {
    const base = tempDir();
    let self = '';
    expect(inOwnFolder(join(base, 'a'), 'the test folder', (folder) => ((self = folder.self), 7))).toBe(7);
    if (PROC_FD) expect(() => readdirSync(self)).toThrow();
    const later = inOwnFolder(join(base, 'b'), 'the test folder', async (folder) => {
      self = folder.self;
      await new Promise((r) => setTimeout(r, 5));
      writeFileSync(folder.at('x'), 'y');
      return 'done';
    });
    // held while the promise is out
    expect(readdirSync(self)).toEqual([]);
    await expect(later).resolves.toBe('done');
    expect(readFileSync(join(base, 'b', 'x'), 'utf8')).toBe('y');
    if (PROC_FD) expect(() => readdirSync(self)).toThrow();
  });

  test.runIf(PROC_FD !== null)('what fn writes after the folder is swapped for a link lands in the folder held', async () => {
    const base = tempDir();
    const path = join(base, 'db-backups');
    const elsewhere = tempDir();
    await inOwnFolder(path, 'the test folder', async (folder) => {
      // the swap comes between the check and the write
      renameSync(path, join(base, 'moved'));
      symlinkSync(elsewhere, path);
      await new Promise((r) => setImmediate(r));
      writeFileSync(folder.at('copy'), 'secret');
    });
    expect(readFileSync(join(base, 'moved', 'copy'), 'utf8')).toBe('secret');
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  test.runIf(PROC_FD !== null)("a failure names the folder's path, not the descriptor's it was reached through", async () => {
    const path = join(tempDir(), 'backups');
    const failed = inOwnFolder(path, 'the test folder', async (folder) => {
      writeFileSync(folder.at('first'), 'x');
      writeFileSync(folder.at('first'), 'y', { flag: 'wx' });
    });
    const err = (await failed.catch((e: unknown) => e)) as NodeJS.ErrnoException;
    expect(err.code).toBe('EEXIST');
    expect(err.message).toContain(join(path, 'first'));
    expect(err.message).not.toContain('/proc/self/fd');
    expect(err.path).toBe(join(path, 'first'));
    expect(() => inOwnFolder(path, 'the test folder', (folder) => readFileSync(folder.at('none')))).toThrow(join(path, 'none'));
  });

  test.runIf(PROC_FD !== null)("said: the descriptor's own path becomes the folder's, another descriptor's that begins the same is left", () => {
    const path = join(tempDir(), 'spill');
    inOwnFolder(path, 'the test folder', (folder) => {
      expect(folder.said(`open '${folder.self}/a' failed; ${folder.self}9/b is not it; ${folder.self}`)).toBe(`open '${path}/a' failed; ${folder.self}9/b is not it; ${path}`);
    });
  });

  test('a link where the folder goes is refused before fn runs', () => {
    const link = join(tempDir(), 'spill');
    symlinkSync(tempDir(), link);
    let ran = false;
    expect(() => inOwnFolder(link, 'the journal spill folder', () => (ran = true))).toThrow(NotOwnFolderError);
    expect(ran).toBe(false);
  });
});
