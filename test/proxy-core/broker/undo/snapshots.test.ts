/**
 * Snapshot bookkeeping, without a broker: file states as undo reads them (undo-files.ts), blobs kept once per
 * content with a reference count (snapshots.ts), records that hold and let go of them, and the total cap
 * pruning the oldest first (undo-records.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { MB, SnapshotBlobs, snapshotCaps } from '../../../../proxy-core/src/broker/undo/snapshots.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import { capture, currentState, heldAlone, hold, readHeld, removeEmptyFolders, sameState, sha256, writeBack } from '../../../../proxy-core/src/broker/undo/files.js';
import { type UndoRecord, UndoRecords } from '../../../../proxy-core/src/broker/undo/records.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'al-snap-'));
  dirs.push(d);
  return d;
}

function setup() {
  const dir = temp();
  const store = new Store(join(dir, 'airlock.db'));
  stores.push(store);
  const blobs = new SnapshotBlobs(dir, store.db);
  blobs.open();
  const records = new UndoRecords(store.db, blobs);
  return { dir, store, blobs, records };
}

/** A record of a call that wrote one file whose prior bytes were `content`. */
function recordOf(callId: string, content: Buffer, createdAt: number): [Omit<UndoRecord, 'holds'>, Map<string, Buffer>] {
  const sha = sha256(content);
  return [
    {
      callId,
      server: 'fs',
      tool: 'write_file',
      sessionId: 's1',
      kind: 'snapshot',
      state: 'ready',
      reason: null,
      plan: { kind: 'snapshot', paths: [{ arg: 'path', path: `/x/${callId}`, before: { type: 'file', sha256: sha, size: content.length, mode: 0o100644, mtimeMs: 0 } }] },
      createdAt,
      undoneBy: null,
      undoOf: null,
    },
    new Map([[sha, content]]),
  ];
}

async function keep(blobs: SnapshotBlobs, records: UndoRecords, callId: string, content: Buffer, createdAt: number): Promise<void> {
  const [rec, contents] = recordOf(callId, content, createdAt);
  await blobs.write(sha256(content), content);
  records.insert(rec, contents);
}

