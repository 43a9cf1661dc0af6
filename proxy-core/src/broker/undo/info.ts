/**
 * What undo says of a call, in words and as a history entry carries it (`undo` on each entry, and the
 * `undo-known` event a front end's Undo button follows).
 */
import type { HistoryItem } from '../../protocol/api.js';
import type { UndoInfo } from '../../protocol/undo-api.js';
import type { UndoRecord } from './records.js';

/** Why a record's call cannot be undone now (or what became of it), in words. */
export function stateReason(r: UndoRecord): string {
  switch (r.state) {
    case 'undone':
      return `already undone${r.undoneBy ? ` (by ${r.undoneBy})` : ''}`;
    case 'unchanged':
      return r.reason ?? 'the call left its files as they were: nothing to undo';
    case 'prepared':
      return 'Airlock has not recorded yet what the call left in its files';
    default:
      return r.reason ?? `cannot be undone (${r.state})`;
  }
}

/** What a history entry says about undoing its call. */
export function undoInfo(c: Pick<HistoryItem, 'decision' | 'outcome' | 'id'>, r: UndoRecord | undefined): UndoInfo {
  if (!r) {
    if (c.decision !== 'allow' || c.outcome === 'not-run') return { available: false, kind: null, reason: 'the call did not run' };
    if (c.outcome === 'pending') return { available: false, kind: null, reason: 'the call has not finished' };
    return { available: false, kind: null, reason: 'neither a file snapshot nor a declared inverse covers this tool' };
  }
  const info: UndoInfo = { available: r.state === 'ready' || r.state === 'failed', kind: r.kind, state: r.state };
  if (r.state !== 'ready') info.reason = stateReason(r);
  if (r.plan?.kind === 'snapshot' && r.plan.paths.length) info.paths = [...new Set(r.plan.paths.map((p) => p.path))];
  if (r.plan?.kind === 'inverse') info.inverse = r.plan.inverse;
  if (r.undoneBy) info.undoneBy = r.undoneBy;
  if (r.undoOf) info.undoOf = r.undoOf;
  return info;
}
