/** The config watcher's last known state per client config location, in the broker's database (migration 9). */
import type Database from 'better-sqlite3';
import type { KnownServer, WatchStateStore } from '../clients/watch.js';

/** Locations kept at most (a watcher sees a handful; a flood of config folders must not grow the table without end). */
const MAX_LOCATIONS = 2000;

function parseServers(text: string): Map<string, KnownServer> | null {
  try {
    const raw: unknown = JSON.parse(text);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
    const out = new Map<string, KnownServer>();
    for (const [name, v] of Object.entries(raw as Record<string, unknown>)) {
      if (typeof v !== 'object' || v === null) continue;
      const o = v as { protected?: unknown; warning?: unknown };
      out.set(name, { protected: o.protected === true, ...(typeof o.warning === 'string' ? { warning: o.warning } : {}) });
    }
    return out;
  } catch {
    return null;
  }
}

export function configStateStore(db: Database.Database, now: () => number): WatchStateStore {
  const list = db.prepare('SELECT location, servers FROM config_state');
  const upsert = db.prepare('INSERT INTO config_state (location, servers, updated_at) VALUES (?, ?, ?) ON CONFLICT (location) DO UPDATE SET servers = excluded.servers, updated_at = excluded.updated_at');
  const trim = db.prepare('DELETE FROM config_state WHERE location NOT IN (SELECT location FROM config_state ORDER BY updated_at DESC LIMIT ?)');
  return {
    load() {
      const out = new Map<string, Map<string, KnownServer>>();
      for (const row of list.all() as { location: string; servers: string }[]) {
        const servers = parseServers(row.servers);
        if (servers) out.set(row.location, servers);
      }
      return out;
    },
    save(location, servers) {
      upsert.run(location, JSON.stringify(Object.fromEntries(servers)), now());
      trim.run(MAX_LOCATIONS);
    },
  };
}