describe('file states', () => {
  test('hold: a file with one name is kept by a link; a symlink, a folder, a missing path or a file with a second name is not, and no link is left', async () => {
    const { dir, blobs } = setup();
    const files = join(dir, 'files');
    mkdirSync(files);
    const file = join(files, 'f');
    writeFileSync(file, 'old bytes');
    const name = blobs.heldName();
    const kept = hold(file, blobs.heldPath(name), name);
    expect(kept).toMatchObject({ state: { type: 'file', size: 9 }, held: { name, ino: lstatSync(file).ino } });
    // the server replaces the file: the link is then the old file's only name, and holds its bytes
    writeFileSync(join(files, 'new'), 'new bytes');
    execFileSync('mv', [join(files, 'new'), file]);
    expect(heldAlone(blobs.heldPath(name), kept!.held)).toBe(true);
    expect((await readHeld(blobs.heldPath(name), kept!.held)).toString()).toBe('old bytes');
    const before = new Set(readdirSync(join(dir, 'snapshots')));
    writeFileSync(join(files, 'target'), 'secret');
    symlinkSync(join(files, 'target'), join(files, 'link'));
    writeFileSync(join(files, 'twice'), 'two names');
    linkSync(join(files, 'twice'), join(files, 'twice-2'));
    for (const path of [join(files, 'link'), files, join(files, 'missing'), join(files, 'twice')]) {
      const n = blobs.heldName();
      expect(hold(path, blobs.heldPath(n), n)).toBeNull();
    }
    expect(new Set(readdirSync(join(dir, 'snapshots')))).toEqual(before);
    expect(lstatSync(join(files, 'link')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(files, 'twice-2'), 'utf8')).toBe('two names');
  });

  test('held names are new each time, in the form a held link has, and differ from broker to broker', () => {
    const { blobs, store } = setup();
    const names = Array.from({ length: 1000 }, () => blobs.heldName());
    expect(new Set(names).size).toBe(1000);
    for (const n of names) expect(n).toMatch(/^\.held-[0-9a-f]{16}$/);
    for (const n of names.slice(0, 3)) expect(() => blobs.heldPath(n)).not.toThrow();
    const other = new SnapshotBlobs(temp(), store.db);
    expect(other.heldName()).not.toBe(new SnapshotBlobs(temp(), store.db).heldName());
  });

  test('absent, with the folders a mkdir -p would create, deepest first', async () => {
    const dir = temp();
    const got = await capture(join(dir, 'a', 'b', 'file.txt'), MB);
    expect(got.state).toEqual({ type: 'absent', missing: [join(dir, 'a', 'b'), join(dir, 'a')] });
  });

  test('a file: its bytes, hash, mode and mtime; the same state read back without the bytes', async () => {
    const dir = temp();
    const path = join(dir, 'f.txt');
    writeFileSync(path, 'hello');
    chmodSync(path, 0o600);
    const got = await capture(path, MB);
    expect(got.state).toMatchObject({ type: 'file', sha256: sha256(Buffer.from('hello')), size: 5 });
    expect('content' in got && got.content?.toString()).toBe('hello');
    expect(sameState(got.state, await currentState(path, MB))).toBe(true);
    chmodSync(path, 0o644);
    // a mode change is a change
    expect(sameState(got.state, await currentState(path, MB))).toBe(false);
  });

  test('a file over the cap is not read; one over the hash limit is unknown', async () => {
    const dir = temp();
    const path = join(dir, 'big.bin');
    writeFileSync(path, Buffer.alloc(2048));
    expect(await capture(path, 1024)).toMatchObject({ tooLarge: true, state: { type: 'file', size: 2048 } });
    expect(await currentState(path, 1024)).toMatchObject({ type: 'unknown' });
  });

  test('a symlink at the path and a FIFO are never read (no hang, no following)', async () => {
    const dir = temp();
    writeFileSync(join(dir, 'target'), 'secret');
    symlinkSync(join(dir, 'target'), join(dir, 'link'));
    expect((await capture(join(dir, 'link'), MB)).state).toEqual({ type: 'other', what: 'symlink' });
    if (process.platform !== 'win32') {
      execFileSync('mkfifo', [join(dir, 'fifo')]);
      expect((await capture(join(dir, 'fifo'), MB)).state).toEqual({ type: 'other', what: 'FIFO' });
      expect(await currentState(join(dir, 'fifo'), MB)).toEqual({ type: 'other', what: 'FIFO' });
    }
  });

  test('writeBack puts bytes, mode and mtime back, over a symlink rather than through it', async () => {
    const dir = temp();
    const outside = join(dir, 'outside');
    writeFileSync(outside, 'not to be touched');
    const path = join(dir, 'f.txt');
    symlinkSync(outside, path);
    await writeBack(path, Buffer.from('restored'), 0o100640, 1_600_000_000_000);
    const st = statSync(path);
    expect(st.isFile()).toBe(true);
    expect(st.mode & 0o777).toBe(0o640);
    expect(Math.round(st.mtimeMs)).toBe(1_600_000_000_000);
    expect(execFileSync('cat', [outside]).toString()).toBe('not to be touched');
    // no temporary file is left beside it
    expect(readdirSync(dir).sort()).toEqual(['f.txt', 'outside']);
  });

  test('folders a call created are removed only while empty', async () => {
    const dir = temp();
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    writeFileSync(join(dir, 'a', 'other.txt'), 'someone else put this here');
    const kept = await removeEmptyFolders([join(dir, 'a', 'b'), join(dir, 'a')]);
    expect(existsSync(join(dir, 'a', 'b'))).toBe(false);
    expect(kept).toEqual([expect.stringContaining('ENOTEMPTY')]);
    expect(existsSync(join(dir, 'a', 'other.txt'))).toBe(true);
  });
});

