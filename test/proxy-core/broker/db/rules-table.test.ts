// The rules table's grant columns (migration 14): a rule sealed before them keeps its seal, a grant's end and
// count are covered by its seal, and spending a call reseals the row with the origin it was made with.
import { describe, expect, test } from 'vitest';
import { tempStores } from '../../../helpers/temp-store.js';

const stores = tempStores('al-rules-');

describe('grants in the rules table', () => {
  test('a rule without grant columns keeps its seal; a grant round-trips with its end and count', () => {
    const store = stores.open();
    store.addRule({ id: 'r1', action: 'allow', server: 'fs', tool: 'write', createdAt: 1 }, { channel: 'cli', proof: 'none' });
    store.addRule({ id: 'r2', action: 'allow', server: 'fs', tool: 'write', createdAt: 2, expiresAt: 5000, calls: 3, callsGranted: 3 }, { channel: 'cli', proof: 'none' });
    expect(store.rules()).toEqual([
      { id: 'r1', action: 'allow', server: 'fs', tool: 'write', createdAt: 1 },
      { id: 'r2', action: 'allow', server: 'fs', tool: 'write', createdAt: 2, expiresAt: 5000, calls: 3, callsGranted: 3 },
    ]);
  });

  test('spending counts down and keeps the seal good; none left: nothing to spend', () => {
    const store = stores.open();
    store.addRule({ id: 'r2', action: 'allow', server: 'fs', tool: 'w', createdAt: 2, calls: 2, callsGranted: 2 }, { channel: 'ui', proof: 'webauthn' });
    expect(store.ruleSet.spend('r2')).toEqual({ left: 1 });
    expect(store.ruleSet.spend('r2')).toEqual({ left: 0 });
    expect(store.ruleSet.spend('r2')).toBeNull();
    expect(store.rules().find((r) => r.id === 'r2')?.calls).toBe(0);
  });

  test('clearing an end or raising a count by hand breaks the seal: the grant is not applied', () => {
    const store = stores.open();
    store.addRule({ id: 'r3', action: 'allow', server: 'fs', tool: 'w', createdAt: 2, expiresAt: 9000 }, { channel: 'ui', proof: 'none' });
    store.addRule({ id: 'r4', action: 'allow', server: 'fs', tool: 'w', createdAt: 2, calls: 1, callsGranted: 1 }, { channel: 'ui', proof: 'none' });
    store.db.prepare('UPDATE rules SET expires_at = NULL WHERE id = ?').run('r3');
    store.db.prepare('UPDATE rules SET calls_left = 99 WHERE id = ?').run('r4');
    expect(store.rules()).toEqual([]);
    expect(store.ruleSet.spend('r4')).toBeNull();
  });
});
