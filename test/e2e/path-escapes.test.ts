/**
 * Paths that mean one thing as text and another to the file system. A `..` after a symlink (the kernel follows
 * the link first): a deny still holds, an allow does not stretch past its folder, the card shows no diff of a
 * guessed file and proposes no scope, and the snapshot is of the file that was written. A folder of a written
 * file swapped for a symlink before an undo: the undo writes and deletes nothing through it, forced or not. A
 * relative path given to the filesystem server: previewed where that server writes it. A FIFO named by a path
 * argument is judged without waiting on it. Ground truth is the disk and what the fixture server logged as executed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, test } from 'vitest';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import type { HistoryItem } from '../../proxy-core/src/protocol/api.js';
import {
  cleanup,
  cli,
  cliUndo,
  connectWrapped,
  decisionOf,
  executedCalls,
  FILESYSTEM,
  finishedCalls,
  fixture,
  onCleanup,
  startDaemon,
  tempDir,
  waitFor,
  waitForSessions,
  waitForTicket,
  wrapArgs,
} from '../helpers/airlock.js';

afterEach(cleanup);

/** Calls of `tool` that ran and were allowed, their end journaled and what undo can do for them known; newest first. */
const finished = (home: string, tool: string, count = 1): Promise<HistoryItem[]> =>
  finishedCalls(home, tool, { count, keep: (x) => x.decision === 'allow', timeoutMs: 15000 });

async function broker(home: string): Promise<BrokerClient> {
  const c = await BrokerClient.connect({ dir: home });
  onCleanup(() => c.close());
  return c;
}

/** A data dir, and a person's folder (its real path) holding `notes/`. */
function personWithNotes(): { home: string; root: string; notes: string } {
  const home = tempDir();
  const root = realpathSync(tempDir('al-home-'));
  const notes = join(root, 'notes');
  mkdirSync(notes);
  return { home, root, notes };
}

describe('a `..` after a symlink, against a server that opens the path as the kernel resolves it', () => {
  test('a deny on ~/.ssh holds; an allow on ~/notes does not stretch; the card and the snapshot name the file written', async () => {
    const { home, root, notes } = personWithNotes();
    mkdirSync(join(root, 'Dropbox'));
    mkdirSync(join(root, '.ssh'));
    symlinkSync(join(root, 'Dropbox'), join(notes, 'Dropbox'));
    await startDaemon(home);
    for (const rule of [
      ['allow', '--server', 'fixture', '--tool', 'save_file', '--arg', `path=${notes}/**`],
      ['deny', '--server', 'fixture', '--tool', 'save_file', '--arg', `path=${join(root, '.ssh')}/**`],
    ]) {
      expect((await cli(home, ['rules', 'add', ...rule])).code).toBe(0);
    }
    expect((await cli(home, ['file-tools', 'set', 'fixture', 'save_file', 'write', '--path-arg', 'path', '--content-arg', 'content'])).code).toBe(0);
    const f = fixture(home, ['--catalog', 'files']);
    const w = await connectWrapped({ home, server: 'fixture', command: f.command, args: f.args, env: f.env });
    await waitForSessions(home, 1);

    // the attack: the text is under ~/notes, the file is ~/.ssh/authorized_keys (path.join would remove the `..`)
    const key = join(root, '.ssh', 'authorized_keys');
    const denied = await w.client.callTool({ name: 'save_file', arguments: { path: `${notes}/Dropbox/../.ssh/authorized_keys`, content: 'ssh-ed25519 AAAA attacker' } });
    expect(decisionOf(denied), JSON.stringify(denied)).toMatchObject({ decision: "deny", decidedBy: "rule" });
    expect(existsSync(key)).toBe(false);
    expect(executedCalls(f.log, 'save_file')).toEqual([]);

    // the same shape towards a file no rule names: the allow on ~/notes does not cover it, so it is asked
    const outside = join(root, 'elsewhere.txt');
    writeFileSync(outside, 'the original\n');
    const call = w.client.callTool({ name: 'save_file', arguments: { path: `${notes}/Dropbox/../elsewhere.txt`, content: 'written' } });
    const ticket = await waitForTicket(home, 'save_file');
    const c = await broker(home);
    const full = (await c.call('pending', {})).find((t) => t.id === ticket.id)!;
    expect((full.scopes ?? []).filter((s) => s.args.some((a) => a.kind === 'path'))).toEqual([]);
    const preview = await c.call('ticket.preview', { id: ticket.id });
    expect(preview.kind).toBe('error');
    expect(preview.kind === 'error' && preview.reason).toContain(outside);
    await cli(home, ['approve', ticket.id]);
    expect((await call).isError).toBeFalsy();
    expect(readFileSync(outside, 'utf8')).toBe('written');
    expect(existsSync(join(notes, 'elsewhere.txt'))).toBe(false);

    // the snapshot was of the file written: undo puts it back (it does not say the call changed nothing)
    const [entry] = await finished(home, 'save_file');
    expect(entry!.undo).toMatchObject({ available: true, kind: 'snapshot' });
    expect(entry!.undo!.paths).toContain(outside);
    const { report } = await cliUndo(home, [entry!.id]);
    expect(report.ok).toBe(true);
    expect(readFileSync(outside, 'utf8')).toBe('the original\n');
    expect(existsSync(join(notes, 'elsewhere.txt'))).toBe(false);
  });
});

