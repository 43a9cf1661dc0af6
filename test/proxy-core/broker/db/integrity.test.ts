/**
 * State that appeared without a proof is not believed: rows put into the database with better-sqlite3 while no
 * broker runs (as an agent would with the sqlite3 CLI) are ignored and reported; tightening rows that went are
 * put back; a row forged with the key read from the data dir is accepted (the documented limit); a database
 * from before seals upgrades with its rows sealed as made before presence proofs.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { Broker } from '../../../../proxy-core/src/broker/broker.js';
import { MIGRATIONS } from '../../../../proxy-core/src/broker/db/migrations.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import type { Via } from '../../../../proxy-core/src/protocol/presence.js';
import { FakeClock } from '../../../helpers/fake-clock.js';
import { tempStores } from '../../../helpers/temp-store.js';

const stores = tempStores('al-seal-');
const brokers: Broker[] = [];
afterEach(() => {
  for (const b of brokers.splice(0)) b.shutdown();
});

const PASSKEY: Via = { channel: 'ui', proof: 'webauthn', label: 'laptop' };

function broker(store: Store): Broker {
  const b = new Broker({ presence: { required: false }, store, dataDir: dirname(store.db.name), ticketTimeoutSeconds: 120, ackTimeoutMs: 1500, clock: new FakeClock() });
  brokers.push(b);
  return b;
}

/** The broker stops; an agent edits the file; the broker starts again on it. */
function tamper(store: Store, edit: (db: Database.Database) => void): Store {
  const path = store.db.name;
  for (const b of brokers.splice(0)) b.shutdown();
  store.close();
  const db = new Database(path);
  edit(db);
  db.close();
  return stores.open(path);
}

const eventsOf = (store: Store, type: string) => store.events({ limit: 1000 }).events.filter((e) => e.type === type);

const insertRule = (db: Database.Database, id: string, action: string, tool: string) =>
  db.prepare('INSERT INTO rules (id, action, server, tool, created_at) VALUES (?, ?, ?, ?, ?)').run(id, action, 'fx', tool, 1);

