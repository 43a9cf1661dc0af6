/** Undo last and the tripwire, in words: the menu item, the notice after an undo, the tripwire's E-Stop, a full disk. */
import { describe, expect, test } from 'vitest';
import { estopCauseLabel, trayLook, trayTooltip, tripwireNotice } from '../../electron/src/tray-look.js';
import { AppState } from '../../electron/src/state.js';
import type { BrokerEvent, BrokerStatus } from '../../proxy-core/src/protocol/api.js';
import { type UndoCall, undoLastLabel, undoLastWouldTake, undoNotice, type UndoReport } from '../../electron/src/undo-text.js';

describe('Undo last and the tripwire, in words', () => {
  const call: UndoCall = { id: 'c1', server: 'files', tool: 'write_file', undo: { available: true, kind: 'snapshot', state: 'ready', paths: ['/home/me/notes.txt'] } };
  const report = (r: Partial<UndoReport>): UndoReport => ({ callId: 'c1', ok: true, kind: 'snapshot', summary: '', restored: [], conflicts: [], residue: [], ...r });

  test('the item names what it would undo; an undo entry (a redo) is not the last change', () => {
    expect(undoLastLabel(null, false)).toBe('Undo last');
    expect(undoLastLabel(call, true)).toBe('Undoing…');
    expect(undoLastLabel(call, false)).toBe('Undo last: files · write_file notes.txt');
    expect(undoLastLabel({ ...call, undo: { ...call.undo!, paths: ['/a', '/b'] } }, false)).toBe('Undo last: files · write_file (2 files)');
    expect(undoLastWouldTake(call)).toBe(true);
    expect(undoLastWouldTake({ undo: { ...call.undo!, undoOf: 'c0' } })).toBe(false);
    for (const state of ['failed', 'undone', 'unchanged', 'prepared'] as const) expect(undoLastWouldTake({ undo: { ...call.undo!, state } }), state).toBe(false);
    expect(undoLastWouldTake({})).toBe(false);
  });

  test('what was put back, removed, called; a conflict and residue send the person to the app', () => {
    expect(undoNotice(report({ restored: [{ path: '/d/a.txt', action: 'restored' }, { path: '/d/b.txt', action: 'removed' }] }), call)).toEqual({
      title: 'Undone: files · write_file',
      body: 'Put back a.txt as it was before the call; removed b.txt, which the call created.',
      needsYou: false,
    });
    expect(undoNotice(report({ restored: [{ path: '/d/a.txt', action: 'already-as-before' }] }), null).body).toBe(
      'Nothing needed putting back: the files were already as before the call.',
    );
    const memory: UndoCall = { id: 'c2', server: 'memory', tool: 'create_entities', undo: { available: false, kind: 'inverse', state: 'undone', inverse: 'delete_entities' } };
    expect(undoNotice(report({ callId: 'c2', kind: 'inverse' }), memory).body).toBe('Airlock called delete_entities on memory to take the call back.');

    const conflict = undoNotice(report({ ok: false, conflicts: [{ path: '/d/a.txt', expected: 'x', found: 'absent' }, { path: '/d/b.txt', expected: 'x', found: 'absent' }] }), call);
    expect(conflict).toEqual({ title: 'Not undone: files · write_file', body: 'a.txt and b.txt were deleted after the call, so nothing was overwritten. Open Airlock to decide.', needsYou: true });

    const residue = undoNotice(report({ ok: false, residue: ['/d/b.txt: permission denied'], restored: [{ path: '/d/a.txt', action: 'restored' }] }), call);
    expect(residue).toEqual({ title: 'Undo did not finish: files · write_file', body: '/d/b.txt: permission denied. Put back: a.txt. Open Airlock for the details.', needsYou: true });

    expect(undoNotice(report({ callId: '', ok: false, kind: null, summary: 'no call can be undone' }), null)).toEqual({ title: 'Nothing to undo', body: 'No call can be undone.', needsYou: false });
  });

  test("the tripwire's E-Stop is told apart from a person's", () => {
    const cause = { by: 'tripwire', reason: '31 changing calls in 10 s' } as const;
    expect(tripwireNotice(cause).title).toBe('E-Stop turned itself on: 31 changing calls in 10 s');
    expect(estopCauseLabel(cause)).toBe('Turned on by the tripwire: 31 changing calls in 10 s');
    expect(estopCauseLabel({ by: 'user' })).toBeNull();
    const ready = { state: 'ready', owned: true } as const;
    expect(trayTooltip(ready, true, 0, cause)).toBe('Airlock: E-Stop turned itself on (31 changing calls in 10 s). Every tool call is refused.');
    expect(trayTooltip(ready, true, 0, { by: 'user' })).toBe('Airlock: E-Stop is on. Every tool call is refused.');
    expect(tripwireNotice(cause).body).toMatch(/refused before it reached its server/);
  });

  test('a full disk shows as a problem, over E-Stop and waiting calls, and says calls are refused', () => {
    const ready = { state: 'ready', owned: true } as const;
    expect(trayLook(ready, false, 2, true)).toBe('problem');
    expect(trayLook(ready, true, 0, true)).toBe('problem');
    expect(trayLook(ready, false, 2, false)).toBe('pending');
    expect(trayTooltip(ready, true, 3, null, true)).toMatch(/disk is full.*every tool call is refused/);
    const state = new AppState();
    state.load({ estop: false, diskFull: { since: 5, error: 'SQLITE_FULL' } } as unknown as BrokerStatus, []);
    expect(state.diskFull).toEqual({ since: 5, error: 'SQLITE_FULL' });
    state.apply({ seq: 2, at: 9, type: 'disk-ok', server: null, tool: null, detail: {} } as BrokerEvent);
    expect(state.diskFull).toBeNull();
    state.apply({ seq: 3, at: 10, type: 'disk-full', server: null, tool: null, detail: { error: 'ENOSPC' } } as BrokerEvent);
    expect(state.diskFull).toEqual({ since: 10, error: 'ENOSPC' });
  });
});
