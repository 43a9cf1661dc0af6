/**
 * What undo can do for a row, in the words a row shows: undoable, undone, nothing to undo (a read), cannot be
 * undone, did not run. The same answer as proxy-core's protocol/activity.ts undoWord (the CLI's and the
 * export's; a test holds the two together): the row's undo state follows live events, so the UI words it itself.
 */
import type { ActivityRow } from './activity.js';

export type UndoWord = 'undoable' | 'undone' | 'nothing-to-undo' | 'cannot-undo' | 'not-run' | 'unknown';

export const UNDO_WORDS: Readonly<Record<UndoWord, string>> = {
  undoable: 'undoable',
  undone: 'undone',
  'nothing-to-undo': 'nothing to undo',
  'cannot-undo': 'cannot be undone',
  'not-run': 'did not run',
  unknown: '',
};

type Row = Pick<ActivityRow, 'decision' | 'outcome' | 'undo' | 'class'>;

export function undoWord(c: Row): UndoWord {
  const u = c.undo;
  if (c.decision !== 'allow' || c.outcome === 'not-run') return 'not-run';
  if (!u) return 'unknown';
  if (u.state === 'undone') return 'undone';
  if (u.available) return 'undoable';
  if (u.state === 'unchanged') return 'nothing-to-undo';
  if (u.kind === null && (c.class === 'read-only-trusted' || c.class === 'read-only-unchecked')) return 'nothing-to-undo';
  if (c.outcome === 'pending') return 'unknown';
  return 'cannot-undo';
}

/** The client an undo's own journal entry is made under. */
const UNDO_CLIENT = 'airlock-undo';

/** Whether a row is an undo of another call (undoing it redoes that call). */
export function isUndoEntry(c: Pick<ActivityRow, 'client' | 'undo'>): boolean {
  return c.undo?.undoOf !== undefined || c.client === UNDO_CLIENT;
}
