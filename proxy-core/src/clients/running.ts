/** Is a client app that rewrites its own config running right now? Asked through an injectable process lister. */
import { execFile } from 'node:child_process';
import { CLIENTS } from './known-clients.js';
import type { ClientId } from './types.js';

/** Names (or paths) of running processes. */
export type ProcessLister = () => Promise<string[]>;

/** The OS's process list: `ps -axo comm=` on Unix, `tasklist` on Windows; empty when neither answers. */
export function systemProcessLister(platform: NodeJS.Platform = process.platform): ProcessLister {
  return () =>
    new Promise((resolve) => {
      const [cmd, args] = platform === 'win32' ? ['tasklist', ['/fo', 'csv', '/nh']] : ['ps', ['-axo', 'comm=']];
      execFile(cmd, args as string[], { timeout: 3000, windowsHide: true, maxBuffer: 8 * 1024 * 1024 }, (err, stdout) => {
        if (err) return resolve([]);
        const lines = stdout.split(/\r?\n/).filter((l) => l.trim() !== '');
        // tasklist CSV: "Image Name","PID",...
        resolve(platform === 'win32' ? lines.map((l) => /^"([^"]*)"/.exec(l)?.[1] ?? l) : lines.map((l) => l.trim()));
      });
    });
}

/** True when one of the client's app processes shows up in the process list. */
export async function isClientRunning(
  client: ClientId,
  platform: NodeJS.Platform = process.platform,
  lister: ProcessLister = systemProcessLister(platform),
): Promise<boolean> {
  const names = CLIENTS[client].processNames?.[platform === 'win32' || platform === 'darwin' ? platform : 'linux'];
  if (!names) return false;
  const procs = await lister().catch(() => [] as string[]);
  const fold = (s: string) => (platform === 'win32' ? s.toLowerCase() : s);
  const wanted = new Set(names.map(fold));
  return procs.some((p) => wanted.has(fold(p.split(/[\\/]/).pop() ?? p)));
}
