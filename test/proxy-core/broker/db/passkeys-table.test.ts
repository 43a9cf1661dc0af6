// The passkeys table (migration 12): a database written at schema 11 gains it empty, and a credential is
// kept as registered (key bytes, counter, transports), updated on use and removed.
import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { MIGRATIONS } from '../../../../proxy-core/src/broker/db/migrations.js';
import { PasskeysTable } from '../../../../proxy-core/src/broker/db/passkeys-table.js';
import { tempStores } from '../../../helpers/temp-store.js';

const stores = tempStores('al-passkeys-table-');

describe('passkeys table', () => {
  test('migration 12 adds it to a database at schema 11, empty, the rest untouched', () => {
    const path = stores.dbPath();
    const old = new Database(path);
    for (const sql of MIGRATIONS.slice(0, 11)) old.exec(sql);
    old.pragma('user_version = 11');
    old.prepare("INSERT INTO settings (key, value) VALUES ('ticket-timeout', '300')").run();
    old.close();
    const store = stores.open(path);
    expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(MIGRATIONS.length).toBe(12);
    expect(store.getSetting('ticket-timeout')).toBe('300');
    expect(new PasskeysTable(store.db).count()).toBe(0);
  });

  test('keeps a credential as registered, its counter and last use, and removes it', () => {
    const t = new PasskeysTable(stores.open().db);
    t.insert({ id: 'cred-1', publicKey: new Uint8Array([1, 2, 3]), counter: 4, transports: ['internal', 'hybrid'], name: 'laptop', createdAt: 1000 });
    expect(t.get('cred-1')).toEqual({ id: 'cred-1', publicKey: new Uint8Array([1, 2, 3]), counter: 4, transports: ['internal', 'hybrid'], name: 'laptop', createdAt: 1000, lastUsedAt: null });
    t.used('cred-1', 9, 2000);
    expect(t.get('cred-1')).toMatchObject({ counter: 9, lastUsedAt: 2000 });
    expect(t.list().map((r) => r.id)).toEqual(['cred-1']);
    expect(t.remove('cred-1')).toBe(true);
    expect(t.remove('cred-1')).toBe(false);
    expect(t.get('cred-1')).toBeNull();
  });
});
