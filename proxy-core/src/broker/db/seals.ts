/**
 * Seals: state that appeared without a proof is not believed. Every row the broker writes that loosens (an allow
 * rule, trust in a server's hints, a setting, an accepted pin, a declared inverse or file tool) is stored with
 * the origin of the decision that made it (protocol/presence.ts RowOrigin: the `via` of its proof) and an
 * HMAC-SHA256 over the row's content and that origin, under a key kept in the data dir (`presence.key`, 0600,
 * made at first start). A row whose seal is missing or wrong is not applied (and reported: integrity.ts).
 *
 * What this does and does not stop, honestly. In the normal mode the broker runs as the person, and an agent
 * running as the same user can read `presence.key` and compute good seals itself: the seal does not stop an
 * agent that knows this scheme. It stops a blind insert or edit (the sqlite3 CLI, a tool that does not know of
 * seals, an old backup's row pasted in), it makes every row say which proof made it, and it stops tampering
 * outright in hardened mode (`airlock service install`), where the data dir is out of the person's (and so the
 * agent's) reach.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir } from '../../ipc/secret.js';
import { type RowOrigin, RowOriginSchema } from '../../protocol/presence.js';
import { parseJson } from './queries.js';

export const SEAL_KEY_FILE = 'presence.key';

/** Rows that existed before the database kept seals: sealed once by the migration, and saying so. */
export const BEFORE_PROOFS: RowOrigin = { made: 'before-presence-proofs' };
/** The broker's own bookkeeping (a disk probe, its low-water marks): no person's decision. */
export const BY_AIRLOCK: RowOrigin = { made: 'by-airlock' };

/** A column's value as SQLite hands it back (what a seal covers). */
export type SqlValue = string | number | bigint | null;

/** Read the seal key of the data dir `dir`, making it (32 random bytes, hex, 0600) when it does not exist yet. */
export function loadOrCreateSealKey(dir: string): Buffer {
  ensurePrivateDir(dir);
  const path = join(dir, SEAL_KEY_FILE);
  try {
    return readKey(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    writeFileSync(path, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // another start raced this one to it: use theirs
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (process.platform !== 'win32') chmodSync(path, 0o600);
  return readKey(path);
}

function readKey(path: string): Buffer {
  const text = readFileSync(path, 'utf8').trim();
  // a damaged key would make every row look forged (and be ignored): say which file, do not start on it
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`the seal key ${path} is damaged; restore it from a backup of the data dir (without it every rule, trust and setting is ignored)`);
  return Buffer.from(text, 'hex');
}

export class Sealer {
  constructor(private readonly key: Buffer) {}

  /** The `via` text and the seal to store with a row of `table` whose sealed columns hold `fields`. */
  sign(table: string, fields: readonly SqlValue[], origin: RowOrigin): { via: string; seal: string } {
    const via = JSON.stringify(origin);
    return { via, seal: this.mac(table, fields, via) };
  }

  /** Whether a stored row's seal is the one its content and `via` give. */
  check(table: string, fields: readonly SqlValue[], via: unknown, seal: unknown): boolean {
    if (typeof via !== 'string' || typeof seal !== 'string' || seal.length !== 64) return false;
    const expected = Buffer.from(this.mac(table, fields, via));
    return timingSafeEqual(expected, Buffer.from(seal));
  }

  private mac(table: string, fields: readonly SqlValue[], via: string): string {
    // one JSON array: no field can run into the next, and a table's rows cannot pass for another's
    const text = JSON.stringify(['airlock-seal/1', table, fields.map((f) => (typeof f === 'bigint' ? f.toString() : f)), via]);
    return createHmac('sha256', this.key).update(text).digest('hex');
  }
}

/** A stored `via` read back (null when it is not one: a row with such a via has no good seal anyway). */
export function readOrigin(via: unknown): RowOrigin | null {
  const parsed = RowOriginSchema.safeParse(parseJson(via));
  return parsed.success ? parsed.data : null;
}
