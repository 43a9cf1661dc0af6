/**
 * The journal's intake on disk: batches appended as lines, read back as they were; a broker that dies leaves them
 * for the next, which files only what is past the mark; a line cut short by a death mid-write is cut off; past
 * 64 MB a new file is started (past a name someone took first), and a file all of whose batches are filed is
 * removed; what someone else put under the intake's names (a huge file, a folder, a FIFO, a link) neither stops
 * the broker's start nor is held in memory; a Store opened beside the broker leaves the files alone.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { type IntakeBatch, IntakeLog } from '../../../../proxy-core/src/broker/db/intake-log.js';

const dirs: string[] = [];
const logs: IntakeLog[] = [];
afterEach(() => {
  for (const l of logs.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'al-intake-'));
  dirs.push(d);
  return d;
}

function log(d: string, mark = 0): IntakeLog {
  const l = new IntakeLog(d, () => mark);
  logs.push(l);
  l.open();
  return l;
}

const batch = (text: string, n = 1): IntakeBatch => ({ session: 's1', client: 'c "quoted"', server: 'fs', at: 7, entries: Buffer.from(text), n });
const files = (d: string) => readdirSync(d).filter((f) => f.startsWith('journal-intake.'));

describe("the journal's intake", () => {
  test('batches come back as they were sent, in order, with their session and time; the count is what the senders said', () => {
    const d = dir();
    const l = log(d);
    l.append([batch('[{"id":"a"}]'), batch('[{"id":"b","text":"tab\\there, line\\nbreak, ünïcödé"},{"id":"c"}]', 2)]);
    l.append([batch('[]', 0)]);
    expect(l.size).toBe(3);
    expect([l.oldestSeq(), l.newestSeq()]).toEqual([1, 3]);
    const first = l.next(0)!;
    expect({ ...first, entries: first.entries.toString() }).toEqual({ seq: 1, session: 's1', client: 'c "quoted"', server: 'fs', at: 7, n: 1, entries: '[{"id":"a"}]' });
    expect(l.next(1)!.entries.toString()).toBe('[{"id":"b","text":"tab\\there, line\\nbreak, ünïcödé"},{"id":"c"}]');
    expect(l.next(3)).toBeUndefined();
    // one line per batch, in one file
    expect(files(d)).toHaveLength(1);
    expect(readFileSync(join(d, files(d)[0]!), 'utf8').split('\n').filter(Boolean)).toHaveLength(3);
  });

  test('a backlog of many small batches: each is found by its seq, and what is filed is counted off exactly', () => {
    const d = dir();
    const l = log(d);
    // 5,000 batches of 1 to 3 entries, appended a few at a time as ticks take them in
    const sizes = Array.from({ length: 5000 }, (_, i) => 1 + (i % 3));
    for (let i = 0; i < sizes.length; i += 7) l.append(sizes.slice(i, i + 7).map((n, k) => batch(`[${i + k}]`, n)));
    const total = (from: number) => sizes.slice(from).reduce((a, n) => a + n, 0);
    expect(l.size).toBe(total(0));
    for (const seq of [0, 1, 2, 2499, 4998]) expect(l.next(seq)!.entries.toString()).toBe(`[${seq}]`);
    expect(l.next(4999)!.seq).toBe(5000);
    expect(l.next(5000)).toBeUndefined();
    l.moved(2500);
    expect([l.oldestSeq(), l.size]).toEqual([2501, total(2500)]);
    expect(l.next(0)!.seq).toBe(2501);
    expect(l.next(3000)!.entries.toString()).toBe('[3000]');
    l.moved(2500);
    expect(l.size).toBe(total(2500));
    l.moved(5000);
    expect([l.oldestSeq(), l.size, l.next(0)]).toEqual([0, 0, undefined]);
  });

  test('what is filed is let go, and a file all of whose batches are filed is removed', () => {
    const d = dir();
    const l = log(d);
    l.append([batch('[1]'), batch('[2]')]);
    l.moved(1);
    expect([l.oldestSeq(), l.size]).toEqual([2, 1]);
    expect(files(d)).toHaveLength(1);
    l.moved(2);
    expect([l.oldestSeq(), l.size]).toEqual([0, 0]);
    expect(files(d)).toEqual([]);
    // the next batch starts a file of its own, and its seq goes on
    l.append([batch('[3]')]);
    expect(l.next(0)!.seq).toBe(3);
    expect(files(d)).toHaveLength(1);
  });

  test('a broker that died leaves its batches to the next one, which takes only what is past the mark', () => {
    const d = dir();
    const first = log(d);
    first.append([batch('[1]'), batch('[2]'), batch('[3]')]);
    first.close();
    // the database says seq 2 was filed (its transaction committed) before the broker died
    const next = log(d, 2);
    expect([next.oldestSeq(), next.newestSeq(), next.size]).toEqual([3, 3, 1]);
    expect(next.next(0)!.entries.toString()).toBe('[3]');
    next.append([batch('[4]')]);
    expect(next.newestSeq()).toBe(4);
    next.moved(4);
    expect(files(d)).toEqual([]);
  });

  test("a file read back in chunks: a header cut by a chunk's end is read whole, and every batch comes back as it was", () => {
    const d = dir();
    const first = log(d);
    // small batches: lines of about a hundred bytes, almost all of them header
    for (let i = 0; i < 30_000; i += 500) first.append(Array.from({ length: 500 }, (_, k) => batch(`[${i + k}]`)));
    first.close();
    // the scan reads 1 MiB at a time: the line across that mark is cut inside its header (before its tab)
    const bytes = readFileSync(join(d, files(d)[0]!));
    const mark = 1024 * 1024;
    const lineStart = bytes.lastIndexOf(0x0a, mark - 1) + 1;
    expect(bytes.indexOf(0x09, lineStart)).toBeGreaterThan(mark);
    const next = log(d);
    expect([next.oldestSeq(), next.newestSeq(), next.size]).toEqual([1, 30_000, 30_000]);
    for (const seq of [0, 9_000, 9_999, 10_000, 10_001, 29_999]) {
      const row = next.next(seq)!;
      expect([row.seq, row.session, row.client, row.entries.toString()]).toEqual([seq + 1, 's1', 'c "quoted"', `[${seq}]`]);
    }
    expect(next.unreadable).toBe(0);
  });

  test('past 64 MB a file is closed for writing and the next batch starts another (a name taken first is passed over); each is removed once all of it is filed', () => {
    const d = dir();
    const l = log(d);
    const big = Buffer.alloc(64 * 1024 * 1024, 0x61);
    l.append([{ ...batch(''), entries: big }]);
    // the next name taken first (a link to a file of the person's): passed over, never written through
    const gen = Number(files(d)[0]!.slice('journal-intake.'.length));
    const target = join(dir(), 'notes.txt');
    writeFileSync(target, 'mine\n');
    symlinkSync(target, join(d, `journal-intake.${gen + 1}`));
    l.append([batch('[2]')]);
    expect(readFileSync(target, 'utf8')).toBe('mine\n');
    expect(files(d).sort()).toEqual([`journal-intake.${gen}`, `journal-intake.${gen + 1}`, `journal-intake.${gen + 2}`]);
    unlinkSync(join(d, `journal-intake.${gen + 1}`));
    expect(l.next(0)!.entries.equals(big)).toBe(true);
    expect(l.next(1)!.entries.toString()).toBe('[2]');
    l.moved(1);
    expect(files(d)).toHaveLength(1);
    l.close();
    // a broker after it reads the file that is left, past the mark
    const next = log(d, 1);
    expect([next.oldestSeq(), next.size]).toEqual([2, 1]);
    expect(next.next(0)!.entries.toString()).toBe('[2]');
  });

  test('a line cut short (the broker died writing it, so it was never acknowledged) is cut off; a line that is no header is counted', () => {
    const d = dir();
    const first = log(d);
    first.append([batch('[1]')]);
    first.close();
    const file = join(d, files(d)[0]!);
    appendFileSync(file, 'not a header\t[9]\n{"seq":2,"session":"s1","client":"c","server":"fs","at":1,"n":1}\t[{"id":"cut');
    const next = log(d);
    expect(next.unreadable).toBe(1);
    expect([next.oldestSeq(), next.newestSeq()]).toEqual([1, 1]);
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
    expect(readFileSync(file, 'utf8')).not.toContain('"cut');
  });

  test('a file whose seqs run backwards or repeat (written by someone else) keeps only the rising ones: each batch is found, and filing counts off exactly', () => {
    const d = dir();
    const first = log(d);
    first.append([batch('[1]')]);
    first.close();
    const line = (seq: number) => `{"seq":${seq},"session":"s1","client":"c","server":"fs","at":1,"n":1}\t[${seq}]\n`;
    appendFileSync(join(d, files(d)[0]!), [5, 3, 9, 9, 7, 12].map(line).join(''));
    const next = log(d);
    expect([next.oldestSeq(), next.newestSeq(), next.size]).toEqual([1, 12, 4]);
    expect([0, 1, 4, 5, 8, 9, 11].map((seq) => next.next(seq)?.entries.toString())).toEqual(['[1]', '[5]', '[5]', '[9]', '[9]', '[12]', '[12]']);
    expect(next.next(12)).toBeUndefined();
    next.moved(9);
    expect([next.oldestSeq(), next.size]).toEqual([12, 1]);
    // what comes next is numbered past them all
    next.append([batch('[13]')]);
    expect(next.newestSeq()).toBe(13);
  });

  test('what someone else put under the intake\'s names is read without being held in memory, and the broker starts: a line longer than any batch is cut off with what follows, a folder, a FIFO and a link are passed over', () => {
    const d = dir();
    const first = log(d);
    first.append([batch('[1]'), batch('[2]')]);
    first.close();
    const file = join(d, files(d)[0]!);
    const whole = statSync(file).size;
    // 1 GB of no newline after the last line (sparse: nothing is written to disk)
    truncateSync(file, 1024 ** 3);
    const gen = Number(files(d)[0]!.slice('journal-intake.'.length));
    mkdirSync(join(d, `journal-intake.${gen + 1}`));
    execFileSync('mkfifo', [join(d, `journal-intake.${gen + 2}`)]);
    const target = join(dir(), 'notes.txt');
    writeFileSync(target, '{"seq":9,"session":"s","client":"c","server":"fs","at":1,"n":1}\t[9]\n');
    symlinkSync(target, join(d, `journal-intake.${gen + 3}`));
    const heapBefore = process.memoryUsage().arrayBuffers;
    const next = log(d);
    expect(process.memoryUsage().arrayBuffers - heapBefore).toBeLessThan(64 * 1024 * 1024);
    expect([next.oldestSeq(), next.newestSeq(), next.size]).toEqual([1, 2, 2]);
    expect(next.next(1)!.entries.toString()).toBe('[2]');
    expect(next.unreadable).toBe(4);
    expect(statSync(file).size).toBe(whole);
    expect(readFileSync(target, 'utf8')).toContain('[9]');
    // new batches go on after the last seq, into a file of the log's own
    next.append([batch('[3]')]);
    expect(next.newestSeq()).toBe(3);
  });

  test('a log not opened (a Store beside the broker) reads and writes nothing', () => {
    const d = dir();
    writeFileSync(join(d, 'journal-intake.5'), '{"seq":1,"session":"s","client":"c","server":"fs","at":1,"n":1}\t[1]\n{"seq":2,"session":"s","cl');
    const l = new IntakeLog(d, () => 0);
    logs.push(l);
    expect(l.size).toBe(0);
    expect(readFileSync(join(d, 'journal-intake.5'), 'utf8')).toContain('"cl');
  });
});
