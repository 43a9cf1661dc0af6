/**
 * The broker's pick-up of spill files that wrappers which are gone left behind: a dead wrapper's file taken in and
 * removed; a live one's, a name no wrapper writes, and every file behind a spill folder made a symlink left alone;
 * a link or a FIFO set aside and reported with the folder's own path; a commit that fails keeps the file for the
 * next scan.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { CallRecord } from '../../../proxy-core/src/protocol/api.js';
import { SpillPickup } from '../../../proxy-core/src/broker/spill-pickup.js';
import { spillDir } from '../../../proxy-core/src/ipc/spill-file.js';
import { cleanup, tempDir } from '../../helpers/airlock.js';

afterEach(cleanup);

const DEAD = 4_000_001;
const ALIVE = 4_000_002;

function entry(id: string): string {
  return `${JSON.stringify({ id, sessionId: 's1', client: 'cursor', server: 'fs', tool: 'echo', arguments: '{}', decision: 'allow', decidedBy: 'rule', outcome: 'ok', startedAt: 1 })}\n`;
}

function pickup(dataDir: string, commit: (e: CallRecord[]) => void = () => {}) {
  const taken: { file: string; entries: number; error?: string }[] = [];
  const committed: CallRecord[] = [];
  const p = new SpillPickup({
    dataDir,
    commit: (entries) => {
      commit(entries);
      committed.push(...entries);
    },
    lost: () => {},
    taken: (file, entries, error) => taken.push({ file, entries, ...(error !== undefined ? { error } : {}) }),
    alive: (pid) => pid === ALIVE,
  });
  return { p, taken, committed };
}

describe('SpillPickup', () => {
  test("a gone wrapper's file is taken in and removed; a live one's and a name no wrapper writes stay", () => {
    const dataDir = tempDir();
    const dir = spillDir(dataDir);
    mkdirSync(dir);
    writeFileSync(join(dir, `${DEAD}-abc-1.jsonl`), entry('c1') + entry('c2'));
    writeFileSync(join(dir, `${ALIVE}-abc-1.jsonl`), entry('c3'));
    writeFileSync(join(dir, 'notes.txt'), 'not a spill file');
    const { p, taken, committed } = pickup(dataDir);
    expect(p.scan()).toBe(2);
    expect(committed.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(taken).toEqual([{ file: `${DEAD}-abc-1.jsonl`, entries: 2 }]);
    expect(readdirSync(dir).sort()).toEqual([`${ALIVE}-abc-1.jsonl`, 'notes.txt']);
  });

  test('no spill folder: nothing read, and none is made', () => {
    const dataDir = tempDir();
    expect(pickup(dataDir).p.scan()).toBe(0);
    expect(existsSync(spillDir(dataDir))).toBe(false);
  });

  test("a link and a FIFO are set aside as .unreadable, each reported with the folder's own path", () => {
    const dataDir = tempDir();
    const dir = spillDir(dataDir);
    mkdirSync(dir);
    const outside = join(tempDir(), 'elsewhere.jsonl');
    writeFileSync(outside, entry('planted'));
    symlinkSync(outside, join(dir, `${DEAD}-lnk-1.jsonl`));
    execFileSync('mkfifo', [join(dir, `${DEAD}-fifo-1.jsonl`)]);
    const { p, taken, committed } = pickup(dataDir);
    expect(p.scan()).toBe(0);
    expect(committed).toEqual([]);
    expect(taken.map((t) => t.file).sort()).toEqual([`${DEAD}-fifo-1.jsonl`, `${DEAD}-lnk-1.jsonl`]);
    expect(taken.every((t) => t.entries === 0 && typeof t.error === 'string')).toBe(true);
    expect(taken.map((t) => t.error).join('\n')).not.toContain('/proc/');
    expect(taken.find((t) => t.file.includes('lnk'))?.error).toContain(join(dir, `${DEAD}-lnk-1.jsonl`));
    expect(readdirSync(dir).sort()).toEqual([`${DEAD}-fifo-1.jsonl.unreadable`, `${DEAD}-lnk-1.jsonl.unreadable`]);
    expect(existsSync(outside)).toBe(true);
  });

  test('a spill folder made a symlink: nothing where it leads is read or removed', () => {
    const dataDir = tempDir();
    const elsewhere = tempDir();
    writeFileSync(join(elsewhere, `${DEAD}-abc-1.jsonl`), entry('planted'));
    symlinkSync(elsewhere, spillDir(dataDir));
    const { p, taken, committed } = pickup(dataDir);
    expect(p.scan()).toBe(0);
    expect(committed).toEqual([]);
    expect(taken).toEqual([]);
    expect(readdirSync(elsewhere)).toEqual([`${DEAD}-abc-1.jsonl`]);
  });

  test('a commit that fails keeps the file, and the next scan takes it', () => {
    const dataDir = tempDir();
    const dir = spillDir(dataDir);
    mkdirSync(dir);
    writeFileSync(join(dir, `${DEAD}-abc-1.jsonl`), entry('c1'));
    let full = true;
    const { p, committed } = pickup(dataDir, () => {
      if (full) throw new Error('SQLITE_FULL');
    });
    expect(p.scan()).toBe(0);
    expect(readdirSync(dir)).toEqual([`${DEAD}-abc-1.jsonl`]);
    full = false;
    expect(p.scan()).toBe(1);
    expect(committed.map((c) => c.id)).toEqual(['c1']);
    expect(readdirSync(dir)).toEqual([]);
  });
});
