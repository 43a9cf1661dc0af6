/**
 * A unified diff (what `ticket.preview` returns for a file write) as lines to draw: each with its kind, a
 * marker that says the same as its colour (+ added, − removed), and the line numbers on either side.
 */

export type DiffLineKind = 'add' | 'del' | 'ctx' | 'hunk' | 'file' | 'note';

export interface DiffLine {
  kind: DiffLineKind;
  /** `+`, `−` (U+2212) or a space: colour is never the only cue. */
  marker: string;
  text: string;
  /** Line number in the old file (removed and context lines). */
  oldNo?: number;
  /** Line number in the new file (added and context lines). */
  newNo?: number;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export const MARKERS: Readonly<Record<DiffLineKind, string>> = { add: '+', del: '\u2212', ctx: ' ', hunk: ' ', file: ' ', note: ' ' };

/** Words for a marker, for screen readers and tooltips. */
export const MARKER_WORDS: Readonly<Record<DiffLineKind, string>> = { add: 'added', del: 'removed', ctx: 'unchanged', hunk: 'lines', file: 'file', note: 'note' };

export function parseUnifiedDiff(diff: string): DiffLine[] {
  if (diff === '') return [];
  const raw = diff.split('\n');
  if (raw[raw.length - 1] === '') raw.pop();
  const out: DiffLine[] = [];
  let oldNo = 0;
  let newNo = 0;
  let inHunk = false;
  for (const line of raw) {
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      inHunk = true;
      out.push({ kind: 'hunk', marker: MARKERS.hunk, text: line });
    } else if (!inHunk && (line.startsWith('--- ') || line.startsWith('+++ ') || line.startsWith('diff ') || line.startsWith('index ') || line.startsWith('==='))) {
      out.push({ kind: 'file', marker: MARKERS.file, text: line });
    } else if (line.startsWith('\\')) {
      out.push({ kind: 'note', marker: MARKERS.note, text: line.replace(/^\\\s?/, '') });
    } else if (line.startsWith('+')) {
      out.push({ kind: 'add', marker: MARKERS.add, text: line.slice(1), newNo: newNo++ });
    } else if (line.startsWith('-')) {
      out.push({ kind: 'del', marker: MARKERS.del, text: line.slice(1), oldNo: oldNo++ });
    } else {
      out.push({ kind: 'ctx', marker: MARKERS.ctx, text: line.startsWith(' ') ? line.slice(1) : line, oldNo: oldNo++, newNo: newNo++ });
    }
  }
  return out;
}

/** How a preview's counts read: "+3 −1". */
export function diffCounts(added: number, removed: number): string {
  return `+${added} \u2212${removed}`;
}
