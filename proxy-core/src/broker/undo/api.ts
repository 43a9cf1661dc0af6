/**
 * Undo's methods, each bound to one of the Undo part's public methods: an undo of one journaled call (or of the
 * newest one that can be), a session's rollback, declared inverses, and a wrapper's prepare before a call of a
 * file tool (the prior state of its files; a refusal denies the call).
 */
import { inversesList, inversesRemove, inversesSet, prepare, rollback, undo, undoLast } from '../../protocol/methods/undo.js';
import { type Bind, inSession } from '../api/handlers.js';
import type { Undo } from './undo.js';

/** `settled`: the journal has filed what it took in (an undo reads the journal: journal-writer.ts `settle`). */
export function bindUndo(on: Bind, u: Undo, settled: () => Promise<void>): void {
  on(undo, async (p) => (await settled(), u.undo(p.id, p.force)));
  on(undoLast, async (p) => (await settled(), u.undoLast(p.server, p.force)));
  on(rollback, async (p) => (await settled(), u.rollback(p.sessionId, p.force)));
  on(inversesList, () => u.declarations());
  on(inversesSet, (p, _call, via) => u.declare(p, via));
  on(inversesRemove, (p) => u.removeDeclaration(p.server, p.tool));
  on(prepare, inSession((session, p) => u.prepare(session, p)));
}
