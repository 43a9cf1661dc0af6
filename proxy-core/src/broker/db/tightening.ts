/**
 * The sealed record of what tightens: deny and ask rules, settings stricter than their fallback, E-Stop on.
 * A seal on a row cannot tell that a row is gone, and deleting one of these loosens (a deny rule removed, E-Stop
 * released, the tripwire's limit back to the fallback). So the broker keeps them, as they were sealed, in one
 * sealed settings row rewritten after each change; at start, one that is gone or no longer sealed is put back
 * from it (failing closed) and reported. The same limit as every seal holds (seals.ts): an agent that reads the
 * key can rewrite this record too.
 */
import type Database from 'better-sqlite3';
import { isSettingKey, SETTINGS, type SettingKey, settingProblem, settingTightens } from '../../protocol/settings.js';
import type { Row } from './queries.js';
import type { RulesTable } from './rules-table.js';
import { SEALED_TABLES } from './sealed-tables.js';
import { readOrigin, BY_AIRLOCK } from './seals.js';
import type { SettingsTable } from './settings-table.js';
import { z } from 'zod';

export const TIGHTENING_KEY = 'integrity:tightening';
const ESTOP_KEY = 'estop';

const RecordSchema = z.object({
  rules: z.array(z.record(z.string(), z.unknown())),
  settings: z.array(z.object({ key: z.string(), value: z.string(), via: z.string() })),
});
type TighteningRecordData = z.infer<typeof RecordSchema>;

/** Whether a stored value of `key` is one the record keeps: stricter than when it is absent. */
export function keptTightening(key: string, value: string): boolean {
  if (key === ESTOP_KEY) return value === 'on';
  if (!isSettingKey(key) || settingProblem(key, value) !== null) return false;
  const fallback = SETTINGS[key as SettingKey].fallback;
  return value !== fallback && settingTightens(key, fallback, value);
}

/** A rule in words, as reports name it: "deny fs → delete_file". */
export function describeRuleRow(row: Row): string {
  return `${String(row.action)} ${String(row.server)} → ${String(row.tool)}${row.client ? ` (client ${String(row.client)})` : ''}`;
}

export class TighteningRecord {
  private readonly s;

  constructor(
    db: Database.Database,
    private readonly rules: RulesTable,
    private readonly settings: SettingsTable,
  ) {
    this.s = { settings: db.prepare('SELECT key, via FROM settings ORDER BY key') };
  }

  /** Rewrite the record from what is in force now. */
  write(): void {
    const data: TighteningRecordData = { rules: [], settings: [] };
    for (const { row, sealed } of this.rules.rows()) {
      if (sealed && row.action !== 'allow') data.rules.push({ ...Object.fromEntries(SEALED_TABLES.rules.columns.map((c) => [c, row[c] ?? null])), via: row.via });
    }
    for (const { key, via } of this.s.settings.all() as { key: string; via: string }[]) {
      const value = key === TIGHTENING_KEY ? undefined : this.settings.get(key);
      if (value !== undefined && keptTightening(key, value)) data.settings.push({ key, value, via });
    }
    this.settings.set(TIGHTENING_KEY, JSON.stringify(data));
  }

  /** Put back what the record holds and the database lost; what was put back, in words, and whether the record was gone. */
  restore(): { restored: string[]; manifestMissing: boolean } {
    const text = this.settings.get(TIGHTENING_KEY);
    const parsed = text === undefined ? null : RecordSchema.safeParse(JSON.parse(text));
    const restored: string[] = [];
    if (parsed?.success) {
      const present = new Map(this.rules.rows().map(({ row, sealed }) => [String(row.id), sealed]));
      for (const rule of parsed.data.rules) {
        if (present.get(String(rule.id)) === true) continue;
        const { via, ...row } = rule;
        this.rules.put(row, readOrigin(via) ?? BY_AIRLOCK);
        restored.push(describeRuleRow(row));
      }
      for (const { key, value, via } of parsed.data.settings) {
        if (this.settings.get(key) !== undefined) continue;
        this.settings.set(key, value, readOrigin(via) ?? BY_AIRLOCK);
        restored.push(`${key} = ${value}`);
      }
    }
    this.write();
    return { restored, manifestMissing: !parsed?.success };
  }
}