describe('rows without a good seal', () => {
  test('an allow rule inserted while the broker is stopped is ignored, reported once at start, and listed as such', () => {
    const first = stores.open();
    broker(first);
    const store = tamper(first, (db) => insertRule(db, 'rforged', 'allow', 'write_note'));
    const b = broker(store);
    expect(b.rules().map((r) => r.id)).not.toContain('rforged');
    const unsealed = b.status().integrity!.unsealed;
    expect(unsealed).toEqual([{ table: 'rules', key: 'rforged', what: 'allow fx → write_note', applied: false }]);
    const events = eventsOf(store, 'unsealed-rows');
    expect(events).toHaveLength(1);
    expect(events[0]!.detail).toEqual({ rows: unsealed });
    // the person removes it (no proof needed: it was never in force), and status no longer lists it
    return b.removeRule('rforged').then(() => {
      expect(b.status().integrity!.unsealed).toEqual([]);
    });
  });

  test("a trust row inserted leaves the server's read-only hints untrusted", () => {
    const store = tamper(stores.open(), (db) => db.prepare('INSERT INTO server_settings (server, trust_read_only_hints) VALUES (?, 1)').run('fx'));
    const b = broker(store);
    expect(store.trusts('fx')).toBe(false);
    expect(store.trustedServers()).toEqual([]);
    expect(b.status().integrity!.unsealed.map((u) => u.what)).toEqual(['trust the read-only hints of fx']);
  });

  test('a looser setting inserted (tripwire off) leaves the tripwire on', () => {
    const store = tamper(stores.open(), (db) => db.prepare("INSERT INTO settings (key, value) VALUES ('tripwire', 'off')").run());
    const b = broker(store);
    expect(b.estop.limits.on).toBe(true);
    expect(b.status().integrity!.unsealed.map((u) => u.what)).toEqual(['setting tripwire = off']);
  });

  test('a sealed allow rule edited (its tool changed) is ignored; the rule as made stays sealed', async () => {
    const first = stores.open();
    const b0 = broker(first);
    const rule = await b0.addRule({ action: 'allow', server: 'fx', tool: 'read_note' });
    const store = tamper(first, (db) => db.prepare("UPDATE rules SET tool = '*' WHERE id = ?").run(rule.id));
    const b = broker(store);
    expect(b.rules()).toEqual([]);
    expect(b.status().integrity!.unsealed).toEqual([{ table: 'rules', key: rule.id, what: 'allow fx → *', applied: false }]);
  });

  test('a rule made through the API keeps the via of its decision', async () => {
    const store = stores.open();
    const b = broker(store);
    b.store.addRule({ id: 'rpk', action: 'allow', server: 'fx', tool: 't', createdAt: 1 }, PASSKEY);
    const row = store.db.prepare("SELECT via, seal FROM rules WHERE id = 'rpk'").get() as { via: string; seal: string };
    expect(JSON.parse(row.via)).toEqual(PASSKEY);
    expect(row.seal).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a deny rule deleted while the broker is stopped is put back and reported; E-Stop deleted comes back on', async () => {
    const first = stores.open();
    const b0 = broker(first);
    const deny = await b0.addRule({ action: 'deny', server: 'fx', tool: 'delete_note' });
    await b0.setSetting('tripwire-calls', '5');
    await b0.setEstop(true);
    const store = tamper(first, (db) => {
      db.prepare('DELETE FROM rules WHERE id = ?').run(deny.id);
      db.prepare("DELETE FROM settings WHERE key IN ('estop', 'tripwire-calls')").run();
    });
    const b = broker(store);
    expect(b.rules().map((r) => [r.id, r.action, r.tool])).toEqual([[deny.id, 'deny', 'delete_note']]);
    expect(b.estop.on).toBe(true);
    expect(b.estop.limits.calls).toBe(5);
    expect(b.status().integrity!.restored.sort()).toEqual(['deny fx → delete_note', 'estop = on', 'tripwire-calls = 5']);
    expect(eventsOf(store, 'tightening-restored')).toHaveLength(1);
  });

  test('a deny rule inserted without a seal is applied (it only tightens), and said so', () => {
    const store = tamper(stores.open(), (db) => insertRule(db, 'rdeny', 'deny', 'write_note'));
    const b = broker(store);
    expect(b.rules().map((r) => r.id)).toEqual(['rdeny']);
    expect(b.status().integrity!.unsealed).toEqual([{ table: 'rules', key: 'rdeny', what: 'deny fx → write_note', applied: true }]);
  });

  test('the limit, measured: a row forged with the key read from the data dir is accepted', () => {
    const first = stores.open();
    const dir = dirname(first.db.name);
    const keyFile = join(dir, 'presence.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const store = tamper(first, (db) => {
      // what an agent that knows the scheme does: read the key, compute the seal, insert
      const key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'hex');
      const via = JSON.stringify({ channel: 'cli', proof: 'polkit' });
      const fields = ['rforged', 'allow', 'fx', 'write_note', null, 1, null, null, null];
      const seal = createHmac('sha256', key).update(JSON.stringify(['airlock-seal/1', 'rules', fields, via])).digest('hex');
      db.prepare('INSERT INTO rules (id, action, server, tool, created_at, via, seal) VALUES (?, ?, ?, ?, ?, ?, ?)').run('rforged', 'allow', 'fx', 'write_note', 1, via, seal);
    });
    const b = broker(store);
    expect(b.rules().map((r) => r.id)).toEqual(['rforged']);
    expect(b.status().integrity!.unsealed).toEqual([]);
  });
});

describe('a database from before seals', () => {
  test('upgrades; its rows are sealed as made before presence proofs and stay in force; its past gaps are not judged', () => {
    const dir = mkdtempSync(join(tmpdir(), 'al-seal-old-'));
    try {
      const path = join(dir, 'airlock.db');
      const old = new Database(path);
      for (const sql of MIGRATIONS.slice(0, 11)) old.exec(sql);
      old.pragma('user_version = 11');
      insertRule(old, 'rold', 'allow', 'write_note');
      old.prepare('INSERT INTO server_settings (server, trust_read_only_hints) VALUES (?, 1)').run('fx');
      old.prepare("INSERT INTO settings (key, value) VALUES ('tripwire', 'off')").run();
      // a journal with a hole (what a DO NOTHING copy left before seqs were given back)
      const insert = old.prepare("INSERT INTO journal_calls (seq, id, client, server, tool, decision, decided_by, outcome, started_at) VALUES (?, ?, 1, 1, 1, 1, 1, 1, 1)");
      insert.run(1, 'c1');
      insert.run(5, 'c5');
      old.close();

      const store = new Store(path);
      try {
        expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
        const b = new Broker({ presence: { required: false }, store, dataDir: dir, ticketTimeoutSeconds: 120, ackTimeoutMs: 1500, clock: new FakeClock() });
        try {
          expect(b.rules().map((r) => r.id)).toEqual(['rold']);
          expect(store.trusts('fx')).toBe(true);
          expect(b.estop.limits.on).toBe(false);
          const via = store.db.prepare("SELECT via FROM rules WHERE id = 'rold'").pluck().get() as string;
          expect(JSON.parse(via)).toEqual({ made: 'before-presence-proofs' });
          expect(b.status().integrity).toEqual({ unsealed: [], restored: [], gaps: [] });
        } finally {
          b.shutdown();
        }
      } finally {
        store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
