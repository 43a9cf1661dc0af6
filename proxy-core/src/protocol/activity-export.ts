/**
 * The journal exported, one entry at a time: as JSON Lines (one object a line) or as CSV (RFC 4180: fields with
 * a comma, a quote or a line break quoted, quotes doubled, CRLF between records). Pure and shared by
 * `airlock history --export` and the UI's download, so both write the same file for the same filter.
 *
 * A CSV is opened in spreadsheets, and an agent chooses the arguments and the tool names in it: a text cell
 * starting with = + - @ (or a tab or a carriage return, which some spreadsheets skip before reading a formula)
 * would be run as a formula. Such a cell is written with a leading apostrophe, which the spreadsheet shows as text.
 */
import type { HistoryItem } from './api.js';
import { decisionWords, isUndoEntry, UNDO_WORDS, undoWord } from './activity.js';

export type ExportFormat = 'jsonl' | 'csv';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['jsonl', 'csv'];

export const EXPORT_COLUMNS = [
  'seq', 'id', 'time', 'session', 'client', 'server', 'tool', 'summary', 'class', 'decision', 'decidedBy', 'why', 'outcome', 'undo', 'isUndo', 'undoOf', 'durationMs', 'detail',
] as const;
export type ExportColumn = (typeof EXPORT_COLUMNS)[number];
export type ExportRecord = Record<ExportColumn, string | number | boolean | null>;

export type ExportItem = Pick<HistoryItem, 'seq' | 'id' | 'client' | 'server' | 'tool' | 'class' | 'decision' | 'decidedBy' | 'detail' | 'outcome' | 'startedAt'> &
  Partial<Pick<HistoryItem, 'sessionId' | 'argSummary' | 'undo' | 'durationMs'>>;

/** One entry as the export's columns hold it. */
export function exportRecord(c: ExportItem): ExportRecord {
  return {
    seq: c.seq,
    id: c.id,
    time: new Date(c.startedAt).toISOString(),
    session: c.sessionId ?? null,
    client: c.client,
    server: c.server,
    tool: c.tool,
    summary: c.argSummary ?? '',
    class: c.class,
    decision: c.decision,
    decidedBy: c.decidedBy,
    why: decisionWords(c).text,
    outcome: c.outcome,
    undo: UNDO_WORDS[undoWord(c)] || null,
    isUndo: isUndoEntry(c),
    undoOf: c.undo?.undoOf ?? null,
    durationMs: c.durationMs ?? null,
    detail: c.detail,
  };
}

/** A JSON Lines record (JSON.stringify escapes every line break inside a string, so one record is one line). */
export function jsonlLine(c: ExportItem): string {
  return `${JSON.stringify(exportRecord(c))}\n`;
}

/** A cell that a spreadsheet would read as a formula. */
const FORMULA = /^[=+\-@\t\r]/;

/** One CSV field: text guarded against formulas, quoted where RFC 4180 needs it. */
export function csvCell(v: string | number | boolean | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  let s = typeof v === 'boolean' ? String(v) : v;
  if (FORMULA.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(values: readonly (string | number | boolean | null)[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

export function csvHeader(): string {
  return csvLine(EXPORT_COLUMNS);
}

export function csvRecord(c: ExportItem): string {
  const r = exportRecord(c);
  return csvLine(EXPORT_COLUMNS.map((k) => r[k]));
}

/** The export's first text (CSV: its header), then one piece per entry. */
export function exportHead(format: ExportFormat): string {
  return format === 'csv' ? csvHeader() : '';
}

export function exportEntry(format: ExportFormat, c: ExportItem): string {
  return format === 'csv' ? csvRecord(c) : jsonlLine(c);
}

/** Pages of an export: large enough that 100,000 entries take few round trips, small enough to hold one at a time. */
export const EXPORT_PAGE = 2000;
