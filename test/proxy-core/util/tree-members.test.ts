/** util/tree-members and util/proc-table: which processes are a server's tree, from made-up process tables. */
import { spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { environHas, parseStat, type ProcEntry } from '../../../proxy-core/src/util/proc-table.js';
import { type TreeQuery, treeMembers } from '../../../proxy-core/src/util/tree-members.js';

const SELF = 100;
const p = (pid: number, ppid: number, startTime = String(pid * 10), zombie = false): ProcEntry => ({ pid, ppid, startTime, zombie });
const tableOf = (...entries: ProcEntry[]) => new Map(entries.map((e) => [e.pid, e]));
const query = (o: Partial<TreeQuery> = {}): TreeQuery => ({ leader: { pid: 200, startTime: '2000' }, known: new Map(), exclude: new Set(), self: SELF, ...o });
const pids = (entries: ProcEntry[]) => entries.map((e) => e.pid).sort((a, b) => a - b);

// 1 init; 50 the shell that started the wrapper (100); 200 the server; 300 an unrelated process of the same name
const base = [p(1, 0), p(50, 1), p(SELF, 50), p(200, SELF), p(201, 200), p(202, 201), p(300, 1), p(301, 300)];

describe('treeMembers', () => {
  test('the server and what descends from it, not an unrelated process', () => {
    expect(pids(treeMembers(tableOf(...base), query()))).toEqual([200, 201, 202]);
  });

  test('a server pid reused by another process is not the server', () => {
    expect(treeMembers(tableOf(...base), query({ leader: { pid: 200, startTime: '1' } }))).toEqual([]);
  });

  test('a process seen in the tree before stays a member after its parent exits, unless its pid was reused', () => {
    // 400 was seen below the server; its parent exited and it was reparented to init
    const table = tableOf(...base, p(400, 1), p(401, 400));
    expect(pids(treeMembers(table, query({ known: new Map([[400, '4000']]) })))).toEqual([200, 201, 202, 400, 401]);
    expect(pids(treeMembers(table, query({ known: new Map([[400, '3999']]) })))).toEqual([200, 201, 202]);
  });

  test("a process carrying the tree's marker is a member with its descendants, wherever it hangs", () => {
    const table = tableOf(...base, p(500, 1), p(501, 500));
    const q = query({ marked: (pid) => pid === 500 });
    expect(pids(treeMembers(table, q))).toEqual([200, 201, 202, 500, 501]);
  });

  test("as a subreaper, this process's children it did not start are orphans of the tree; other servers are not", () => {
    const table = tableOf(...base, p(600, SELF), p(700, SELF), p(701, 700));
    expect(pids(treeMembers(table, query({ adopter: SELF, exclude: new Set([700]) })))).toEqual([200, 201, 202, 600]);
    // not a subreaper: its children are not taken for orphans
    expect(pids(treeMembers(table, query({ exclude: new Set([700]) })))).toEqual([200, 201, 202]);
  });

  test('never this process or an ancestor, whatever the marker or the samples say', () => {
    const q = query({ marked: (pid) => pid === SELF || pid === 50, known: new Map([[1, '10']]) });
    expect(pids(treeMembers(tableOf(...base), q))).toEqual([200, 201, 202]);
  });

  test('a zombie is found (to be reaped) but its marker is not asked for', () => {
    const asked: number[] = [];
    const table = tableOf(...base, p(800, 1, '8000', true));
    const found = treeMembers(table, query({ marked: (pid) => (asked.push(pid), false) }));
    expect(asked).not.toContain(800);
    expect(pids(found)).toEqual([200, 201, 202]);
  });
});

describe('parseStat', () => {
  test('a command name with parentheses and spaces does not shift the fields', () => {
    const fields = ['S', '42', ...Array.from({ length: 17 }, (_, i) => String(i)), '123456', '0'];
    expect(parseStat(7, `7 (evil) 1 2 (x) ${fields.join(' ')}`)).toEqual({ pid: 7, ppid: 42, startTime: '123456', zombie: false });
    expect(parseStat(7, `7 (z) Z 1 ${Array.from({ length: 18 }, () => '9').join(' ')}`)).toMatchObject({ ppid: 1, zombie: true });
  });

  test('what is not a stat line is nothing', () => {
    expect(parseStat(7, 'garbage')).toBeUndefined();
    expect(parseStat(7, '7 (x) S')).toBeUndefined();
  });
});

describe.skipIf(process.platform !== 'linux')('environHas', () => {
  test('matches a whole NAME=value entry only', async () => {
    const child = spawn('sleep', ['5'], { env: { PATH: process.env.PATH, AIRLOCK_PROCESS_TREE: 'abc123', OTHER: 'xAIRLOCK_PROCESS_TREE=abc' } });
    await new Promise((r) => child.once('spawn', r));
    try {
      expect(environHas(child.pid!, 'AIRLOCK_PROCESS_TREE', 'abc123')).toBe(true);
      expect(environHas(child.pid!, 'AIRLOCK_PROCESS_TREE', 'abc')).toBe(false);
      expect(environHas(child.pid!, 'AIRLOCK_PROCESS_TREE', 'abc1234')).toBe(false);
      expect(environHas(999_999_999, 'AIRLOCK_PROCESS_TREE', 'abc123')).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
