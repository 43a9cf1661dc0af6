/**
 * The main process's log: one line per thing worth knowing, appended to a file in the app's log folder (a
 * tray app has no terminal to write to, and a packaged one has no stdout anyone reads).
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export interface Log {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, err?: unknown): void;
}

export function fileLog(path: string): Log {
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch {
    // a log that cannot be written must not stop the app
  }
  const write = (level: string, message: string) => {
    try {
      appendFileSync(path, `${new Date().toISOString()} ${level} ${message}\n`);
    } catch {
      // as above
    }
  };
  return {
    info: (m) => write('info', m),
    warn: (m) => write('warn', m),
    error: (m, err) => write('error', err === undefined ? m : `${m}: ${err instanceof Error ? err.message : String(err)}`),
  };
}

/** One line for a person out of anything thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
