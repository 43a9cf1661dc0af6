/**
 * The shared secret both sides prove they know. Kept in a user-only file in the data dir: this stops other
 * users, not other processes of the same user (Node exposes no peer credentials to check).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { secretPath } from './paths.js';

/**
 * The data dir itself, made 0700: it may be reached through a symlink, where the person put it. The folders
 * Airlock makes inside it are checked as its own instead (util/own-folder.ts).
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform !== 'win32') chmodSync(dir, 0o700);
}

/** Read the secret, creating it (0600, in a 0700 folder) when it does not exist yet. */
export function loadOrCreateSecret(dir: string): Buffer {
  const path = secretPath(dir);
  ensurePrivateDir(dirname(path));
  try {
    return readSecret(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = randomBytes(32).toString('hex');
  try {
    writeFileSync(path, secret + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // another broker start raced us to it: use theirs
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readSecret(dir);
}

export function readSecret(dir: string): Buffer {
  return readSecretFile(secretPath(dir));
}

export function readSecretFile(path: string): Buffer {
  const text = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`the secret file ${path} is damaged; delete it and restart the broker`);
  return Buffer.from(text, 'hex');
}

export function newNonce(): string {
  return randomBytes(16).toString('hex');
}

/** Proof that the sender holds the secret, bound to both nonces and to the sender's side. */
export function proof(secret: Buffer, side: 'client' | 'broker', brokerNonce: string, clientNonce: string): string {
  return createHmac('sha256', secret).update(`airlock/1|${side}|${brokerNonce}|${clientNonce}`).digest('hex');
}

export function proofMatches(expected: string, got: unknown): boolean {
  if (typeof got !== 'string' || got.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(got));
}