describe('blobs and records', () => {
  test('the same bytes are kept once, referenced by each record, and deleted with the last reference', async () => {
    const { blobs, records, dir } = setup();
    const content = Buffer.from('the same prior state');
    await keep(blobs, records, 'c1', content, 1);
    await keep(blobs, records, 'c2', content, 2);
    expect(blobs.totals()).toEqual({ blobs: 1, bytes: content.length });
    const file = join(dir, 'snapshots', sha256(content));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'snapshots')).mode & 0o777).toBe(0o700);

    records.update('c1', { state: 'unchanged' }, 3);
    expect(existsSync(file)).toBe(true);
    records.remove('c2');
    expect(existsSync(file)).toBe(false);
    expect(blobs.totals()).toEqual({ blobs: 0, bytes: 0 });
    // a record that let go does not let go twice
    records.update('c1', { state: 'pruned' }, 4);
    expect(blobs.totals()).toEqual({ blobs: 0, bytes: 0 });
  });

  test('a damaged or missing blob is an error, never restored', async () => {
    const { blobs, records, dir } = setup();
    const content = Buffer.from('original');
    await keep(blobs, records, 'c1', content, 1);
    writeFileSync(join(dir, 'snapshots', sha256(content)), 'tampered');
    await expect(blobs.read(sha256(content))).rejects.toThrow(/damaged/);
    rmSync(join(dir, 'snapshots', sha256(content)));
    await expect(blobs.read(sha256(content))).rejects.toThrow(/missing/);
  });

  test('over the total cap, the oldest records are pruned first, the ones to keep never', async () => {
    const { blobs, records } = setup();
    for (let i = 1; i <= 5; i++) await keep(blobs, records, `c${i}`, Buffer.alloc(100, i), i);
    expect(blobs.totals().bytes).toBe(500);
    const pruned = records.prune(250, new Set(['c1']), 10);
    // c1 is kept (it is being prepared right now); c2, c3 and c4 go, oldest first, until 200 bytes are left
    expect(pruned.callIds).toEqual(['c2', 'c3', 'c4']);
    expect(blobs.totals().bytes).toBe(200);
    expect(records.get('c2')).toMatchObject({ state: 'pruned', holds: false, reason: expect.stringContaining('oldest go first') });
    expect(records.get('c5')).toMatchObject({ state: 'ready', holds: true });
    expect(records.holding()).toBe(2);
  });

  test('the totals are kept as blobs come and go, rolled back with a failed transaction, and counted again at a start', async () => {
    const { blobs, records, dir, store } = setup();
    for (let i = 1; i <= 3; i++) await keep(blobs, records, `c${i}`, Buffer.alloc(100 * i, i), i);
    const sum = () => store.db.prepare('SELECT COUNT(*) AS blobs, SUM(bytes) AS bytes FROM undo_blobs').get();
    expect(blobs.totals()).toEqual({ blobs: 3, bytes: 600 });
    records.remove('c2');
    expect(blobs.totals()).toEqual(sum());
    expect(blobs.totals()).toEqual({ blobs: 2, bytes: 400 });
    // a transaction that adds a blob and fails leaves the totals as they were
    expect(() =>
      store.db.transaction(() => {
        blobs.ref(sha256(Buffer.from('never kept')), Buffer.from('never kept'));
        throw new Error('the record could not be stored');
      })(),
    ).toThrow(/could not be stored/);
    expect(blobs.totals()).toEqual({ blobs: 2, bytes: 400 });
    // a totals row edited (or deleted) by hand while the broker was down is counted again when it starts
    store.db.prepare('UPDATE undo_blob_totals SET blobs = 999, bytes = 1').run();
    new SnapshotBlobs(dir, store.db).open();
    expect(blobs.totals()).toEqual({ blobs: 2, bytes: 400 });
    store.db.prepare('DELETE FROM undo_blob_totals').run();
    expect(blobs.totals()).toEqual({ blobs: 2, bytes: 400 });
  });

  test('a blob left without a record by a crash is swept at the next start', async () => {
    const { dir, store } = setup();
    writeFileSync(join(dir, 'snapshots', sha256(Buffer.from('orphan'))), 'orphan');
    writeFileSync(join(dir, 'snapshots', '.tmp-0123'), 'half written');
    new SnapshotBlobs(dir, store.db).open();
    expect(readdirSync(join(dir, 'snapshots'))).toEqual([]);
  });

  test('caps: the settings when sensible (MB), the defaults otherwise; a file never over the total', () => {
    const settings = (s: Record<string, string>) => (key: string) => s[key];
    const defaults = { fileMb: 10, totalMb: 500 };
    expect(snapshotCaps(settings({}), defaults)).toEqual({ fileBytes: 10 * MB, totalBytes: 500 * MB });
    expect(snapshotCaps(settings({ 'snapshot-file-mb': '2', 'snapshot-total-mb': '20' }), defaults)).toEqual({ fileBytes: 2 * MB, totalBytes: 20 * MB });
    expect(snapshotCaps(settings({ 'snapshot-file-mb': '1000', 'snapshot-total-mb': '20' }), defaults)).toEqual({ fileBytes: 20 * MB, totalBytes: 20 * MB });
    expect(snapshotCaps(settings({ 'snapshot-file-mb': '-1', 'snapshot-total-mb': 'lots' }), defaults)).toEqual({ fileBytes: 10 * MB, totalBytes: 500 * MB });
  });
});

test('mtime survives a restore to the millisecond the filesystem keeps', async () => {
  const dir = temp();
  const path = join(dir, 'f');
  writeFileSync(path, 'x');
  utimesSync(path, 1_500_000_000, 1_500_000_000);
  const before = await capture(path, MB);
  writeFileSync(path, 'changed');
  const s = before.state;
  if (s.type !== 'file' || !('content' in before) || !before.content) throw new Error('expected a file');
  await writeBack(path, before.content, s.mode, s.mtimeMs);
  expect(statSync(path).mtimeMs).toBe(s.mtimeMs);
});
