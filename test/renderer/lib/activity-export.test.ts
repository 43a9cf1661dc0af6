import { describe, expect, test } from 'vitest';
import type { HistoryItem, HistoryQuery } from '@airlock/proxy-core/protocol/api';
import { exportFileName, exportPieces } from '../../../renderer/src/lib/activity-export.js';
import { item } from '../../helpers/activity-rows.js';

describe('exportPieces', () => {
  test('pages through the filter with summaries and writes the CLI format, one piece a page', async () => {
    const asked: HistoryQuery[] = [];
    const pages: { calls: HistoryItem[]; nextCursor: number | null }[] = [
      { calls: [item('c3', 3, { argSummary: '=1+1' }), item('c2', 2)], nextCursor: 2 },
      { calls: [item('c1', 1)], nextCursor: null },
    ];
    const progress: number[] = [];
    const pieces = await exportPieces('csv', { tool: 'write_file' }, async (q) => (asked.push(q), pages.shift()!), (n) => progress.push(n));
    expect(asked).toEqual([{ tool: 'write_file', summary: true, limit: 2000 }, { tool: 'write_file', summary: true, limit: 2000, before: 2 }]);
    expect(progress).toEqual([2, 3]);
    const text = pieces.join('');
    expect(text.split('\r\n')).toHaveLength(5);
    expect(text.startsWith('seq,id,time,')).toBe(true);
    expect(text).toContain(",'=1+1,");
  });

  test('JSON Lines has no header, and file names hold no colon', async () => {
    const pieces = await exportPieces('jsonl', {}, async () => ({ calls: [item('c1', 1)], nextCursor: null }));
    expect(pieces[0]).toBe('');
    expect(JSON.parse(pieces[1]!.trim())).toMatchObject({ id: 'c1', tool: 'write_file' });
    expect(exportFileName('csv', Date.UTC(2026, 11, 1, 10, 2))).toBe('airlock-activity-2026-12-01T10-02.csv');
  });
});
