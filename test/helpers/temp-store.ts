/**
 * Journal stores on real files for a test file: `dbPath()` is a fresh path in a folder of its own, `open()` a
 * Store on one; after each test every store is closed and every folder removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { Store } from '../../proxy-core/src/broker/db/store.js';

export function tempStores(prefix: string): { dbPath(): string; open(path?: string): Store } {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(() => {
    for (const s of stores.splice(0)) if (s.db.open) s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const dbPath = (): string => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return join(d, 'airlock.db');
  };
  return {
    dbPath,
    open(path = dbPath()): Store {
      const s = new Store(path);
      stores.push(s);
      return s;
    },
  };
}
