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
  /**
   * What `get` last read of a key, its seal checked (a setting is read on hot paths: the audit export asks for
   * its endpoint at every event, and checking a seal is an HMAC). Only the Store writes these rows while it is
   * open, through `set`, which forgets the key; a value is kept only when read outside a transaction, so one
   * read or written in a transaction that is then rolled back is never served.
   */
  private readonly cache = new Map<string, string | undefined>();
  /** Called after a setting is stored (the record of tightening rows follows it: tightening.ts). */
  changed: (key: string) => void = () => {};

  constructor(
    private readonly db: Database.Database,
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
    if (this.cache.has(key)) return this.cache.get(key);
    const row = this.s.get.get(key) as Record<string, unknown> | undefined;
    const value = row && rowSealed(this.sealer, 'settings', row) ? String(row.value) : undefined;
    if (!this.db.inTransaction) this.cache.set(key, value);
    return value;
  }

  /** Forget what was read of `key` (every key when none is given): its row was written other than by `set`. */
  forget(key?: string): void {
    if (key === undefined) this.cache.clear();
    else this.cache.delete(key);
  }

  /** `origin`: the decision's via; the broker's own bookkeeping says so (BY_AIRLOCK). */
  set(key: string, value: string, origin: RowOrigin = BY_AIRLOCK): void {
    const { via, seal } = signRow(this.sealer, 'settings', { key, value }, origin);
    this.cache.delete(key);
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
