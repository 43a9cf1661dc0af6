/**
 * An argument-scoped rule against the real filesystem server: writes under ~/notes run without asking; a write
 * elsewhere, a `..` escape and a symlink out of the folder all ask. The files on disk are the ground truth.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { cleanup, cli, cliJson, connectWrapped, decisionOf, FILESYSTEM, startDaemon, tempDir, waitForSessions, waitForTicket } from '../helpers/airlock.js';

afterEach(cleanup);

test('allow write_file when path is under notes: the rule runs what it names and asks for everything else', async () => {
  const home = tempDir();
  const root = realpathSync(tempDir('al-fs-'));
  const notes = join(root, 'notes');
  mkdirSync(notes);
  mkdirSync(join(root, 'private'));
  symlinkSync(join(root, 'private'), join(notes, 'out'));
  await startDaemon(home);
  const added = await cli(home, ['rules', 'add', 'allow', '--server', 'filesystem', '--tool', 'write_file', '--arg', `path=${notes}/**`]);
  expect(added.code).toBe(0);
  expect(added.stdout).toContain(`when path under ${notes}/**`);
  expect((await cliJson<{ args: unknown[] }[]>(home, ['rules']))[0]!.args).toEqual([{ arg: 'path', kind: 'path', glob: `${notes}/**` }]);

  const w = await connectWrapped({ home, server: 'filesystem', command: process.execPath, args: [FILESYSTEM, root] });
  await waitForSessions(home, 1);
  const ok = await w.client.callTool({ name: 'write_file', arguments: { path: join(notes, 'today.md'), content: 'inside' } });
  expect(ok.isError).toBeFalsy();
  expect(readFileSync(join(notes, 'today.md'), 'utf8')).toBe('inside');

  for (const path of [join(root, 'private', 'a.txt'), join(notes, '..', 'private', 'b.txt'), join(notes, 'out', 'c.txt')]) {
    const call = w.client.callTool({ name: 'write_file', arguments: { path, content: 'outside' } });
    const ticket = await waitForTicket(home, 'write_file');
    expect(ticket.class).toBe('destructive');
    await cli(home, ['deny', ticket.id]);
    const denied = await call;
    expect(decisionOf(denied)).toMatchObject({ decision: 'deny', decidedBy: 'user' });
  }
  for (const name of ['a.txt', 'b.txt', 'c.txt']) expect(existsSync(join(root, 'private', name))).toBe(false);
});
