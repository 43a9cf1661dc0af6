/** Undo in the UI's words, what an undo or a rollback reports, and which Activity rows an undo event changes. */
import { describe, expect, test } from 'vitest';
import type { BrokerEvent, HistoryItem } from '@airlock/proxy-core/protocol/api';
import type { RollbackReport, UndoReport } from '@airlock/proxy-core/protocol/undo-api';
import { CallList } from '../../../renderer/src/lib/activity.js';
import {
  forceWarning,
  isUndone,
  restoredText,
  rollbackConflicts,
  rollbackSummary,
  shortId,
  ticketUndoableText,
  undoEffect,
  undoHeadline,
  undoOutcome,
  undoStateText,
  undoSummary,
} from '../../../renderer/src/lib/undo.js';

const report = (over: Partial<UndoReport> = {}): UndoReport => ({ callId: 'c1', ok: true, kind: 'snapshot', summary: 'put back 1 file', restored: [], conflicts: [], residue: [], ...over });
let seq = 10;
const ev = (type: string, detail: unknown): BrokerEvent => ({ seq: ++seq, at: 1, type, server: 'files', tool: 'write_file', detail });

describe('undoStateText', () => {
  test('undoable by file snapshot or by declared inverse', () => {
    expect(undoStateText({ available: true, kind: 'snapshot', state: 'ready', paths: ['/a'] })).toEqual({
      text: 'Undoable by file snapshot: Airlock kept the files as they were before the call.',
      tone: 'calm',
    });
    expect(undoStateText({ available: true, kind: 'inverse', state: 'ready', inverse: 'delete_entities' })?.text).toBe(
      'Undoable by declared inverse: Airlock calls delete_entities.',
    );
  });

  test('not undoable, and why', () => {
    expect(undoStateText({ available: false, kind: null, reason: 'neither a file snapshot nor a declared inverse covers this tool' })).toEqual({
      text: 'Not undoable: neither a file snapshot nor a declared inverse covers this tool.',
      tone: 'neutral',
    });
    expect(undoStateText({ available: false, kind: 'snapshot', state: 'unavailable', reason: '/big is 900 MB, over the snapshot cap.' })).toEqual({
      text: 'Not undoable: /big is 900 MB, over the snapshot cap.',
      tone: 'caution',
    });
  });

  test('already undone by another entry; an undo of another call; a failed undo that can be tried again', () => {
    expect(undoStateText({ available: false, kind: 'snapshot', state: 'undone', undoneBy: 'undo-abc' })?.text).toBe('Already undone by undo-abc.');
    expect(undoStateText({ available: true, kind: 'snapshot', state: 'ready', undoOf: 'c9' })?.text).toBe('This is an undo of call c9. Undoing it redoes that call.');
    expect(undoStateText({ available: false, kind: 'inverse', state: 'unavailable', undoOf: 'c9', reason: 'Airlock cannot redo an inverse call' })?.text).toBe(
      'This is an undo of call c9. It cannot be undone in turn: Airlock cannot redo an inverse call.',
    );
    expect(undoStateText({ available: false, kind: 'snapshot', state: 'undone', undoOf: 'c9', undoneBy: 'undo-2' })?.text).toMatch(/undo of call c9, and it was itself undone by undo-2/);
    const failed = undoStateText({ available: true, kind: 'snapshot', state: 'failed', reason: 'the last undo (undo-1) left residue: /a: EACCES' });
    expect(failed).toMatchObject({ tone: 'caution' });
    expect(failed?.text).toMatch(/did not finish: the last undo \(undo-1\) left residue: \/a: EACCES\. You can try again\./);
  });

  test('nothing said by the broker: nothing shown', () => {
    expect(undoStateText(undefined)).toBeNull();
  });
});

describe('ticketUndoableText', () => {
  test('snapshot, inverse, none, unknown', () => {
    expect(ticketUndoableText({ kind: 'snapshot' })).toEqual({ text: 'Can be undone: a snapshot of the file is kept', undoable: true });
    expect(ticketUndoableText({ kind: 'inverse', inverse: 'delete_entities' })).toEqual({ text: 'Can be undone by delete_entities', undoable: true });
    expect(ticketUndoableText(null)).toEqual({ text: 'Cannot be undone', undoable: false });
    expect(ticketUndoableText(undefined)).toBeNull();
  });
});

