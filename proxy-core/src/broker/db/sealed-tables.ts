/**
 * Which tables carry seals (seals.ts), which of their columns a seal covers, and sealing or checking one of
 * their rows by those columns. A column a seal does not cover is one that only tightens or only reports (a
 * pin's last-seen definition, whether the tool was in the last listing): changing it loosens nothing.
 */
import type Database from 'better-sqlite3';
import type { RowOrigin } from '../../protocol/presence.js';
import type { Row } from './queries.js';
import type { Sealer, SqlValue } from './seals.js';

export interface SealedTable {
  /** The columns that name a row (for a report and for `rules remove`). */
  key: readonly string[];
  /** The columns its seal covers, in order. */
  columns: readonly string[];
  /**
   * Columns added later that the seal covers when they are set (their name and value follow the columns): rows
   * sealed before they existed keep their seals, and a value set in one cannot be cleared or changed unseen.
   */
  optional?: readonly string[];
}

export const SEALED_TABLES = {
  rules: { key: ['id'], columns: ['id', 'action', 'server', 'tool', 'client', 'created_at', 'note', 'args', 'undoable'], optional: ['expires_at', 'calls_left', 'calls_granted'] },
  server_settings: { key: ['server'], columns: ['server', 'trust_read_only_hints'] },
  settings: { key: ['key'], columns: ['key', 'value'] },
  tool_pins: { key: ['server', 'tool'], columns: ['server', 'tool', 'fingerprint', 'definition', 'pinned_at'] },
  inverses: { key: ['server', 'tool'], columns: ['server', 'tool', 'inverse', 'source', 'map', 'created_at'] },
  file_tools: { key: ['server', 'tool'], columns: ['server', 'tool', 'kind', 'path_arg', 'content_arg', 'created_at'] },
} as const satisfies Record<string, SealedTable>;

export type SealedTableName = keyof typeof SEALED_TABLES;

function fields(table: SealedTableName, row: Row): SqlValue[] {
  const t: SealedTable = SEALED_TABLES[table];
  const out = t.columns.map((c) => (row[c] ?? null) as SqlValue);
  for (const c of t.optional ?? []) {
    const v = row[c];
    if (v !== null && v !== undefined) out.push(c, v as SqlValue);
  }
  return out;
}

/** The via and seal to store with `row` (its sealed columns by name). */
export function signRow(sealer: Sealer, table: SealedTableName, row: Row, origin: RowOrigin): { via: string; seal: string } {
  return sealer.sign(table, fields(table, row), origin);
}

/** Whether a row read with its `via` and `seal` columns carries a good seal. */
export function rowSealed(sealer: Sealer, table: SealedTableName, row: Row): boolean {
  return sealer.check(table, fields(table, row), row.via, row.seal);
}

/** A row's key, as text: `r1a2b3c`, `fs/write_file`. */
export function rowKey(table: SealedTableName, row: Row): string {
  return SEALED_TABLES[table].key.map((c) => String(row[c])).join('/');
}

/**
 * Seal every row of every sealed table as made by `origin` (the migration that brings seals in, with
 * "made before presence proofs"). Runs inside that migration's transaction, never later: sealing rows found
 * unsealed at a later start would bless whatever was inserted while the broker was stopped.
 */
export function sealEveryRow(db: Database.Database, sealer: Sealer, origin: RowOrigin): void {
  for (const table of Object.keys(SEALED_TABLES) as SealedTableName[]) {
    const update = db.prepare(`UPDATE ${table} SET via = ?, seal = ? WHERE rowid = ?`);
    for (const row of db.prepare(`SELECT rowid AS _rowid, * FROM ${table}`).all() as Row[]) {
      const { via, seal } = signRow(sealer, table, row, origin);
      update.run(via, seal, row._rowid);
    }
  }
}

/** Sealing and checking rows, for the parts that keep their own tables (pins, inverses, file tools): the Store. */
export interface RowSeals {
  reseal(table: SealedTableName, key: readonly unknown[], origin: RowOrigin): void;
  sealed(table: SealedTableName, row: Row): boolean;
}
