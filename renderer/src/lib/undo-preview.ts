/**
 * What undoing a call will do, said before it is done: the files its snapshot puts back, or the inverse tool
 * Airlock calls, from what the broker's history says of the call (UndoInfo: its snapshot's paths, its inverse).
 */
import type { UndoInfo } from '@airlock/proxy-core/protocol/undo-api';

export interface UndoPreview {
  headline: string;
  items: string[];
  note: string;
}

export function undoPreview(undo: UndoInfo | undefined, isUndo: boolean): UndoPreview {
  const paths = undo?.paths ?? [];
  if (undo?.kind === 'inverse') {
    return {
      headline: `Airlock will call ${undo.inverse ?? 'the declared inverse'} on the same server to reverse this call.`,
      items: [],
      note: 'The inverse runs with what the call named; it goes through your rules like any call.',
    };
  }
  if (isUndo) {
    return {
      headline: paths.length ? `Undoing this undo redoes the call: ${paths.length === 1 ? 'this file gets' : 'these files get'} the call's content back.` : 'Undoing this undo redoes the call.',
      items: paths,
      note: 'A file changed since is not overwritten: Airlock reports it as a conflict.',
    };
  }
  return {
    headline: paths.length === 1 ? 'Airlock will put this file back as it was before the call:' : paths.length ? `Airlock will put these ${paths.length} files back as they were before the call:` : 'Airlock will put back what the call changed.',
    items: paths,
    note: 'A file the call created is removed; a file changed since the call is not overwritten (reported as a conflict). The undo can itself be undone.',
  };
}
