/**
 * The Activity page's export: every entry of the submitted filter, as the broker formats it (`history.export`,
 * the text `airlock history --export` writes), page by page. Each page arrives as one piece of text, so what is
 * held is the file being made, not 100,000 entries as objects.
 */
import type { HistoryQuery } from '@airlock/proxy-core/protocol/api';
import type { ExportFormat } from '@airlock/proxy-core/protocol/activity-export';

export type ExportPager = (q: Omit<HistoryQuery, 'limit' | 'summary' | 'id'> & { format: ExportFormat; first: boolean }) => Promise<{ text: string; count: number; nextCursor: number | null }>;

/** The pieces of the file, in order; `onprogress` is told how many entries are written so far. */
export async function exportPieces(format: ExportFormat, query: Omit<HistoryQuery, 'limit' | 'before' | 'summary' | 'id'>, page: ExportPager, onprogress?: (n: number) => void): Promise<string[]> {
  const pieces: string[] = [];
  let before: number | undefined;
  let n = 0;
  for (;;) {
    const r = await page({ ...query, format, first: pieces.length === 0, ...(before !== undefined ? { before } : {}) });
    pieces.push(r.text);
    n += r.count;
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
