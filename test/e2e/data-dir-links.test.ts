/**
 * The folders Airlock makes for its own files, replaced by symlinks as the agent (the same user) or another person's
 * process (in /tmp) can: undo's snapshots, the database's backups, the journal's spill, the broker's socket folder.
 * None is followed: nothing where a link leads is swept, written or given another mode, no file tool runs while its
 * snapshot has nowhere safe to go, and the person is told which folder and why. Real daemon, real CLI, the
 * filesystem server from npm; ground truth is the disk.
 */
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { brokerAddress } from '../../proxy-core/src/ipc/paths.js';
import { cleanup, cli, cliJson, connectWrapped, executedCalls, fixture, onCleanup, startDaemon, tempDir, textOf, waitFor, waitForSessions } from '../helpers/airlock.js';
import { airlockWithFilesystem } from '../helpers/e2e.js';

afterEach(cleanup);

const modeOf = (p: string) => statSync(p).mode & 0o7777;
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** A folder of the user's with one file in it, of mode 0755: what a link may lead to. */
function victim(): string {
  const dir = tempDir();
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'notes.txt'), 'precious');
  return dir;
}

/**
 * A data dir a broker made its folders in (one start, then stopped), whose folder `name` the agent has since
 * replaced by a symlink to `victim()`: that folder.
 */
async function swappedForLink(home: string, name: string): Promise<string> {
  await (await startDaemon(home)).stop();
  const elsewhere = victim();
  rmSync(join(home, name), { recursive: true });
  symlinkSync(elsewhere, join(home, name));
  return elsewhere;
}

function untouched(dir: string): void {
  expect(readdirSync(dir)).toEqual(['notes.txt']);
  expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('precious');
  expect(modeOf(dir)).toBe(0o755);
}

describe("undo's snapshots folder made a symlink", () => {
  test('the broker sweeps nothing where it leads, no write_file runs until the folder is real again, and then undo works', async () => {
    const home = tempDir();
    const elsewhere = await swappedForLink(home, 'snapshots');
    const { root, w } = await airlockWithFilesystem(home, 'write_file');
    untouched(elsewhere);
    const target = join(root, 'a.txt');
    writeFileSync(target, 'before');

    const refused = await w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'after' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/undo's snapshots folder .*snapshots is a symlink/);
    expect(readFileSync(target, 'utf8')).toBe('before');
    untouched(elsewhere);

    // the link taken away: the next call makes the folder, is let through, and can be undone
    unlinkSync(join(home, 'snapshots'));
    const allowed = await w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'after' } });
    expect(allowed.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('after');
    expect(lstatSync(join(home, 'snapshots')).isDirectory()).toBe(true);
    expect(modeOf(join(home, 'snapshots'))).toBe(0o700);
    let id: string | undefined;
    await waitFor(async () => {
      const history = await cliJson<{ id: string; tool: string; undo?: { available: boolean } }[]>(home, ['history']);
      id = history.find((h) => h.tool === 'write_file' && h.undo?.available)?.id;
      return id !== undefined;
    }, 10_000, 'the allowed write_file to be undoable');
    expect((await cli(home, ['undo', id!])).code).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('before');
    untouched(elsewhere);
  });
  test('swapped for a symlink while the broker runs: snapshots still go to the folder it holds, none where the link leads, and undo reads them there', async () => {
    const home = tempDir();
    const { root, w } = await airlockWithFilesystem(home, 'write_file');
    const target = join(root, 'a.txt');
    writeFileSync(target, 'one');
    expect((await w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'two' } })).isError).toBeFalsy();

    // the agent moves the folder aside and puts a link to another folder in its place
    const elsewhere = victim();
    renameSync(join(home, 'snapshots'), join(home, 'moved'));
    symlinkSync(elsewhere, join(home, 'snapshots'));
    expect((await w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'three' } })).isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('three');
    let id: string | undefined;
    await waitFor(async () => {
      const history = await cliJson<{ id: string; tool: string; arguments: string; undo?: { available: boolean } }[]>(home, ['history']);
      id = history.find((h) => h.tool === 'write_file' && h.arguments.includes('three') && h.undo?.available)?.id;
      return id !== undefined;
    }, 10_000, 'the second write_file to be undoable');
    untouched(elsewhere);
    expect(readdirSync(join(home, 'moved')).length).toBeGreaterThan(0);
    expect((await cli(home, ['undo', id!])).code).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('two');
    untouched(elsewhere);
  });
});

