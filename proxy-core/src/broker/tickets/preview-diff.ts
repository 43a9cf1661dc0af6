/**
 * The unified diff a preview shows, with its line counts. Line diffing is quadratic in the worst case, so it
 * is bounded in time: first a short synchronous try (most changes are small and done at once), then the diff
 * library's async mode (one step per timer turn, so the broker keeps serving, but a millisecond a step), and
 * past its limit the change is shown as what it then is to a reader anyway, the whole file replaced.
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatch } from 'diff';

/** The most of a diff's text a preview carries (the counts still cover all of it). */
export const DIFF_TEXT_LIMIT = 256 * 1024;
const DIFF_TIME_LIMIT_MS = 2000;
/** How long the synchronous try may hold the event loop. */
const SYNC_BUDGET_MS = 30;
const CONTEXT_LINES = 3;
const NO_EOL = '\\ No newline at end of file';

export interface FileDiff {
  /** Unified diff (`---`/`+++`, `@@` hunks); empty when nothing changes. */
  diff: string;
  added: number;
  removed: number;
  truncated: boolean;
  /** The texts were too different to compare line by line in time: shown as a whole replacement. */
  whole: boolean;
}

/** Lines added and removed in a patch. */
export function diffStats(patch: Pick<StructuredPatch, 'hunks'>): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const h of patch.hunks) {
    for (const l of h.lines) {
      if (l.startsWith('+')) added++;
      else if (l.startsWith('-')) removed++;
    }
  }
  return { added, removed };
}

/** A diff text cut at `limit` characters, at a line's end so no line is shown half. */
export function cutDiff(text: string, limit = DIFF_TEXT_LIMIT): { text: string; truncated: boolean } {
  if (text.length <= limit) return { text, truncated: false };
  const end = text.lastIndexOf('\n', limit - 1);
  return { text: text.slice(0, end > 0 ? end + 1 : limit), truncated: true };
}

function lines(text: string): { lines: string[]; noEol: boolean } {
  if (text === '') return { lines: [], noEol: false };
  const all = text.split('\n');
  const noEol = !text.endsWith('\n');
  if (!noEol) all.pop();
  return { lines: all, noEol };
}

/** Every old line removed and every new one added, as one hunk. */
export function wholeReplacement(oldName: string, newName: string, before: string, after: string): StructuredPatch {
  const o = lines(before);
  const n = lines(after);
  const body = [...o.lines.map((l) => `-${l}`), ...(o.noEol ? [NO_EOL] : []), ...n.lines.map((l) => `+${l}`), ...(n.noEol ? [NO_EOL] : [])];
  const hunks = before === after ? [] : [{ oldStart: 1, oldLines: o.lines.length, newStart: 1, newLines: n.lines.length, lines: body }];
  return { oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined, hunks };
}

function linePatch(oldName: string, newName: string, before: string, after: string, timeoutMs: number): Promise<StructuredPatch | undefined> {
  return new Promise((resolve) => {
    structuredPatch(oldName, newName, before, after, undefined, undefined, { context: CONTEXT_LINES, timeout: timeoutMs, callback: resolve });
  });
}

/** The diff from `before` to `after` of the file at `path` (`exists` false: it is created). */
export async function fileDiff(path: string, before: string, after: string, exists: boolean, opts: { timeoutMs?: number; limit?: number } = {}): Promise<FileDiff> {
  const oldName = exists ? path : '/dev/null';
  if (before === after) return { diff: '', added: 0, removed: 0, truncated: false, whole: false };
  const timeoutMs = opts.timeoutMs ?? DIFF_TIME_LIMIT_MS;
  // from or to nothing, the whole replacement is the line diff
  const empty = before === '' || after === '';
  const byLine = empty
    ? wholeReplacement(oldName, path, before, after)
    : (structuredPatch(oldName, path, before, after, undefined, undefined, { context: CONTEXT_LINES, timeout: Math.min(SYNC_BUDGET_MS, timeoutMs) }) ??
      (await linePatch(oldName, path, before, after, timeoutMs)));
  const patch = byLine ?? wholeReplacement(oldName, path, before, after);
  const { added, removed } = diffStats(patch);
  const { text, truncated } = cutDiff(patch.hunks.length ? formatPatch(patch, FILE_HEADERS_ONLY) : '', opts.limit ?? DIFF_TEXT_LIMIT);
  return { diff: text, added, removed, truncated, whole: byLine === undefined };
}
