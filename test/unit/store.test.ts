import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { MIGRATIONS } from '../../proxy-core/src/broker/migrations.js';
import { Store } from '../../proxy-core/src/broker/store.js';
import type { JournalEntry } from '../../proxy-core/src/ipc/protocol.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dbPath(): string {
  const d = mkdtempSync(join(tmpdir(), 'al-store-'));
  dirs.push(d);
  return join(d, 'airlock.db');
}

const entry = (over: Partial<JournalEntry> = {}): JournalEntry => ({
  id: 'c1',
  client: 'cursor',
  server: 'fs',
  tool: 'write',
  arguments: '{}',
  argsTruncated: false,
  class: 'mutating',
  reasons: ['x'],
  decision: 'allow',
  decidedBy: 'rule',
  detail: '',
  outcome: 'pending',
  startedAt: 1,
  ...over,
});

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
    const [h] = store.history(10, null);
    expect(h).toMatchObject({ id: 'c1', outcome: 'ok', durationMs: 3 });
    store.close();
  });

  test('history is newest first and filters by server', () => {
    const store = new Store(dbPath());
    store.writeJournal([entry({ id: 'a', startedAt: 1 }), entry({ id: 'b', server: 'mail', startedAt: 2 }), entry({ id: 'c', startedAt: 3 })]);
    expect(store.history(10, null).map((h) => h.id)).toEqual(['c', 'b', 'a']);
    expect(store.history(10, 'fs').map((h) => h.id)).toEqual(['c', 'a']);
    expect(store.history(1, null).map((h) => h.id)).toEqual(['c']);
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
});
