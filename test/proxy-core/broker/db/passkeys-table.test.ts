// The passkeys table (migration 13): a database written at schema 11 gains it empty, and a credential is
// kept as registered (key bytes, counter, transports), updated on use and removed.
import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { MIGRATIONS } from '../../../../proxy-core/src/broker/db/migrations.js';
import { PasskeysTable } from '../../../../proxy-core/src/broker/db/passkeys-table.js';
import { tempStores } from '../../../helpers/temp-store.js';

const stores = tempStores('al-passkeys-table-');

describe('passkeys table', () => {
  test('migration 13 adds it, empty, to a database that upgrades (from schema 11, through the seals), the rest untouched', () => {
    const path = stores.dbPath();
    const old = new Database(path);
    for (const sql of MIGRATIONS.slice(0, 11)) old.exec(sql);
    old.pragma('user_version = 11');
    old.prepare("INSERT INTO settings (key, value) VALUES ('ticket-timeout', '300')").run();
    old.close();
    const store = stores.open(path);
    expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(MIGRATIONS.length).toBeGreaterThanOrEqual(13);
    expect(store.getSetting('ticket-timeout')).toBe('300');
    expect(new PasskeysTable(store.db, store.sealer).count()).toBe(0);
  });

  test('keeps a credential as registered, its counter and last use, and removes it', () => {
    const store = stores.open();
    const t = new PasskeysTable(store.db, store.sealer);
    t.insert({ id: 'cred-1', publicKey: new Uint8Array([1, 2, 3]), counter: 4, transports: ['internal', 'hybrid'], name: 'laptop', createdAt: 1000 }, { channel: 'ui', proof: 'none' });
    expect(t.get('cred-1')).toEqual({ id: 'cred-1', publicKey: new Uint8Array([1, 2, 3]), counter: 4, transports: ['internal', 'hybrid'], name: 'laptop', createdAt: 1000, lastUsedAt: null });
    t.used('cred-1', 9, 2000);
    expect(t.get('cred-1')).toMatchObject({ counter: 9, lastUsedAt: 2000 });
    expect(t.list().map((r) => r.id)).toEqual(['cred-1']);
    expect(t.remove('cred-1')).toBe(true);
    expect(t.remove('cred-1')).toBe(false);
    expect(t.get('cred-1')).toBeNull();
  });

  test('a row written in without a good seal (an agent with sqlite3, the broker stopped) is neither listed nor believed', () => {
    const store = stores.open();
    const t = new PasskeysTable(store.db, store.sealer);
    t.insert({ id: 'mine', publicKey: new Uint8Array([1]), counter: 0, transports: [], name: 'laptop', createdAt: 1000 }, { channel: 'ui', proof: 'none' });
    store.db.prepare("INSERT INTO passkeys (id, public_key, counter, transports, name, created_at) VALUES ('agents', x'02', 0, '[]', 'agent', 2000)").run();
    // a sealed row whose key is swapped for the agent's
    t.insert({ id: 'swapped', publicKey: new Uint8Array([3]), counter: 0, transports: [], name: 'phone', createdAt: 3000 }, { channel: 'ui', proof: 'none' });
    store.db.prepare("UPDATE passkeys SET public_key = x'04' WHERE id = 'swapped'").run();
    expect(t.list().map((r) => r.id)).toEqual(['mine']);
    expect(t.count()).toBe(1);
    expect(t.get('agents')).toBeNull();
    expect(t.get('swapped')).toBeNull();
    expect(t.unsealed()).toEqual([{ id: 'agents', name: 'agent' }, { id: 'swapped', name: 'phone' }]);
  });
});
