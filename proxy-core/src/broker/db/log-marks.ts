/**
 * Gaps in the journal and the event stream. Their rows have increasing seqs (AUTOINCREMENT: a seq is never
 * given twice), and only retention deletes them, oldest first. So the broker keeps, sealed (seals.ts), the
 * retention's low-water mark (every seq below it may be gone) and the newest seq it knew (at a clean stop and
 * every minute); at start, rows missing above the mark, or a newest seq below the one known, were deleted by
 * something else and are reported (`journal-gap`, `events-gap`).
 *
 * The check is one count over the table's smallest index (SQLite counts a table that way, without reading the
 * rows) less the few rows kept below the mark, and two lookups of the newest seq: cheap at a million rows.
 */
import type Database from 'better-sqlite3';
import type { LogGap } from '../../protocol/api.js';
import type { Sealer } from './seals.js';
import { putSealedSetting, type SettingsTable } from './settings-table.js';

export const LOG_TABLES = { journal: 'journal_calls', events: 'event_log' } as const;
export type LogName = keyof typeof LOG_TABLES;

const lowKey = (log: LogName) => `integrity:${log}-low`;
const headKey = (log: LogName) => `integrity:${log}-head`;
const reportedKey = (log: LogName) => `integrity:${log}-reported`;

function statements(db: Database.Database, table: string) {
  return {
    count: db.prepare(`SELECT count(*) FROM ${table}`).pluck(),
    below: db.prepare(`SELECT count(*) FROM ${table} WHERE seq < ?`).pluck(),
    newest: db.prepare(`SELECT max(seq) FROM ${table}`).pluck(),
    issued: db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').pluck(),
  };
}

/** The newest seq ever given in `table`: its sqlite_sequence entry, or its newest row. */
function topSeq(db: Database.Database, table: string): number {
  const s = statements(db, table);
  return Math.max(Number(s.issued.get(table) ?? 0), Number(s.newest.get() ?? 0));
}

/** The marks of a database that had none (the migration that brings seals in): its past is not judged. */
export function initialMarks(db: Database.Database, sealer: Sealer): void {
  for (const log of Object.keys(LOG_TABLES) as LogName[]) {
    const top = topSeq(db, LOG_TABLES[log]);
    putSealedSetting(db, sealer, lowKey(log), String(top + 1));
    putSealedSetting(db, sealer, headKey(log), String(top));
  }
}

function mark(text: string | undefined): number | null {
  return text !== undefined && /^\d{1,15}$/.test(text) ? Number(text) : null;
}

export class LogMarks {
  private readonly s;

  constructor(
    db: Database.Database,
    private readonly settings: SettingsTable,
  ) {
    this.s = { journal: statements(db, LOG_TABLES.journal), events: statements(db, LOG_TABLES.events) };
  }

  /** Retention deleted rows of `log` up to `seq`: a gap below `seq + 1` is expected from now on. Call inside its transaction. */
  pruned(log: LogName, seq: number): void {
    const low = mark(this.settings.get(lowKey(log))) ?? 1;
    if (seq + 1 > low) this.settings.set(lowKey(log), String(seq + 1));
  }

  /** Record the newest seq of each log (at a clean stop, and now and then while running). */
  checkpoint(): void {
    for (const log of Object.keys(LOG_TABLES) as LogName[]) {
      const newest = Number(this.s[log].newest.get() ?? 0);
      const head = mark(this.settings.get(headKey(log))) ?? 0;
      if (newest > head) this.settings.set(headKey(log), String(newest));
    }
  }

  /**
   * Rows of each log gone without retention, counted as they are now; each log's gap is returned when it grew
   * since the last check (so a gap is reported once), and the count is recorded.
   */
  check(): LogGap[] {
    const gaps: LogGap[] = [];
    for (const log of Object.keys(LOG_TABLES) as LogName[]) {
      const table = LOG_TABLES[log];
      const s = this.s[log];
      // a mark that is gone or not sealed: every row is judged (and retention's own deletions counted), loudly
      const low = mark(this.settings.get(lowKey(log))) ?? 1;
      const head = mark(this.settings.get(headKey(log))) ?? 0;
      const newest = Number(s.newest.get() ?? 0);
      const top = Math.max(head, Number(s.issued.get(table) ?? 0), newest);
      if (top < low) continue;
      const kept = Number(s.count.get()) - Number(s.below.get(low));
      const missing = top - low + 1 - kept;
      const backwards = newest >= low ? top - newest : top - low + 1;
      const reported = mark(this.settings.get(reportedKey(log))) ?? 0;
      if (missing > reported) gaps.push({ log, missing: missing - backwards, backwards, from: low, to: top });
      if (missing !== reported) this.settings.set(reportedKey(log), String(missing));
      if (top > head) this.settings.set(headKey(log), String(top));
    }
    return gaps;
  }
}
