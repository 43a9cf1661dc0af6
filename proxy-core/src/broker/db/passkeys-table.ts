/**
 * The passkeys a person registered (`passkeys`, migration 12): what verifying one of their assertions needs
 * (the credential's public key and its last signature counter) and what a front end lists (name, times).
 */
import type Database from 'better-sqlite3';

export interface PasskeyRow {
  /** The credential id, base64url (as the browser names it). */
  id: string;
  /** The COSE public key, as the registration gave it. */
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

interface RawRow {
  id: string;
  public_key: Buffer;
  counter: number;
  transports: string;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

function transportsOf(text: string): string[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    // a damaged list only loses a hint to the browser: the key itself is still checked
    return [];
  }
}

const rowOf = (r: RawRow): PasskeyRow => ({
  id: r.id,
  publicKey: new Uint8Array(r.public_key),
  counter: r.counter,
  transports: transportsOf(r.transports),
  name: r.name,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

export class PasskeysTable {
  private readonly s;

  constructor(db: Database.Database) {
    this.s = {
      count: db.prepare('SELECT COUNT(*) AS n FROM passkeys'),
      list: db.prepare('SELECT * FROM passkeys ORDER BY created_at, id'),
      get: db.prepare('SELECT * FROM passkeys WHERE id = ?'),
      insert: db.prepare('INSERT INTO passkeys (id, public_key, counter, transports, name, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
      used: db.prepare('UPDATE passkeys SET counter = ?, last_used_at = ? WHERE id = ?'),
      remove: db.prepare('DELETE FROM passkeys WHERE id = ?'),
    };
  }

  count(): number {
    return (this.s.count.get() as { n: number }).n;
  }

  list(): PasskeyRow[] {
    return (this.s.list.all() as RawRow[]).map(rowOf);
  }

  get(id: string): PasskeyRow | null {
    const r = this.s.get.get(id) as RawRow | undefined;
    return r ? rowOf(r) : null;
  }

  insert(p: Omit<PasskeyRow, 'lastUsedAt'>): void {
    this.s.insert.run(p.id, Buffer.from(p.publicKey), p.counter, JSON.stringify(p.transports), p.name, p.createdAt);
  }

  used(id: string, counter: number, at: number): void {
    this.s.used.run(counter, at, id);
  }

  /** False: there was no such passkey. */
  remove(id: string): boolean {
    return this.s.remove.run(id).changes > 0;
  }
}
