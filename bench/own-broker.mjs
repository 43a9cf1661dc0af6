// A bench module run on its own gets a broker of its own: a temporary home, `airlock daemon` started there and
// waited for, and everything stopped and removed afterwards.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'airlock.js');

/** Run `fn({ home, env })` against a broker started for it in a fresh home named after `prefix`. */
export async function withOwnBroker(prefix, fn) {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const env = { ...process.env, AIRLOCK_HOME: home };
  const daemon = spawn(process.execPath, [CLI, 'daemon', '--no-presence'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    await new Promise((resolve, reject) => {
      let err = '';
      daemon.stderr.on('data', (d) => {
        err += d;
        if (err.includes('broker running')) resolve();
      });
      daemon.on('exit', () => reject(new Error(err)));
    });
    return await fn({ home, env });
  } finally {
    if (daemon.exitCode === null && daemon.signalCode === null) {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.on('exit', r));
    }
    rmSync(home, { recursive: true, force: true });
  }
}