describe('a path argument naming a FIFO the agent made', () => {
  test('is judged at once (nothing opened to block on): a deny on its folder holds, and the server runs nothing', async () => {
    const { home, root, notes } = personWithNotes();
    execFileSync('mkfifo', [join(notes, 'pipe')]);
    symlinkSync(join(notes, 'pipe'), join(root, 'innocent.txt'));
    await startDaemon(home);
    expect((await cli(home, ['rules', 'add', 'deny', '--server', 'fixture', '--tool', 'save_file', '--arg', `path=${notes}/**`])).code).toBe(0);
    const f = fixture(home, ['--catalog', 'files']);
    const w = await connectWrapped({ home, server: 'fixture', command: f.command, args: f.args, env: f.env });
    await waitForSessions(home, 1);
    // the FIFO itself, and a symlink outside the folder that leads to it: both are the file in ~/notes
    for (const path of [join(notes, 'pipe'), join(root, 'innocent.txt')]) {
      const denied = await w.client.callTool({ name: 'save_file', arguments: { path, content: 'x' } }, undefined, { timeout: 10_000 });
      expect(decisionOf(denied), JSON.stringify(denied)).toMatchObject({ decision: 'deny', decidedBy: 'rule' });
    }
    expect(executedCalls(f.log, 'save_file')).toEqual([]);
  });
});

describe('a symlink on the way changed while the call runs', () => {
  test('the snapshot of the file it named is not taken for what the call did', async () => {
    const { home, root } = personWithNotes();
    mkdirSync(join(root, 'Dropbox'));
    mkdirSync(join(root, 'other'));
    symlinkSync(join(root, 'Dropbox'), join(root, 'notes', 'Dropbox'));
    await startDaemon(home);
    expect((await cli(home, ['rules', 'add', 'allow', '--server', 'fixture', '--tool', 'save_file'])).code).toBe(0);
    expect((await cli(home, ['file-tools', 'set', 'fixture', 'save_file', 'write', '--path-arg', 'path', '--content-arg', 'content'])).code).toBe(0);
    const f = fixture(home, ['--catalog', 'files']);
    const w = await connectWrapped({ home, server: 'fixture', command: f.command, args: f.args, env: f.env });
    await waitForSessions(home, 1);

    const call = w.client.callTool({ name: 'save_file', arguments: { path: join(root, 'notes', 'Dropbox', 'f.txt'), content: 'x', ms: 1500 } });
    // the call is logged by the server once Airlock let it through (its snapshot taken): now the link is retargeted
    await waitFor(() => executedCalls(f.log, 'save_file').length === 1, 15000, 'the call to reach the server');
    rmSync(join(root, 'notes', 'Dropbox'));
    symlinkSync(join(root, 'other'), join(root, 'notes', 'Dropbox'));
    expect((await call).isError).toBeFalsy();
    expect(readFileSync(join(root, 'other', 'f.txt'), 'utf8')).toBe('x');
    expect(existsSync(join(root, 'Dropbox', 'f.txt'))).toBe(false);

    const [entry] = await finished(home, 'save_file');
    expect(entry!.undo).toMatchObject({ available: false, state: 'unavailable' });
    expect(entry!.undo!.reason).toMatch(/symlink on the way changed/);
  });
});

