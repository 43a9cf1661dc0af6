// A bench module run on its own gets a broker of its own: a temporary home, `airlock daemon` started there and
// waited for, and everything stopped and removed afterwards.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from './paths.mjs';
import { uiUrlFrom } from '../test/helpers/chromium.mjs';

/**
 * Start `airlock daemon` with `args` (by default without presence proofs: benches approve as a script would) in
 * `env`'s AIRLOCK_HOME and wait until it listens, and with `--ui` until it has printed its sign-in link: the
 * process, with `url` (that link, a URL, for `--ui`) and `stop()` that ends it and waits for its exit.
 * AIRLOCK_DAEMON_NODE_ARGS (node's own flags, `--cpu-prof` say) is passed to it.
 */
export async function startBroker(env, args = ['--no-presence']) {
  const extra = process.env.AIRLOCK_DAEMON_NODE_ARGS ? process.env.AIRLOCK_DAEMON_NODE_ARGS.split(' ') : [];
  const proc = spawn(process.execPath, [...extra, CLI, 'daemon', ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ui = args.includes('--ui');
  await new Promise((resolve, reject) => {
    let err = '';
    proc.stderr.on('data', (d) => {
      err += d;
      const url = uiUrlFrom(err);
      if (err.includes('broker running') && (url || !ui)) {
        proc.url = url;
        resolve();
      }
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
