import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { MIGRATIONS } from '../../../../proxy-core/src/broker/db/migrations.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import type { CallRecord } from '../../../../proxy-core/src/protocol/api.js';
import { callRecord } from '../../../helpers/records.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dbPath(): string {
  const d = mkdtempSync(join(tmpdir(), 'al-store-'));
  dirs.push(d);
  return join(d, 'airlock.db');
}

const entry = (over: Partial<CallRecord> = {}): CallRecord => callRecord({ reasons: ['x'], ...over });

describe('Store', () => {
  test('migrates a new database and reopens it without re-running migrations', () => {
    const path = dbPath();
    new Store(path).close();
    const db = new Database(path);
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    const again = new Store(path);
    expect(again.journalCount()).toBe(0);
    again.close();
  });

  test('refuses a database from a newer Airlock instead of damaging it', () => {
    const path = dbPath();
    const db = new Database(path);
    db.pragma(`user_version = ${MIGRATIONS.length + 5}`);
    db.close();
    expect(() => new Store(path)).toThrow(/newer Airlock/);
  });

  test('a late copy of an entry never turns a final outcome back into pending', () => {
    const store = new Store(dbPath());
    store.writeJournal([entry(), entry({ outcome: 'ok', durationMs: 3 })]);
    store.writeJournal([entry()]);
    const [h] = store.history({ limit: 10 }).calls;
    expect(h).toMatchObject({ id: 'c1', outcome: 'ok', durationMs: 3 });
    store.close();
  });

  test('history is newest first and filters by server', () => {
    const store = new Store(dbPath());
    store.writeJournal([entry({ id: 'a', startedAt: 1 }), entry({ id: 'b', server: 'mail', startedAt: 2 }), entry({ id: 'c', startedAt: 3 })]);
    expect(store.history({ limit: 10 }).calls.map((h) => h.id)).toEqual(['c', 'b', 'a']);
    expect(store.history({ limit: 10, server: 'fs' }).calls.map((h) => h.id)).toEqual(['c', 'a']);
    expect(store.history({ limit: 1 }).calls.map((h) => h.id)).toEqual(['c']);
    store.close();
  });

  test('withdrawn claims are kept per server and tool, first evidence wins', () => {
    const store = new Store(dbPath());
    expect(store.withdrawClaim('fs', 'peek', 'first')).toBe(true);
    expect(store.withdrawClaim('fs', 'peek', 'second')).toBe(false);
    expect(store.withdrawn('fs')).toEqual({ peek: 'first' });
    expect(store.withdrawn('mail')).toEqual({});
    store.close();
  });

  test('settings, sessions, catalog, tickets, rules and trust keep working', () => {
    const store = new Store(dbPath());
    expect(store.getSetting('estop')).toBeUndefined();
    store.setSetting('estop', 'on');
    store.setSetting('estop', 'off');
    expect(store.getSetting('estop')).toBe('off');

    store.openSession({ id: 's1', client: 'cursor', server: 'fs', command: ['node', 'x.js'], pid: 42, since: 5 });
    store.endSession('s1');
    store.openSession({ id: 's2', client: 'cursor', server: 'fs', command: [], pid: 43, since: 6 });
    store.endAllSessions();
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM sessions WHERE ended_at IS NULL').get()).toEqual({ n: 0 });

    store.replaceCatalog('fs', [
      { name: 'write', class: 'mutating', reasons: ['r'], declared: { destructiveHint: false } },
      { name: 'read', class: 'read-only-unchecked', reasons: [] },
    ] as never);
    expect(store.catalog('fs')).toEqual([
      { name: 'read', class: 'read-only-unchecked', reasons: [], declared: null },
      { name: 'write', class: 'mutating', reasons: ['r'], declared: { destructiveHint: false } },
    ]);

    const ticket = {
      id: 't1', sessionId: 's1', client: 'cursor', server: 'fs', tool: 'write', arguments: { a: 1 }, argsTruncated: false,
      argsBytes: 7, argsSha256: 'a'.repeat(64), class: 'mutating' as const, reasons: [], createdAt: 1,
    };
    store.insertTicket(ticket);
    store.insertTicket({ ...ticket, id: 't2' });
    store.endTicket('t1', 'approved', 'once', null);
    expect(store.closeOrphanTickets()).toBe(1);
    expect(store.db.prepare('SELECT id, resolution FROM tickets ORDER BY id').all()).toEqual([
      { id: 't1', resolution: 'approved' },
      { id: 't2', resolution: 'broker-restart' },
    ]);

    store.addRule({ id: 'r1', action: 'deny', server: 'fs', tool: '*', createdAt: 1, client: 'cursor', note: 'n' });
    store.addRule({ id: 'r2', action: 'allow', server: '*', tool: 'read', createdAt: 2 });
    expect(store.rules()).toEqual([
      { id: 'r1', action: 'deny', server: 'fs', tool: '*', createdAt: 1, client: 'cursor', note: 'n' },
      { id: 'r2', action: 'allow', server: '*', tool: 'read', createdAt: 2 },
    ]);
    expect(store.removeRule('r1')).toBe(true);
    expect(store.removeRule('r1')).toBe(false);

    expect(store.trusts('fs')).toBe(false);
    store.setTrust('fs', true);
    expect(store.trusts('fs')).toBe(true);
    expect(store.trustedServers()).toEqual(['fs']);
    store.setTrust('fs', false);
    expect(store.trustedServers()).toEqual([]);
    store.close();
  });
});

describe('rules with argument conditions', () => {
  test('round-trip; conditions that cannot be read drop an allow and widen a deny, never the reverse', () => {
    const store = new Store(dbPath());
    const args = [{ arg: 'path', kind: 'path' as const, glob: '/home/me/notes/**' }];
    store.addRule({ id: 'r1', action: 'allow', server: 'fs', tool: 'write_file', args, createdAt: 1 });
    store.addRule({ id: 'r2', action: 'deny', server: 'fs', tool: 'write_file', args, createdAt: 2 });
    expect(store.rules().map((r) => [r.id, r.args])).toEqual([['r1', args], ['r2', args]]);
    store.db.prepare("UPDATE rules SET args = '[{\"arg\":\"path\",\"kind\":\"regex\"}]'").run();
    expect(store.rules()).toEqual([{ id: 'r2', action: 'deny', server: 'fs', tool: 'write_file', createdAt: 2 }]);
    store.close();
  });
});