describe('undo and a folder swapped for a symlink after the call (@modelcontextprotocol/server-filesystem)', () => {
  test('nothing is written or removed through the symlink, with or without force', async () => {
    const home = tempDir();
    const root = realpathSync(tempDir('al-fs-'));
    const allowed = join(root, 'allowed');
    const victim = join(root, 'victim-docs');
    mkdirSync(join(allowed, 'sub'), { recursive: true });
    mkdirSync(victim);
    writeFileSync(join(allowed, 'sub', 'notes.txt'), 'old notes\n');
    await startDaemon(home);
    const w = await connectWrapped({ home, server: 'filesystem', trust: true, command: process.execPath, args: [FILESYSTEM, allowed] });
    await waitForSessions(home, 1);
    expect((await cli(home, ['rules', 'add', 'allow', '--server', 'filesystem', '--tool', 'write_file'])).code).toBe(0);

    for (const [name, content] of [['notes.txt', 'new notes\n'], ['new.txt', 'created\n']] as const) {
      const r = await w.client.callTool({ name: 'write_file', arguments: { path: join(allowed, 'sub', name), content } });
      expect(r.isError).toBeFalsy();
    }
    const calls = await finished(home, 'write_file', 2);
    // newest first: the created file, then the overwritten one
    const [created, overwritten] = calls;

    // the swap: allowed/sub is now a symlink to the victim's folder, which holds files of the same names
    renameSync(join(allowed, 'sub'), join(root, 'sub-moved'));
    writeFileSync(join(victim, 'notes.txt'), 'new notes\n');
    writeFileSync(join(victim, 'new.txt'), 'created\n');
    symlinkSync(victim, join(allowed, 'sub'));

    for (const id of [overwritten!.id, created!.id]) {
      for (const args of [[id], [id, '--force']]) {
        const { report } = await cliUndo(home, args);
        expect(report.ok).toBe(false);
        expect(report.conflicts.length).toBeGreaterThan(0);
        expect(report.summary).toMatch(/forcing does not change that/);
      }
    }
    expect(readFileSync(join(victim, 'notes.txt'), 'utf8')).toBe('new notes\n');
    expect(readFileSync(join(victim, 'new.txt'), 'utf8')).toBe('created\n');
    expect(readFileSync(join(root, 'sub-moved', 'notes.txt'), 'utf8')).toBe('new notes\n');
  });
});

describe('a relative path given to the filesystem server', () => {
  test('previewed in its allowed folder, where it writes, not in the working directory', async () => {
    const home = tempDir();
    const allowed = realpathSync(tempDir('al-allowed-'));
    const cwd = realpathSync(tempDir('al-cwd-'));
    writeFileSync(join(allowed, 'report.txt'), 'allowed version\n');
    writeFileSync(join(cwd, 'report.txt'), 'cwd version\n');
    await startDaemon(home);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: wrapArgs({ home, server: 'filesystem', command: process.execPath, args: [FILESYSTEM, allowed] }),
      env: { ...(process.env as Record<string, string>), AIRLOCK_HOME: home },
      cwd,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'path-escapes-test', version: '1.0.0' });
    await client.connect(transport);
    onCleanup(() => client.close().catch(() => {}));
    await waitForSessions(home, 1);

    const call = client.callTool({ name: 'write_file', arguments: { path: 'report.txt', content: 'new report\n' } });
    const ticket = await waitForTicket(home, 'write_file');
    const c = await broker(home);
    const preview = await c.call('ticket.preview', { id: ticket.id });
    expect(preview).toMatchObject({ kind: 'file', path: join(allowed, 'report.txt'), exists: true, added: 1, removed: 1 });
    expect(preview.kind === 'file' && preview.diff).toContain('-allowed version');
    await cli(home, ['approve', ticket.id]);
    expect((await call).isError).toBeFalsy();
    expect(readFileSync(join(allowed, 'report.txt'), 'utf8')).toBe('new report\n');
    expect(readFileSync(join(cwd, 'report.txt'), 'utf8')).toBe('cwd version\n');
  });
});