describe("the database's backups folder made a symlink", () => {
  test('no copy of the database goes where it leads, and the failed backup is an event', async () => {
    const home = tempDir();
    const elsewhere = await swappedForLink(home, 'db-backups');

    await startDaemon(home);
    let failed: { type: string; detail: { error?: string } } | undefined;
    await waitFor(async () => {
      const events = await cliJson<{ type: string; detail: { error?: string } }[]>(home, ['history', '--events']);
      failed = events.find((e) => e.type === 'database-backup-failed');
      return failed !== undefined;
    }, 10_000, 'the backup at start to fail');
    expect(failed!.detail.error).toMatch(/the database backups folder .*db-backups is a symlink/);
    untouched(elsewhere);
  });
});

describe("the journal's spill folder made a symlink", () => {
  test('a wrapper whose broker is away writes no spill file where it leads, and says why', async () => {
    const home = tempDir();
    const daemon = await startDaemon(home);
    const fx = fixture(home);
    const w = await connectWrapped({ home, trust: true, command: fx.command, args: fx.args, env: fx.env });
    await waitForSessions(home, 1);
    expect((await w.client.callTool({ name: 'echo', arguments: { text: 'first' } })).isError).toBeFalsy();
    const elsewhere = victim();
    symlinkSync(elsewhere, join(home, 'spill'));
    // frozen: the wrapper forwards what its policy allows until it gives up on the broker, and the entries of
    // those calls have nowhere to go but the spill
    process.kill(daemon.proc.pid!, 'SIGSTOP');
    onCleanup(() => process.kill(daemon.proc.pid!, 'SIGCONT'));
    let n = 0;
    await waitFor(async () => {
      await w.client.callTool({ name: 'echo', arguments: { text: `away-${++n}` } }).catch(() => {});
      return /could not write the journal spill/.test(w.stderr());
    }, 20_000, 'the wrapper to try its spill');
    expect(executedCalls(fx.log, 'echo').length).toBeGreaterThan(1);
    expect(w.stderr()).toContain(`the journal spill folder ${join(home, 'spill')} is a symlink`);
    await w.close();
    untouched(elsewhere);
  }, 60_000);
});

describe("the broker's socket folder in /tmp (a data dir too deep for a socket path)", () => {
  /** A data dir whose socket goes to /tmp, and that folder. */
  function deepHome(): { home: string; folder: string } {
    const home = join(tempDir(), 'd'.repeat(120));
    mkdirSync(home);
    const { folder } = brokerAddress(home);
    expect(folder?.startsWith(tmpdir())).toBe(true);
    onCleanup(() => rmSync(folder!, { recursive: true, force: true }));
    return { home, folder: folder! };
  }

  test('made a symlink first: the broker does not start, says which folder, and leaves where it leads alone', async () => {
    const { home, folder } = deepHome();
    const elsewhere = victim();
    symlinkSync(elsewhere, folder);
    const r = await cli(home, ['daemon', '--no-presence']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`the broker's socket folder ${folder} is a symlink`);
    untouched(elsewhere);
  });

  test.runIf(isRoot)("made another user's folder first: the broker does not start, and says whose it is", async () => {
    const { home, folder } = deepHome();
    mkdirSync(folder, { mode: 0o777 });
    chmodSync(folder, 0o777);
    chownSync(folder, 65534, 65534);
    const r = await cli(home, ['daemon', '--no-presence']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`the broker's socket folder ${folder} is uid 65534's folder, not this user's (uid 0)`);
    expect(existsSync(join(folder, 'broker.sock'))).toBe(false);
    expect(modeOf(folder)).toBe(0o777);
  });
});
