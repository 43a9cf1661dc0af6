/**
 * Undo in words: what a call's history entry says about undoing it, what a ticket says before approval, what
 * an undo or a rollback did, and which rows of the Activity list an undo event changes. Pure.
 */
import type { BrokerEvent } from '@airlock/proxy-core/protocol/api';
import type { EventDetails } from '@airlock/proxy-core/protocol/events';
import type { RollbackReport, UndoInfo, Undoable, UndoReport } from '@airlock/proxy-core/protocol/undo-api';
import { plural } from './words.js';

export type UndoTone = 'calm' | 'caution' | 'danger' | 'neutral';

/** A call's undo state as the detail shows it: one line, and the tone to draw it in. */
export interface UndoStateView {
  text: string;
  tone: UndoTone;
}

/** The first characters of an id: enough to tell two apart on screen. */
export function shortId(id: string, length = 8): string {
  return id.length > length ? id.slice(0, length) : id;
}

/** What the detail of a call says about undoing it; null when the broker says nothing (an older broker). */
export function undoStateText(undo: UndoInfo | undefined): UndoStateView | null {
  if (!undo) return null;
  const how = howText(undo);
  if (undo.undoOf !== undefined) {
    const redo = undo.available ? 'Undoing it redoes that call.' : `It cannot be undone in turn: ${undo.reason ?? 'Airlock kept nothing to redo it with'}.`;
    if (undo.state === 'undone') return { text: `This is an undo of call ${undo.undoOf}, and it was itself undone${undo.undoneBy ? ` by ${undo.undoneBy}` : ''} (the call was redone).`, tone: 'neutral' };
    return { text: `This is an undo of call ${undo.undoOf}. ${redo}`, tone: 'neutral' };
  }
  if (undo.state === 'undone') return { text: `Already undone${undo.undoneBy ? ` by ${undo.undoneBy}` : ''}.`, tone: 'neutral' };
  if (undo.available && undo.state === 'failed') {
    return { text: `${how ?? 'Can be undone'}, but the last undo did not finish: ${sentence(undo.reason ?? 'it left residue')} You can try again.`, tone: 'caution' };
  }
  if (undo.available) return { text: `${how ?? 'Can be undone'}.`, tone: 'calm' };
  return { text: `Not undoable: ${sentence(undo.reason ?? 'Airlock knows no way to undo this call')}`, tone: undo.kind === null ? 'neutral' : 'caution' };
}

function howText(undo: UndoInfo): string | null {
  if (undo.kind === 'snapshot') return 'Undoable by file snapshot: Airlock kept the files as they were before the call';
  if (undo.kind === 'inverse') return `Undoable by declared inverse: Airlock calls ${undo.inverse ?? 'its inverse tool'}`;
  return null;
}

/** A broker reason as a sentence: a capital letter is not forced (it may start with a path), a full stop is. */
function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** What an approval card says before the call runs; null when the ticket says nothing (an older broker). */
export function ticketUndoableText(undoable: Undoable | undefined, toolClass?: string): { text: string; undoable: boolean } | null {
  // a read changes nothing: there is nothing to undo (not "cannot be undone", which alarms for no reason)
  if (toolClass === 'read-only-trusted') return { text: 'Nothing to undo: it only reads', undoable: true };
  if (toolClass === 'read-only-unchecked') return { text: 'Nothing to undo if it only reads, as it says', undoable: true };
  if (undoable === undefined) return null;
  if (undoable === null) return { text: 'Cannot be undone', undoable: false };
  if (undoable.kind === 'snapshot') return { text: 'Can be undone: a snapshot of the file is kept', undoable: true };
  return { text: `Can be undone by ${undoable.inverse ?? 'its declared inverse'}`, undoable: true };
}

const ACTIONS: Readonly<Record<UndoReport['restored'][number]['action'], string>> = {
  restored: 'put back as it was',
  removed: 'removed (the call had created it)',
  recreated: 'recreated (empty)',
  'already-as-before': 'already as it was before',
};

export function restoredText(action: UndoReport['restored'][number]['action']): string {
  return ACTIONS[action] ?? action;
}

/** How an undo ended, as the detail shows it. */
export type UndoOutcome = 'done' | 'conflict' | 'residue' | 'refused';

