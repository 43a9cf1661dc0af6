// A bench module run on its own gets a broker of its own: a temporary home, `airlock daemon` started there and
// waited for, and everything stopped and removed afterwards.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from './paths.mjs';

/**
 * Start `airlock daemon` (without presence proofs: benches approve as a script would) in `env`'s AIRLOCK_HOME
 * and wait until it listens; the process, with `stop()` that ends it and waits for its exit.
 */
export async function startBroker(env, args = ['--no-presence']) {
  const proc = spawn(process.execPath, [CLI, 'daemon', ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((resolve, reject) => {
    let err = '';
    proc.stderr.on('data', (d) => {
      err += d;
      if (err.includes('broker running')) resolve();
    });
    proc.on('exit', () => reject(new Error(`the broker exited: ${err}`)));
  });
  proc.stop = () =>
    new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', resolve);
      proc.kill('SIGTERM');
    });
  return proc;
}

/** Run `fn({ home, env })` against a broker started for it in a fresh home named after `prefix`. */
export async function withOwnBroker(prefix, fn) {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const env = { ...process.env, AIRLOCK_HOME: home };
  let daemon;
  try {
    daemon = await startBroker(env);
    return await fn({ home, env });
  } finally {
    await daemon?.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
