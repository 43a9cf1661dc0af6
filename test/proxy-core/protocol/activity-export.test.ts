import { describe, expect, test } from 'vitest';
import { readCsv } from '../../helpers/csv.js';
import { csvCell, csvHeader, csvRecord, EXPORT_COLUMNS, exportRecord, jsonlLine, type ExportItem } from '../../../proxy-core/src/protocol/activity-export.js';

const item: ExportItem = {
  seq: 7, id: 'c7', client: 'claude-desktop', server: 'filesystem', tool: 'write_file', class: 'mutating', decision: 'allow', decidedBy: 'user',
  detail: 'approved by you, with a passkey in the browser', outcome: 'ok', startedAt: Date.UTC(2026, 0, 2, 3, 4, 5), sessionId: 's1',
  argSummary: 'notes/"a", b.md\nnext', undo: { available: true, kind: 'snapshot', state: 'ready' }, durationMs: 12.5,
};


describe('csvCell', () => {
  test('RFC 4180 quoting: commas, quotes and line breaks', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\r\nlines')).toBe('"two\r\nlines"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(3.5)).toBe('3.5');
  });

  test('a cell a spreadsheet would run as a formula is written as text', () => {
    for (const f of ['=HYPERLINK("http://x")', '+1+1', '-2+3', '@SUM(A1)', '\t=1', '\r=1']) expect(csvCell(f).replace(/^"/, '')[0]).toBe("'");
    expect(csvCell('=1,2')).toBe(`"'=1,2"`);
  });
});

describe('records', () => {
  test('a CSV record reads back (with a well-kept parser) to the same fields', () => {
    const [header, row, ...rest] = readCsv(csvHeader() + csvRecord(item));
    expect(rest).toEqual([]);
    expect(header).toEqual([...EXPORT_COLUMNS]);
    expect(Object.fromEntries(header!.map((k, i) => [k, row![i]]))).toMatchObject({ id: 'c7', time: '2026-01-02T03:04:05.000Z', summary: 'notes/"a", b.md\nnext', why: 'allowed by you, with a passkey in the browser', undo: 'undoable', isUndo: 'false', durationMs: '12.5' });
  });

  test('a JSON Lines record is one line that parses to the export record', () => {
    const line = jsonlLine(item);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(line)).toEqual(exportRecord(item));
  });
});
