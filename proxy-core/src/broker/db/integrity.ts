/**
 * The database's start-up check: what appeared, changed or went while the broker was stopped. Tightening rows
 * that are gone are put back from their sealed record (tightening.ts); rows whose seal is missing or wrong are
 * listed (the tables' reads already ignore the loosening ones: seals.ts); rows deleted from the journal and the
 * event stream are counted (log-marks.ts). The broker reports what was found once, as events, and in `status`.
 */
import type { Integrity, UnsealedRow } from '../../protocol/api.js';
import type { Row } from './queries.js';
import { rowKey, rowSealed, SEALED_TABLES, type SealedTableName } from './sealed-tables.js';
import { describeRuleRow } from './tightening.js';
import type Database from 'better-sqlite3';
import type { LogMarks } from './log-marks.js';
import type { Sealer } from './seals.js';
import type { TighteningRecord } from './tightening.js';

/** What the checks read of the store (named here, so this room does not point back at the store that runs it). */
export interface IntegrityParts {
  readonly db: Database.Database;
  readonly sealer: Sealer;
  readonly tightening: TighteningRecord;
  readonly marks: LogMarks;
}

/** A row in words, and whether it is applied all the same (it only tightens). */
function describe(table: SealedTableName, row: Row): { what: string; applied: boolean } {
  switch (table) {
    case 'rules':
      return { what: describeRuleRow(row), applied: row.action !== 'allow' };
    case 'server_settings':
      return row.trust_read_only_hints === 1 ? { what: `trust the read-only hints of ${String(row.server)}`, applied: false } : { what: `do not trust the read-only hints of ${String(row.server)}`, applied: true };
    case 'settings':
      return { what: `setting ${String(row.key)} = ${String(row.value)}`, applied: false };
    case 'tool_pins':
      return { what: `pin of ${String(row.server)} → ${String(row.tool)} (${String(row.fingerprint).slice(0, 12)})`, applied: false };
    case 'inverses':
      return { what: `inverse of ${String(row.server)} → ${String(row.tool)}: ${String(row.inverse)}`, applied: false };
    case 'file_tools':
      return { what: `file tool ${String(row.server)} → ${String(row.tool)} (${String(row.path_arg)})`, applied: false };
  }
}

/** Every row of the sealed tables whose seal is missing or wrong. */
export function unsealedRows(store: Pick<IntegrityParts, 'db' | 'sealer'>): UnsealedRow[] {
  const out: UnsealedRow[] = [];
  for (const table of Object.keys(SEALED_TABLES) as SealedTableName[]) {
    for (const row of store.db.prepare(`SELECT * FROM ${table}`).all() as Row[]) {
      if (!rowSealed(store.sealer, table, row)) out.push({ table, key: rowKey(table, row), ...describe(table, row) });
    }
  }
  return out;
}

export function checkIntegrity(store: IntegrityParts): Integrity {
  const { restored, manifestMissing } = store.tightening.restore();
  return {
    unsealed: unsealedRows(store),
    restored,
    gaps: store.marks.check(),
    ...(manifestMissing ? { manifestMissing: true } : {}),
  };
}
