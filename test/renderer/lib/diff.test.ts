/** The file preview's diff: kinds, markers that do not rely on colour, line numbers. */
import { describe, expect, test } from 'vitest';
import { diffCounts, parseUnifiedDiff } from '../../../renderer/src/lib/diff.js';

const DIFF = ['--- a/notes.txt', '+++ b/notes.txt', '@@ -1,3 +1,3 @@', ' first', '-second', '+2nd', ' third', '\\ No newline at end of file', ''].join('\n');

describe('parseUnifiedDiff', () => {
  test('kinds, markers and line numbers', () => {
    const lines = parseUnifiedDiff(DIFF);
    expect(lines.map((l) => l.kind)).toEqual(['file', 'file', 'hunk', 'ctx', 'del', 'add', 'ctx', 'note']);
    expect(lines.map((l) => l.marker)).toEqual([' ', ' ', ' ', ' ', '\u2212', '+', ' ', ' ']);
    expect(lines[3]).toEqual({ kind: 'ctx', marker: ' ', text: 'first', oldNo: 1, newNo: 1 });
    expect(lines[4]).toEqual({ kind: 'del', marker: '\u2212', text: 'second', oldNo: 2 });
    expect(lines[5]).toEqual({ kind: 'add', marker: '+', text: '2nd', newNo: 2 });
    expect(lines[6]).toMatchObject({ text: 'third', oldNo: 3, newNo: 3 });
    expect(lines[7]).toMatchObject({ kind: 'note', text: 'No newline at end of file' });
  });

  test('a new file: every line added, from line 1', () => {
    const lines = parseUnifiedDiff('--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n');
    expect(lines.filter((l) => l.kind === 'add').map((l) => [l.text, l.newNo])).toEqual([
      ['one', 1],
      ['two', 2],
    ]);
  });

  test('lines that look like headers inside a hunk are content', () => {
    const lines = parseUnifiedDiff('@@ -1 +1 @@\n--- not a header\n+++ nor this\n');
    expect(lines.map((l) => [l.kind, l.text])).toEqual([
      ['hunk', '@@ -1 +1 @@'],
      ['del', '-- not a header'],
      ['add', '++ nor this'],
    ]);
  });

  test('empty diff, counts', () => {
    expect(parseUnifiedDiff('')).toEqual([]);
    expect(diffCounts(3, 1)).toBe('+3 \u22121');
  });
});
