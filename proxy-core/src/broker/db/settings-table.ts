/**
 * The broker's switches (`settings`: key and text value, read through protocol/settings.ts) and, per server,
 * whether its read-only hints are trusted (`server_settings`).
 */
import type Database from 'better-sqlite3';

export class SettingsTable {
  private readonly s;

  constructor(db: Database.Database) {
    this.s = {
      get: db.prepare('SELECT value FROM settings WHERE key = ?'),
      set: db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      getTrust: db.prepare('SELECT trust_read_only_hints AS t FROM server_settings WHERE server = ?'),
      setTrust: db.prepare(`INSERT INTO server_settings (server, trust_read_only_hints) VALUES (?, ?)
        ON CONFLICT(server) DO UPDATE SET trust_read_only_hints = excluded.trust_read_only_hints`),
      listTrust: db.prepare('SELECT server FROM server_settings WHERE trust_read_only_hints = 1 ORDER BY server'),
    };
  }

  get(key: string): string | undefined {
    const row = this.s.get.get(key) as { value: string } | undefined;
    return row?.value;
  }

  set(key: string, value: string): void {
    this.s.set.run(key, value);
  }

  trusts(server: string): boolean {
    const row = this.s.getTrust.get(server) as { t: number } | undefined;
    return row?.t === 1;
  }

  setTrust(server: string, on: boolean): void {
    this.s.setTrust.run(server, on ? 1 : 0);
  }

  trustedServers(): string[] {
    return (this.s.listTrust.all() as { server: string }[]).map((r) => r.server);
  }
}
