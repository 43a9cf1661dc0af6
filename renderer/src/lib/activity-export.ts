/**
 * The Activity page's export: every entry of the submitted filter, read page by page (summaries: no arguments or
 * results) and written in the same format as `airlock history --export`. Each page becomes one piece of text
 * and its entries are let go, so what is held is the file being made, not 100,000 entries as objects.
 */
import type { HistoryItem, HistoryQuery } from '@airlock/proxy-core/protocol/api';
import { EXPORT_PAGE, exportEntry, exportHead, type ExportFormat } from '@airlock/proxy-core/protocol/activity-export';

export type HistoryPager = (q: HistoryQuery) => Promise<{ calls: HistoryItem[]; nextCursor: number | null }>;

/** The pieces of the file, in order; `onprogress` is told how many entries are written so far. */
export async function exportPieces(format: ExportFormat, query: Omit<HistoryQuery, 'limit' | 'before'>, page: HistoryPager, onprogress?: (n: number) => void): Promise<string[]> {
  const pieces = [exportHead(format)];
  let before: number | undefined;
  let n = 0;
  for (;;) {
    const r = await page({ ...query, summary: true, limit: EXPORT_PAGE, ...(before !== undefined ? { before } : {}) });
    let text = '';
    for (const c of r.calls) text += exportEntry(format, c);
    pieces.push(text);
    n += r.calls.length;
    onprogress?.(n);
    if (r.nextCursor === null) return pieces;
    before = r.nextCursor;
  }
}

/** "airlock-activity-2026-12-01T10-02.csv": a name that sorts by time and holds no character a file system refuses. */
export function exportFileName(format: ExportFormat, now: number): string {
  return `airlock-activity-${new Date(now).toISOString().slice(0, 16).replace(/:/g, '-')}.${format}`;
}

export function exportMime(format: ExportFormat): string {
  return format === 'csv' ? 'text/csv;charset=utf-8' : 'application/x-ndjson;charset=utf-8';
}
