/**
 * The servers a person unprotected on purpose (`airlock unprotect`, the UI's Unprotect): auto-protect leaves
 * them alone, and wraps again any other protected entry it finds unwrapped. Kept as a small JSON file in the
 * data dir, so the CLI can record the choice while the broker is down; unreadable means "no choices" (the
 * watcher then re-wraps, which fails closed).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-write.js';
import { fileIdentity } from './discover.js';

const FILE = 'kept-unprotected.json';
const MAX_CHOICES = 10_000;

export interface KeptChoice {
  client: string;
  path: string;
  server: string;
}

const same = (a: KeptChoice, b: KeptChoice) => a.client === b.client && a.server === b.server && fileIdentity(a.path) === fileIdentity(b.path);

/** The recorded choices (none when the file is missing or unreadable). */
export function readKept(dataDir: string): KeptChoice[] {
  try {
    const parsed: unknown = JSON.parse(readFileSync(join(dataDir, FILE), 'utf8'));
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (c): c is KeptChoice => typeof c === 'object' && c !== null && typeof c.client === 'string' && typeof c.path === 'string' && typeof c.server === 'string',
    );
  } catch {
    return [];
  }
}

/** True when the person unprotected this server of this file on purpose. */
export function isKept(dataDir: string, choice: KeptChoice): boolean {
  return readKept(dataDir).some((c) => same(c, choice));
}

/** Record unprotect choices (`keep`) and forget them on protect (`forget`). */
export async function updateKept(dataDir: string, keep: KeptChoice[], forget: KeptChoice[]): Promise<void> {
  if (keep.length === 0 && forget.length === 0) return;
  const now = readKept(dataDir).filter((c) => !forget.some((f) => same(c, f)) && !keep.some((k) => same(c, k)));
  now.push(...keep);
  await writeFileAtomic(join(dataDir, FILE), Buffer.from(JSON.stringify(now.slice(-MAX_CHOICES), null, 1) + '\n'), { mode: 0o600 });
}
