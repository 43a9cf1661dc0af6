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

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

export const MARKERS: Readonly<Record<DiffLineKind, string>> = { add: '+', del: '\u2212', ctx: ' ', hunk: ' ', file: ' ', note: ' ' };

/** Words for a marker, for screen readers and tooltips. */
export const MARKER_WORDS: Readonly<Record<DiffLineKind, string>> = { add: 'added', del: 'removed', ctx: 'unchanged', hunk: 'lines', file: 'file', note: 'note' };

/**
 * The lines of a unified diff. A hunk ends when the lines its header counts are all read, so a diff of several
 * files (or of several parts of a tool's definition) starts each one with its `---`/`+++` headers again; inside a
 * hunk, a line that looks like a header is content.
 */
export function parseUnifiedDiff(diff: string): DiffLine[] {
  if (diff === '') return [];
  const raw = diff.split('\n');
  if (raw[raw.length - 1] === '') raw.pop();
  const out: DiffLine[] = [];
  let oldNo = 0;
  let newNo = 0;
  let inHunk = false;
  let oldLeft = 0;
  let newLeft = 0;
  const consumed = (old: number, neu: number): void => {
    oldLeft -= old;
    newLeft -= neu;
    if (oldLeft <= 0 && newLeft <= 0) inHunk = false;
  };
  for (const line of raw) {
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[3]);
      oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
      inHunk = oldLeft > 0 || newLeft > 0;
      out.push({ kind: 'hunk', marker: MARKERS.hunk, text: line });
    } else if (!inHunk && (line.startsWith('--- ') || line.startsWith('+++ ') || line.startsWith('diff ') || line.startsWith('index ') || line.startsWith('==='))) {
      out.push({ kind: 'file', marker: MARKERS.file, text: line });
    } else if (line.startsWith('\\')) {
      out.push({ kind: 'note', marker: MARKERS.note, text: line.replace(/^\\\s?/, '') });
    } else if (line.startsWith('+')) {
      out.push({ kind: 'add', marker: MARKERS.add, text: line.slice(1), newNo: newNo++ });
      if (inHunk) consumed(0, 1);
    } else if (line.startsWith('-')) {
      out.push({ kind: 'del', marker: MARKERS.del, text: line.slice(1), oldNo: oldNo++ });
      if (inHunk) consumed(1, 0);
    } else {
      out.push({ kind: 'ctx', marker: MARKERS.ctx, text: line.startsWith(' ') ? line.slice(1) : line, oldNo: oldNo++, newNo: newNo++ });
      if (inHunk) consumed(1, 1);
    }
  }
  return out;
}

/** How a preview's counts read: "+3 −1". */
export function diffCounts(added: number, removed: number): string {
  return `+${added} \u2212${removed}`;
}
