/**
 * The tray's "Undo last": the broker's `undo.last`, and a notice of what it did. Which call it would undo is
 * asked of the broker's history once per connection and again only after an event that can change it (a call's
 * undo became known, an undo or a rollback ran, snapshots were pruned): never on a timer. A conflict is never
 * forced from here: the notice says what changed, and a click on it opens the app, where the person decides.
 */
import type { HistoryItem } from '@airlock/proxy-core';
import type { BrokerLink } from './broker.js';
import { type Log, messageOf } from './log.js';
import type { Notices } from './notices.js';
import type { Proofs } from './proofs.js';
import { Signal } from './signal.js';
import type { AppState } from './state.js';
import { type UndoCall, undoFailedNotice, undoLastWouldTake, undoNotice, type UndoNotice } from './undo-text.js';
import type { Windows } from './windows.js';

export interface UndoDeps {
  broker: BrokerLink;
  proofs: Proofs;
  state: AppState;
  notices: Notices;
  windows: Windows;
  log: Log;
}

export interface UndoLast {
  /** The call Undo last would undo now (the newest the broker can undo), or null: nothing to undo. */
  readonly target: UndoCall | null;
  /** An undo is running: the item waits for it (a second click would undo a second call). */
  readonly busy: boolean;
  readonly changed: Signal<void>;
  run(): Promise<void>;
}

/**
 * How far back the tray looks for an undoable call: the newest calls of the journal (as summaries). `undo.last`
 * itself finds the newest undoable call however old; the item is only greyed out when none of these is.
 */
const LOOK_BACK = 500;

export function setupUndoLast(deps: UndoDeps): UndoLast {
  const { broker, state, notices, windows, log } = deps;
  const changed = new Signal<void>();
  let target: UndoCall | null = null;
  let busy = false;
  let looking: Promise<void> | null = null;
  let again = false;

  const set = (next: UndoCall | null) => {
    if (sameTarget(next, target)) return;
    target = next;
    changed.emit();
  };

  /** Ask the broker's history; events arriving meanwhile make one more look, not one each. Resolves when settled. */
  const refresh = (): Promise<void> => {
    if (looking) {
      again = true;
      return looking;
    }
    looking = (async () => {
      do {
        again = false;
        try {
          const page = await broker.call('history', { limit: LOOK_BACK, summary: true }, { waitMs: 0 });
          set(page.calls.find(undoLastWouldTake) ?? null);
        } catch (err) {
          // no broker: the tray says so, and the next connection looks again
          log.warn(`could not read what Undo last would undo: ${messageOf(err)}`);
          set(null);
        }
      } while (again);
      // in the same step as the last check of `again`: a later event starts a look of its own
      looking = null;
    })();
    return looking;
  };

  /** The undone call's entry (what the notice names), or null. */
  const entry = async (callId: string): Promise<HistoryItem | null> => {
    if (!callId) return null;
    try {
      return (await broker.call('history', { id: callId, limit: 1, summary: true })).calls[0] ?? null;
    } catch {
      return null;
    }
  };

  const say = (n: UndoNotice) => notices.say(n.title, n.body, n.needsYou ? { onClick: () => windows.openMain('/activity') } : {});

  const run = async () => {
    if (busy) return;
    busy = true;
    changed.emit();
    try {
      // never forced: a file changed since the call is the person's to decide, in the app
      const report = await deps.proofs.call('undo.last', { force: false }, { via: 'the tray' });
      log.info(`Undo last (${report.callId || 'nothing'}): ${report.ok ? 'undone' : 'not undone'}: ${report.summary}`);
      say(undoNotice(report, (await entry(report.callId)) ?? (target?.id === report.callId ? target : null)));
    } catch (err) {
      say(undoFailedNotice(messageOf(err)));
    } finally {
      // the item comes back naming what it would undo next, never the call just undone
      await refresh();
      busy = false;
      changed.emit();
    }
  };

  state.undoChanged.on(() => void refresh());
  broker.connected.on(() => void refresh());
  return {
    get target() {
      return target;
    },
    get busy() {
      return busy;
    },
    changed,
    run,
  };
}

function sameTarget(a: UndoCall | null, b: UndoCall | null): boolean {
  if (a === null || b === null) return a === b;
  return a.id === b.id && JSON.stringify(a.undo ?? null) === JSON.stringify(b.undo ?? null);
}
