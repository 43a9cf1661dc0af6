/**
 * The passkeys a person registered (`passkeys`, migration 13): what verifying one of their assertions needs
 * (the credential's public key and its last signature counter) and what a front end lists (name, times). Each
 * row carries a seal (seals.ts) over its id, key, name and time: a row without a good one (written in while the
 * broker was stopped) is not a passkey of the person's, and is neither listed nor believed.
 */
import type Database from 'better-sqlite3';
import type { RowOrigin } from '../../protocol/presence.js';
import type { Sealer } from './seals.js';

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
  via: string | null;
  seal: string | null;
}

const sealed = (r: Pick<RawRow, 'id' | 'public_key' | 'name' | 'created_at'>) => [r.id, Buffer.from(r.public_key).toString('hex'), r.name, r.created_at] as const;

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

  constructor(
    db: Database.Database,
    private readonly sealer: Sealer,
  ) {
    this.s = {
      list: db.prepare('SELECT * FROM passkeys ORDER BY created_at, id'),
      get: db.prepare('SELECT * FROM passkeys WHERE id = ?'),
      insert: db.prepare('INSERT INTO passkeys (id, public_key, counter, transports, name, created_at, via, seal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      used: db.prepare('UPDATE passkeys SET counter = ?, last_used_at = ? WHERE id = ?'),
      remove: db.prepare('DELETE FROM passkeys WHERE id = ?'),
    };
  }

  private good(r: RawRow): boolean {
    return this.sealer.check('passkeys', sealed(r), r.via, r.seal);
  }

  count(): number {
    return this.list().length;
  }

  list(): PasskeyRow[] {
    return (this.s.list.all() as RawRow[]).filter((r) => this.good(r)).map(rowOf);
  }

  /** Rows without a good seal: reported at start, never believed. */
  unsealed(): { id: string; name: string }[] {
    return (this.s.list.all() as RawRow[]).filter((r) => !this.good(r)).map((r) => ({ id: r.id, name: r.name }));
  }

  get(id: string): PasskeyRow | null {
    const r = this.s.get.get(id) as RawRow | undefined;
    return r && this.good(r) ? rowOf(r) : null;
  }

  insert(p: Omit<PasskeyRow, 'lastUsedAt'>, origin: RowOrigin): void {
    const { via, seal } = this.sealer.sign('passkeys', sealed({ id: p.id, public_key: Buffer.from(p.publicKey), name: p.name, created_at: p.createdAt }), origin);
    this.s.insert.run(p.id, Buffer.from(p.publicKey), p.counter, JSON.stringify(p.transports), p.name, p.createdAt, via, seal);
  }

  used(id: string, counter: number, at: number): void {
    this.s.used.run(counter, at, id);
  }

  /** False: there was no such passkey. */
  remove(id: string): boolean {
    return this.s.remove.run(id).changes > 0;
  }
}
