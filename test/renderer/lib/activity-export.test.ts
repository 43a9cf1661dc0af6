import { describe, expect, test } from 'vitest';
import { exportFileName, exportMime, exportPieces, type ExportPager } from '../../../renderer/src/lib/activity-export.js';

describe('exportPieces', () => {
  test("pages through the broker's export of the filter, one piece a page, counting entries", async () => {
    const asked: Parameters<ExportPager>[0][] = [];
    const pages = [
      { text: 'seq,id\r\n3,c3\r\n2,c2\r\n', count: 2, nextCursor: 2 },
      { text: '1,c1\r\n', count: 1, nextCursor: null },
    ];
    const progress: number[] = [];
    const pieces = await exportPieces('csv', { tool: 'write_file' }, async (q) => (asked.push(q), pages.shift()!), (n) => progress.push(n));
    expect(asked).toEqual([{ tool: 'write_file', format: 'csv', first: true }, { tool: 'write_file', format: 'csv', first: false, before: 2 }]);
    expect(progress).toEqual([2, 3]);
    expect(pieces.join('')).toBe('seq,id\r\n3,c3\r\n2,c2\r\n1,c1\r\n');
  });

  test('file names hold no colon; each format has its type', () => {
    expect(exportFileName('csv', Date.UTC(2026, 11, 1, 10, 2))).toBe('airlock-activity-2026-12-01T10-02.csv');
    expect(exportFileName('jsonl', 0)).toMatch(/\.jsonl$/);
    expect(exportMime('csv')).toMatch(/^text\/csv/);
  });
});
