/**
 * The broker's switches (`settings`: key and text value, read through protocol/settings.ts) and, per server,
 * whether its read-only hints are trusted (`server_settings`). Every row is sealed with the origin of the change
 * (seals.ts); a row whose seal is missing or wrong reads as absent (a setting falls back, a server is not
 * trusted), so a value put in with sqlite3 while the broker was stopped is not believed.
 */
import type Database from 'better-sqlite3';
import type { RowOrigin } from '../../protocol/presence.js';
import { rowSealed, signRow } from './sealed-tables.js';
import { BY_AIRLOCK, type Sealer } from './seals.js';

const SET_SQL = `INSERT INTO settings (key, value, via, seal) VALUES (?, ?, ?, ?)
  ON CONFLICT(key) DO UPDATE SET value = excluded.value, via = excluded.via, seal = excluded.seal`;

/** Store a sealed setting through `db` (the migration that brings seals in writes its marks this way too). */
export function putSealedSetting(db: Database.Database, sealer: Sealer, key: string, value: string, origin: RowOrigin = BY_AIRLOCK): void {
  const { via, seal } = signRow(sealer, 'settings', { key, value }, origin);
  db.prepare(SET_SQL).run(key, value, via, seal);
}

export class SettingsTable {
  private readonly s;
  /** Called after a setting is stored (the record of tightening rows follows it: tightening.ts). */
  changed: (key: string) => void = () => {};

  constructor(
    db: Database.Database,
    private readonly sealer: Sealer,
  ) {
    this.s = {
      get: db.prepare('SELECT key, value, via, seal FROM settings WHERE key = ?'),
      set: db.prepare(SET_SQL),
      getTrust: db.prepare('SELECT server, trust_read_only_hints, via, seal FROM server_settings WHERE server = ?'),
      setTrust: db.prepare(`INSERT INTO server_settings (server, trust_read_only_hints, via, seal) VALUES (?, ?, ?, ?)
        ON CONFLICT(server) DO UPDATE SET trust_read_only_hints = excluded.trust_read_only_hints, via = excluded.via, seal = excluded.seal`),
      listTrust: db.prepare('SELECT server, trust_read_only_hints, via, seal FROM server_settings WHERE trust_read_only_hints = 1 ORDER BY server'),
    };
  }

  /** The value of `key` when its row is sealed; undefined when there is none, or it is not sealed. */
  get(key: string): string | undefined {
    const row = this.s.get.get(key) as Record<string, unknown> | undefined;
    return row && rowSealed(this.sealer, 'settings', row) ? String(row.value) : undefined;
  }

  /** `origin`: the decision's via; the broker's own bookkeeping says so (BY_AIRLOCK). */
  set(key: string, value: string, origin: RowOrigin = BY_AIRLOCK): void {
    const { via, seal } = signRow(this.sealer, 'settings', { key, value }, origin);
    this.s.set.run(key, value, via, seal);
    this.changed(key);
  }

  trusts(server: string): boolean {
    const row = this.s.getTrust.get(server) as Record<string, unknown> | undefined;
    return row?.trust_read_only_hints === 1 && rowSealed(this.sealer, 'server_settings', row);
  }

  setTrust(server: string, on: boolean, origin: RowOrigin = BY_AIRLOCK): void {
    const t = on ? 1 : 0;
    const { via, seal } = signRow(this.sealer, 'server_settings', { server, trust_read_only_hints: t }, origin);
    this.s.setTrust.run(server, t, via, seal);
  }

  trustedServers(): string[] {
    return (this.s.listTrust.all() as Record<string, unknown>[]).filter((r) => rowSealed(this.sealer, 'server_settings', r)).map((r) => String(r.server));
  }
}
