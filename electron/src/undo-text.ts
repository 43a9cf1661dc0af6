/**
 * What "Undo last" says, in plain words: the tray item naming the call it would undo, and the notice of what an
 * undo did (put back, removed), or why it did not (files changed since the call: the person decides in the
 * app; something could not be put back: the residue). Pure, so the words are tested without a tray.
 */
import type { EventDetails, HistoryItem } from '@airlock/proxy-core';
import { basename } from 'node:path';

export type UndoReport = EventDetails['undo'];

/** The call an undo is about: its history entry, or as much of it as is known. */
export type UndoCall = Pick<HistoryItem, 'id' | 'server' | 'tool'> & { undo?: HistoryItem['undo'] };

export interface UndoNotice {
  title: string;
  body: string;
  /** Nothing (or not everything) was undone: a click on the notice opens the app, where the person decides. */
  needsYou: boolean;
}

const LABEL_MAX = 100;
const BODY_MAX = 400;

/** Whether "Undo last" would undo this history entry: the broker's `undo.last` picks the newest such call. */
export function undoLastWouldTake(c: Pick<HistoryItem, 'undo'>): boolean {
  // an undo's own entry (a redo) is never "the last change": undo.last passes over it, as it does here
  return c.undo?.state === 'ready' && !c.undo.undoOf;
}

/** The tray item: what Undo last would undo now. */
export function undoLastLabel(target: UndoCall | null, busy: boolean): string {
  if (busy) return 'Undoing…';
  if (!target) return 'Undo last';
  const paths = target.undo?.paths ?? [];
  const what = paths.length === 1 ? ` ${basename(paths[0]!)}` : paths.length > 1 ? ` (${paths.length} files)` : '';
  return cut(`Undo last: ${target.server} · ${target.tool}${what}`, LABEL_MAX);
}

/** The notice of one undo (`call`: the undone call's entry, when it could be read). */
export function undoNotice(report: UndoReport, call: UndoCall | null): UndoNotice {
  const name = call ? `${call.server} · ${call.tool}` : null;
  if (report.ok) {
    return { title: name ? `Undone: ${name}` : 'Undone', body: body(undoneText(report, call)), needsYou: false };
  }
  if (report.conflicts.length > 0) {
    const paths = report.conflicts.map((c) => c.path);
    const deleted = report.conflicts.every((c) => c.found === 'absent');
    const what = deleted ? `${names(paths)} ${paths.length === 1 ? 'was' : 'were'} deleted` : `${names(paths)} changed`;
    return {
      title: name ? `Not undone: ${name}` : 'Not undone',
      body: body(`${what} after the call, so nothing was overwritten. Open Airlock to decide.`),
      needsYou: true,
    };
  }
  if (report.residue.length > 0) {
    const done = report.restored.filter((r) => r.action !== 'already-as-before').map((r) => r.path);
    const left = `${report.residue.slice(0, 2).join('; ')}${report.residue.length > 2 ? ` (and ${report.residue.length - 2} more)` : ''}`;
    return {
      title: name ? `Undo did not finish: ${name}` : 'Undo did not finish',
      body: body(`${sentence(left)}${done.length ? ` Put back: ${names(done)}.` : ''} Open Airlock for the details.`),
      needsYou: true,
    };
  }
  // refused before anything ran: nothing to undo, or this call cannot be undone now
  if (!report.callId) return { title: 'Nothing to undo', body: body(sentence(report.summary)), needsYou: false };
  return { title: name ? `Not undone: ${name}` : 'Not undone', body: body(sentence(report.summary)), needsYou: true };
}

/** The notice when the undo could not even be asked for (no broker, a timeout). */
export function undoFailedNotice(message: string): UndoNotice {
  return { title: 'Undo did not run', body: body(sentence(message)), needsYou: false };
}

function undoneText(report: UndoReport, call: UndoCall | null): string {
  if (report.kind === 'inverse') {
    const inverse = call?.undo?.inverse;
    return `Airlock called ${inverse ?? 'its declared inverse'}${call ? ` on ${call.server}` : ''} to take the call back.`;
  }
  const by = (action: UndoReport['restored'][number]['action']) => report.restored.filter((r) => r.action === action).map((r) => r.path);
  const parts: string[] = [];
  const restored = by('restored');
  if (restored.length) parts.push(`put back ${names(restored)} as ${restored.length === 1 ? 'it was' : 'they were'} before the call`);
  const removed = by('removed');
  if (removed.length) parts.push(`removed ${names(removed)}, which the call created`);
  const recreated = by('recreated');
  if (recreated.length) parts.push(`recreated ${names(recreated)} (empty: Airlock keeps no copy of a folder's contents)`);
  const same = by('already-as-before');
  if (same.length && parts.length) parts.push(`${names(same)} ${same.length === 1 ? 'was' : 'were'} already as before`);
  return parts.length ? sentence(parts.join('; ')) : 'Nothing needed putting back: the files were already as before the call.';
}

/** File names, not paths (the app shows the paths): "a.txt", "a.txt and b.txt", "a.txt, b.txt and 3 more files". */
function names(paths: readonly string[]): string {
  const shown = paths.map((p) => basename(p) || p);
  if (shown.length <= 1) return shown[0] ?? 'the files';
  if (shown.length <= 3) return `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
  return `${shown.slice(0, 2).join(', ')} and ${shown.length - 2} more files`;
}

function sentence(text: string): string {
  const t = text.trim();
  if (!t) return t;
  const capital = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

function body(text: string): string {
  return cut(text, BODY_MAX);
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