export function undoOutcome(r: UndoReport): UndoOutcome {
  if (r.ok) return 'done';
  if (r.conflicts.length > 0 && r.residue.length === 0) return 'conflict';
  if (r.residue.length > 0) return 'residue';
  return 'refused';
}

/** The headline of an undo's report. */
export function undoHeadline(r: UndoReport): string {
  switch (undoOutcome(r)) {
    case 'done':
      return 'Undone';
    case 'conflict':
      return r.conflicts.length === 1 ? 'Not undone: the file changed since the call, so nothing was overwritten' : `Not undone: ${r.conflicts.length} files changed since the call, so nothing was overwritten`;
    case 'residue':
      return 'The undo did not finish';
    default:
      return 'Not undone';
  }
}

/** The broker's own line, where it says more than the headline (a conflict's is the headline again). */
export function undoSummary(r: UndoReport): string | null {
  return undoOutcome(r) === 'conflict' ? null : r.summary;
}

/** What "Undo anyway" would overwrite, said before it is offered. */
export function forceWarning(r: UndoReport): string {
  const n = r.conflicts.length;
  return `Undo anyway puts back ${n === 1 ? 'this file' : `these ${n} files`} as ${n === 1 ? 'it was' : 'they were'} before the call, overwriting what ${n === 1 ? 'it holds' : 'they hold'} now. Airlock snapshots ${n === 1 ? 'it' : 'them'} first where it can, so the undo can itself be undone.`;
}

/** A rollback in one line: "2 calls undone, 1 failed, 1 could not be undone". */
export function rollbackSummary(r: RollbackReport): string {
  const parts = [`${plural(r.undone, 'call')} undone`];
  if (r.failed > 0) parts.push(`${r.failed.toLocaleString('en-US')} failed`);
  if (r.skipped.length > 0) parts.push(`${r.skipped.length.toLocaleString('en-US')} could not be undone`);
  if (r.undone === 0 && r.failed === 0 && r.skipped.length === 0) return 'Nothing in this session needed undoing';
  return parts.join(', ');
}

/** Whether some undo of a rollback was held back by a file changed since its call (a forced rollback would overwrite it). */
export function rollbackConflicts(r: RollbackReport): number {
  return r.results.reduce((n, x) => n + (x.ok ? 0 : x.conflicts.length), 0);
}

/** What an event means for the Activity rows: undo states known at once, and calls to read again. */
export interface UndoEffect {
  set: [string, UndoInfo][];
  refresh: string[];
}

/** The rows an undo-related event changes (`undo`, `undo-known`, `snapshots-pruned`, `snapshot-failed`). */
export function undoEffect(e: BrokerEvent): UndoEffect | null {
  const d = (typeof e.detail === 'object' && e.detail !== null ? e.detail : {}) as Record<string, unknown>;
  switch (e.type) {
    case 'undo-known': {
      const k = d as Partial<EventDetails['undo-known']>;
      if (typeof k.callId !== 'string' || typeof k.undo !== 'object' || k.undo === null) return null;
      return { set: [[k.callId, k.undo]], refresh: [] };
    }
    case 'undo': {
      const r = d as Partial<UndoReport>;
      // the call (undone, or its undo failed), and the undo's own entry (undoing it redoes the call)
      const refresh = [r.callId, r.undoId].filter((x): x is string => typeof x === 'string' && x !== '');
      return refresh.length ? { set: [], refresh } : null;
    }
    case 'snapshots-pruned': {
      const p = d as Partial<EventDetails['snapshots-pruned']>;
      if (!Array.isArray(p.callIds)) return null;
      const undo: UndoInfo = { available: false, kind: 'snapshot', state: 'pruned', reason: 'its snapshot was removed to keep snapshots under their size cap' };
      return { set: p.callIds.filter((x): x is string => typeof x === 'string').map((id) => [id, undo]), refresh: [] };
    }
    case 'snapshot-failed': {
      const f = d as Partial<EventDetails['snapshot-failed']>;
      if (typeof f.callId !== 'string') return null;
      const reason = `its snapshot could not be stored${typeof f.error === 'string' ? ` (${f.error})` : ''}`;
      return { set: [[f.callId, { available: false, kind: 'snapshot', state: 'unavailable', reason }]], refresh: [] };
    }
    default:
      return null;
  }
}

/** Whether a row is shown as undone (a small marker in the list). */
export function isUndone(undo: UndoInfo | undefined): boolean {
  return undo?.state === 'undone';
}
