/**
 * Previews of held file writes: the pure parts (edits applied as exact replacements, diff line counts, the diff
 * cut at its limit) and previewCall against real temp files: a symlink, a relative path, a missing file, a
 * folder, a binary and a big file, edits that do not match.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { cutDiff, diffStats, fileDiff, wholeReplacement } from '../../../../proxy-core/src/broker/tickets/preview-diff.js';
import { applyEdits, parseEdits } from '../../../../proxy-core/src/broker/tickets/preview-edits.js';
import { PREVIEW_FILE_LIMIT, previewCall, type PreviewInput } from '../../../../proxy-core/src/broker/tickets/preview.js';
import type { FileTool } from '../../../../proxy-core/src/protocol/api.js';

describe('edits', () => {
  test.each([
    { name: 'one edit', text: 'a\nb\nc\n', edits: [{ oldText: 'b', newText: 'B' }], out: 'a\nB\nc\n', missed: [] },
    { name: 'the first occurrence only', text: 'x x x', edits: [{ oldText: 'x', newText: 'y' }], out: 'y x x', missed: [] },
    { name: 'in order, each on the text as edited so far', text: 'one', edits: [{ oldText: 'one', newText: 'two' }, { oldText: 'two', newText: 'three' }], out: 'three', missed: [] },
    { name: '$ in the new text is text', text: 'price', edits: [{ oldText: 'price', newText: "$& $1 $$ $'" }], out: "$& $1 $$ $'", missed: [] },
    { name: 'an edit that does not match is left out', text: 'a b', edits: [{ oldText: 'zzz', newText: 'q' }, { oldText: 'b', newText: 'c' }], out: 'a c', missed: [0] },
    { name: 'whitespace is not forgiven', text: '  indented\n', edits: [{ oldText: 'indented \n', newText: 'x' }], out: '  indented\n', missed: [0] },
  ])('$name', ({ text, edits, out, missed }) => {
    const r = applyEdits(text, edits);
    expect(r).toEqual({ text: out, applied: edits.length - missed.length, missed });
  });

  test('edits are read strictly', () => {
    expect(parseEdits([{ oldText: 'a', newText: 'b', extra: 1 }], 'edits')).toEqual([{ oldText: 'a', newText: 'b' }]);
    expect(parseEdits('nope', 'edits')).toMatch(/not a list/);
    expect(parseEdits([{ oldText: 'a' }], 'edits')).toMatch(/edit 1 /);
    expect(parseEdits([null], 'edits')).toMatch(/edit 1 /);
  });
});

describe('diffs', () => {
  test('counts added and removed lines, never the no-newline marker', async () => {
    const d = await fileDiff('/f', 'a\nb\nc\n', 'a\nB\nc\nd', true);
    expect(d).toMatchObject({ added: 2, removed: 1, truncated: false, whole: false });
    expect(d.diff.split('\n').slice(0, 3)).toEqual(['--- /f', '+++ /f', '@@ -1,3 +1,4 @@']);
    expect(diffStats({ hunks: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: ['-a', '+b', '\\ No newline at end of file', ' c'] }] })).toEqual({ added: 1, removed: 1 });
  });

  test('a new file is diffed from /dev/null; no change is an empty diff', async () => {
    const d = await fileDiff('/f', '', 'x\ny\n', false);
    expect(d.diff.startsWith('--- /dev/null\n+++ /f\n@@ -0,0 +1,2 @@\n+x\n+y\n')).toBe(true);
    expect(await fileDiff('/f', 'same', 'same', true)).toEqual({ diff: '', added: 0, removed: 0, truncated: false, whole: false });
  });

  test('cut at a line end, and marked', () => {
    expect(cutDiff('abc\ndef\nghi\n', 9)).toEqual({ text: 'abc\ndef\n', truncated: true });
    expect(cutDiff('abc\n', 9)).toEqual({ text: 'abc\n', truncated: false });
  });

  test('too different to compare in time: the whole file replaced, counts still right', async () => {
    const before = Array.from({ length: 3000 }, (_, i) => `old ${i}`).join('\n');
    const after = Array.from({ length: 2000 }, (_, i) => `new ${i}`).join('\n') + '\n';
    const d = await fileDiff('/f', before, after, true, { timeoutMs: 1 });
    expect(d).toMatchObject({ whole: true, added: 2000, removed: 3000 });
    expect(d.diff).toContain('@@ -1,3000 +1,2000 @@');
    expect(d.diff).toContain('-old 2999\n\\ No newline at end of file\n+new 0\n');
    expect(wholeReplacement('/f', '/f', 'x', 'x').hunks).toEqual([]);
  });

  test('a big diff is cut at its limit but counted whole', async () => {
    const after = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'x'.repeat(80)}`).join('\n');
    const d = await fileDiff('/f', '', after, false, { limit: 64 * 1024 });
    expect(d.truncated).toBe(true);
    expect(d.added).toBe(5000);
    expect(d.diff.length).toBeLessThanOrEqual(64 * 1024);
    expect(d.diff.endsWith('\n')).toBe(true);
  });
});

describe('previewCall on real files', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'al-preview-')));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const notes = join(root, 'notes');
  mkdirSync(notes);
  writeFileSync(join(notes, 'a.md'), 'one\ntwo\nthree\n');
  mkdirSync(join(root, 'real'));
  writeFileSync(join(root, 'real', 'b.md'), 'hello\n');
  symlinkSync(join(root, 'real'), join(root, 'link'));
  writeFileSync(join(root, 'bin.dat'), Buffer.from([1, 2, 0, 3]));
  writeFileSync(join(root, 'big.txt'), 'x'.repeat(PREVIEW_FILE_LIMIT + 1));

  const write: FileTool = { server: 'fs', tool: 'write_file', kind: 'write', pathArg: 'path', contentArg: 'content' };
  const edit: FileTool = { server: 'fs', tool: 'edit_file', kind: 'edit', pathArg: 'path', contentArg: 'edits' };
  const input = (fileTool: FileTool | undefined, args: unknown, extra: Partial<PreviewInput> = {}): PreviewInput => ({
    ticket: { server: 'fs', tool: fileTool?.tool ?? 'other', arguments: args, argsTruncated: false },
    fileTool,
    cwd: undefined,
    env: { home: root, platform: process.platform },
    ...extra,
  });

  test('write over an existing file: its diff', async () => {
    const p = await previewCall(input(write, { path: join(notes, 'a.md'), content: 'one\n2\nthree\n' }));
    expect(p).toMatchObject({ kind: 'file', path: join(notes, 'a.md'), exists: true, added: 1, removed: 1, truncated: false });
    expect(p.kind === 'file' && p.diff).toContain('-two\n+2\n');
  });

  test('through a symlink: the real file, named as such', async () => {
    const p = await previewCall(input(write, { path: join(root, 'link', 'b.md'), content: 'bye\n' }));
    expect(p).toMatchObject({ kind: 'file', path: join(root, 'real', 'b.md'), exists: true, added: 1, removed: 1 });
  });

  test('a relative path: from the wrapper cwd, and an error without one', async () => {
    const p = await previewCall(input(write, { path: 'notes/a.md', content: 'one\ntwo\nthree\nfour\n' }, { cwd: root }));
    expect(p).toMatchObject({ kind: 'file', path: join(notes, 'a.md'), added: 1, removed: 0, caveat: expect.stringMatching(/relative path.*server may resolve it otherwise/) });
    expect(await previewCall(input(write, { path: 'notes/a.md', content: 'x' }))).toEqual({ kind: 'error', reason: 'relative path and no working directory known' });
  });

  test('~ is the home folder; a missing file is all added, in a folder that is not there yet', async () => {
    const p = await previewCall(input(write, { path: '~/new/dir/c.md', content: 'a\nb\n' }));
    expect(p).toMatchObject({ kind: 'file', path: join(root, 'new', 'dir', 'c.md'), exists: false, added: 2, removed: 0 });
    expect(p.kind === 'file' && p.diff).toMatch(/^--- \/dev\/null\n/);
  });

  test('edits: applied in order; a miss is a caveat, all missed an error; a missing file an error', async () => {
    const p = await previewCall(input(edit, { path: join(notes, 'a.md'), edits: [{ oldText: 'two', newText: 'TWO' }, { oldText: 'nine', newText: '9' }] }));
    expect(p).toMatchObject({ kind: 'file', added: 1, removed: 1, caveat: expect.stringMatching(/edit\(s\) 2 do not match the file exactly/) });
    expect(await previewCall(input(edit, { path: join(notes, 'a.md'), edits: [{ oldText: 'nine', newText: '9' }] }))).toMatchObject({ kind: 'error', reason: expect.stringMatching(/none of the 1 edit/) });
    expect(await previewCall(input(edit, { path: join(notes, 'zz.md'), edits: [] }))).toMatchObject({ kind: 'error', reason: expect.stringMatching(/does not exist/) });
    expect(await previewCall(input(edit, { path: join(notes, 'a.md'), edits: 'x' }))).toMatchObject({ kind: 'error', reason: expect.stringMatching(/not a list/) });
  });

  test('what cannot be previewed says why', async () => {
    expect(await previewCall(input(write, { path: join(root, 'bin.dat'), content: 'x' }))).toMatchObject({ kind: 'error', reason: 'binary file' });
    expect(await previewCall(input(write, { path: join(root, 'big.txt'), content: 'x' }))).toMatchObject({ kind: 'error', reason: 'file too large to preview' });
    expect(await previewCall(input(write, { path: notes, content: 'x' }))).toMatchObject({ kind: 'error', reason: expect.stringMatching(/folder/) });
    expect(await previewCall(input(write, { content: 'x' }))).toMatchObject({ kind: 'error', reason: expect.stringMatching(/names no file/) });
    expect(await previewCall(input(write, { path: join(notes, 'a.md'), content: 3 }))).toMatchObject({ kind: 'error', reason: expect.stringMatching(/not text/) });
    expect(await previewCall({ ...input(write, '{"path":"/x", "content":"'), ticket: { server: 'fs', tool: 'write_file', arguments: '{"path"', argsTruncated: true } })).toMatchObject({
      kind: 'error',
      reason: expect.stringMatching(/too large/),
    });
    expect(await previewCall(input(undefined, { path: '/x' }))).toMatchObject({ kind: 'none' });
  });
});
