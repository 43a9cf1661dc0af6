/**
 * The UI host's session records on disk (`ui-sessions.json` in the data dir, mode 0600), so a signed-in page
 * keeps working across a broker restart. Hashes only: the file signs nobody in by itself. Anything in it that
 * is not a well-formed record is ignored (fail closed: a session less, never one more), and a write that
 * fails costs persistence only, never the host.
 */
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import type { SessionRecord, SessionStore } from './sessions.js';

const HEX64 = /^[0-9a-f]{64}$/;
const MAX_FILE_BYTES = 64 * 1024;

function isRecord(v: unknown): v is SessionRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.cookieHash === 'string' && HEX64.test(r.cookieHash) && typeof r.keyHash === 'string' && HEX64.test(r.keyHash) &&
    Number.isSafeInteger(r.created) && Number.isSafeInteger(r.lastSeen);
}

export function sessionFile(path: string, onError: (err: Error) => void = () => {}): SessionStore {
  return {
    load() {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        return [];
      }
      if (text.length > MAX_FILE_BYTES) return [];
      try {
        const parsed = JSON.parse(text) as { sessions?: unknown };
        if (!Array.isArray(parsed.sessions)) return [];
        return parsed.sessions.filter(isRecord).map((r) => ({ cookieHash: r.cookieHash, keyHash: r.keyHash, created: r.created, lastSeen: r.lastSeen }));
      } catch {
        return [];
      }
    },
    save(records) {
      const tmp = `${path}.${process.pid}.tmp`;
      const text = JSON.stringify({ v: 1, sessions: records }) + '\n';
      try {
        // exclusive create: a file or symlink planted at the temp name is removed, never written through
        try {
          writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
          unlinkSync(tmp);
          writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
        }
        renameSync(tmp, path);
      } catch (err) {
        onError(err as Error);
      }
    },
  };
}