describe('reports', () => {
  test('an undo: done, conflict, residue, refused', () => {
    expect(undoOutcome(report())).toBe('done');
    expect(undoHeadline(report())).toBe('Undone');
    const conflict = report({ ok: false, conflicts: [{ path: '/a', expected: 'a file of 12 bytes', found: 'a file of 29 bytes' }] });
    expect(undoOutcome(conflict)).toBe('conflict');
    expect(undoHeadline(conflict)).toBe('Not undone: the file changed since the call, so nothing was overwritten');
    // the broker's line for a conflict is the headline again: not repeated
    expect(undoSummary(conflict)).toBeNull();
    expect(undoSummary(report())).toBe('put back 1 file');
    expect(forceWarning(conflict)).toMatch(/^Undo anyway puts back this file as it was before the call, overwriting what it holds now\./);
    const two = report({ ok: false, conflicts: [conflict.conflicts[0]!, { path: '/b', expected: 'x', found: 'y' }] });
    expect(undoHeadline(two)).toBe('Not undone: 2 files changed since the call, so nothing was overwritten');
    expect(forceWarning(two)).toMatch(/these 2 files as they were/);
    expect(undoOutcome(report({ ok: false, residue: ['/a: EACCES'] }))).toBe('residue');
    expect(undoOutcome(report({ ok: false, summary: 'no call can be undone' }))).toBe('refused');
    expect(restoredText('removed')).toBe('removed (the call had created it)');
  });

  test('a rollback in one line, and its conflicts', () => {
    const r: RollbackReport = {
      sessionId: 's',
      results: [report(), report({ callId: 'c2', ok: false, conflicts: [{ path: '/a', expected: 'x', found: 'y' }] }), report({ callId: 'c3', ok: false, residue: ['gone'] })],
      skipped: [{ callId: 'c4', tool: 'send', reason: 'no inverse' }],
      undone: 1,
      failed: 2,
    };
    expect(rollbackSummary(r)).toBe('1 call undone, 2 failed, 1 could not be undone');
    expect(rollbackConflicts(r)).toBe(1);
    expect(rollbackSummary({ sessionId: 's', results: [], skipped: [], undone: 0, failed: 0 })).toBe('Nothing in this session needed undoing');
  });

  test('short ids', () => {
    expect(shortId('5d79644d-4fca-4524-9cfa-aed7b0670afa')).toBe('5d79644d');
    expect(shortId('abc')).toBe('abc');
  });
});

describe('undoEffect and the Activity rows', () => {
  const item = (id: string, over: Partial<HistoryItem> = {}): HistoryItem => ({
    id,
    seq: 1,
    kind: 'call',
    client: 'cursor',
    server: 'files',
    tool: 'write_file',
    arguments: '',
    argsTruncated: false,
    class: 'destructive',
    reasons: [],
    decision: 'allow',
    decidedBy: 'user',
    detail: '',
    outcome: 'ok',
    startedAt: 1,
    summary: true,
    ...over,
  });

  test('undo-known sets a row at once; undo reads the call and the undo again; pruned and failed snapshots say why', () => {
    expect(undoEffect(ev('undo-known', { callId: 'c1', undo: { available: true, kind: 'snapshot', state: 'ready' } }))).toEqual({
      set: [['c1', { available: true, kind: 'snapshot', state: 'ready' }]],
      refresh: [],
    });
    expect(undoEffect(ev('undo', report({ undoId: 'undo-1' })))).toEqual({ set: [], refresh: ['c1', 'undo-1'] });
    // a refused undo-last names no call
    expect(undoEffect(ev('undo', report({ callId: '', ok: false })))).toBeNull();
    const pruned = undoEffect(ev('snapshots-pruned', { records: 2, callIds: ['a', 'b'], blobs: 1, bytes: 10 }));
    expect(pruned?.set.map(([id, u]) => [id, u.state, u.available])).toEqual([
      ['a', 'pruned', false],
      ['b', 'pruned', false],
    ]);
    expect(undoEffect(ev('snapshot-failed', { callId: 'c', error: 'ENOSPC' }))?.set[0]?.[1].reason).toBe('its snapshot could not be stored (ENOSPC)');
    expect(undoEffect(ev('call', {}))).toBeNull();
    expect(undoEffect(ev('undo-known', { callId: 'c1' }))).toBeNull();
  });

  test('setUndo updates a row in place (a live one too); the marker shows undone rows', () => {
    const list = new CallList();
    list.appendPage([item('c1', { undo: { available: true, kind: 'snapshot', state: 'ready' } })], null);
    list.upsert({ id: 'c2', client: 'cursor', server: 'files', tool: 'write_file', class: 'destructive', decision: 'allow', decidedBy: 'user', outcome: 'ok', startedAt: 2 }, true);
    expect(list.setUndo('c1', { available: false, kind: 'snapshot', state: 'undone', undoneBy: 'undo-1' })).toBe(true);
    expect(list.setUndo('c2', { available: true, kind: 'snapshot', state: 'ready' })).toBe(true);
    expect(list.setUndo('nope', { available: false, kind: null })).toBe(false);
    expect(isUndone(list.get('c1')?.undo)).toBe(true);
    expect(isUndone(list.get('c2')?.undo)).toBe(false);
    // a later report of the call keeps what undo can do for it
    list.upsert({ id: 'c2', client: 'cursor', server: 'files', tool: 'write_file', class: 'destructive', decision: 'allow', decidedBy: 'user', outcome: 'ok', startedAt: 2, finishedAt: 3 }, true);
    expect(list.get('c2')?.undo?.state).toBe('ready');
  });
});
