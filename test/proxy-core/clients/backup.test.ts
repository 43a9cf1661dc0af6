import { readdirSync, readFileSync, renameSync, statSync, symlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { backupPath, loadRemoteOriginals, remoteOriginalsPath, saveFirstBackup, saveRemoteOriginals } from '../../../proxy-core/src/clients/backup.js';
import { PROC_FD } from '../../../proxy-core/src/util/own-folder.js';
import { cleanup, tempDir } from '../../helpers/airlock.js';

afterEach(cleanup);

const CONFIG = '/home/someone/.cursor/mcp.json';

describe('the first backup of a client config', () => {
  test('is written once, 0600, in a 0700 folder, and never overwritten', async () => {
    const data = tempDir();
    const first = await saveFirstBackup(data, CONFIG, Buffer.from('{"token":"s3cret"}'));
    expect(first).toEqual({ path: backupPath(data, CONFIG), created: true });
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(data, 'backups')).mode & 0o777).toBe(0o700);
    const again = await saveFirstBackup(data, CONFIG, Buffer.from('changed'));
    expect(again).toEqual({ path: first.path, created: false });
    expect(readFileSync(first.path, 'utf8')).toBe('{"token":"s3cret"}');
  });

  test('a backups folder that is a symlink is refused, and nothing is written where it leads', async () => {
    const data = tempDir();
    const elsewhere = tempDir();
    symlinkSync(elsewhere, join(data, 'backups'));
    await expect(saveFirstBackup(data, CONFIG, Buffer.from('secret'))).rejects.toThrow(/the client configs' backups folder .* is a symlink/);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  test.runIf(PROC_FD !== null)('the folder swapped for a symlink as the write goes out: the backup is in the folder checked, none where the link leads', async () => {
    const data = tempDir();
    const elsewhere = tempDir();
    const folder = join(data, 'backups');
    await saveFirstBackup(data, '/other/config.json', Buffer.from('x'));
    const saving = saveFirstBackup(data, CONFIG, Buffer.from('{"token":"s3cret"}'));
    // swapped while the write is on its way (its open runs on a worker thread, before or after the swap: either
    // way the backup must land in the folder checked)
    renameSync(folder, join(data, 'moved'));
    symlinkSync(elsewhere, folder);
    expect((await saving).created).toBe(true);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readFileSync(join(data, 'moved', basename(backupPath(data, CONFIG))), 'utf8')).toBe('{"token":"s3cret"}');
  });
});

describe("the remote entries' originals", () => {
  test('round trip, 0600', async () => {
    const data = tempDir();
    const originals = { '/mcpServers/remote': { raw: '{"url":"https://x","headers":{"Authorization":"Bearer s3cret"}}', wrote: { command: 'node' } } };
    await saveRemoteOriginals(data, CONFIG, originals);
    expect(await loadRemoteOriginals(data, CONFIG)).toEqual(originals);
    expect(statSync(remoteOriginalsPath(data, CONFIG)).mode & 0o777).toBe(0o600);
    // no temporary file is left beside it
    expect(readdirSync(join(data, 'backups'))).toEqual([basename(remoteOriginalsPath(data, CONFIG))]);
  });

  test.runIf(PROC_FD !== null)('the folder swapped for a symlink as they are written: they are in the folder checked, none where the link leads', async () => {
    const data = tempDir();
    const elsewhere = tempDir();
    const folder = join(data, 'backups');
    await saveFirstBackup(data, CONFIG, Buffer.from('x'));
    const saving = saveRemoteOriginals(data, CONFIG, { '/mcpServers/remote': { raw: '{"headers":{"Authorization":"Bearer s3cret"}}', wrote: {} } });
    renameSync(folder, join(data, 'moved'));
    symlinkSync(elsewhere, folder);
    await saving;
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readdirSync(join(data, 'moved')).sort()).toEqual([basename(backupPath(data, CONFIG)), basename(remoteOriginalsPath(data, CONFIG))].sort());
  });
});
