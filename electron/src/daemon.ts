/**
 * The broker as a child process: `airlock daemon` run by the app's own runtime (Electron's binary with
 * ELECTRON_RUN_AS_NODE=1 is plain Node). SQLite writes are synchronous; in a process of its own they never
 * stall the tray or a popup, and a broker crash never takes the app down with it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { Writable } from 'node:stream';

export interface DaemonOptions {
  execPath: string;
  cli: string;
  env: NodeJS.ProcessEnv;
  /** The daemon's stderr is appended here. */
  logFile: string;
  /** Give up on a daemon that says nothing for this long. */
  readyTimeoutMs?: number;
}

export interface Daemon {
  pid: number;
  /**
   * The key this broker checks the app's presence proofs with (Touch ID, a click the app saw): made here, in
   * memory, and handed over on a pipe of the child's own (fd 3). Never in a file, an argument or the
   * environment: a process of the same user can read all three (/proc/PID/cmdline, /proc/PID/environ).
   */
  appKey: Buffer;
  /** Settles when the process has exited, with how it ended. */
  exited: Promise<string>;
  /** SIGTERM (the daemon closes its database and socket), SIGKILL if it is still there after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** The daemon refused to start because another broker already serves this data dir: attach to that one. */
export class AlreadyServed extends Error {
  override name = 'AlreadyServed';
}

/** The child's fd on which it reads the app's key (`--app-key-fd`). */
const KEY_FD = 3;

/** The line `airlock daemon` writes once its socket accepts connections. */
const READY = /airlock: broker running/;
const ALREADY = /another Airlock broker is already (running|answering)/;

/** Start the daemon and resolve once it serves; rejects with the reason it gave when it exits first. */
export function startDaemon(o: DaemonOptions): Promise<Daemon> {
  const appKey = randomBytes(32);
  const child = spawn(o.execPath, [o.cli, 'daemon', '--app-key-fd', String(KEY_FD)], {
    env: { ...o.env, ELECTRON_RUN_AS_NODE: '1' },
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  // the daemon reads its key to the end of the pipe before it does anything else: write it and close
  const keyPipe = child.stdio[KEY_FD] as Writable | null;
  keyPipe?.on('error', () => undefined);
  keyPipe?.end(`${appKey.toString('hex')}\n`);
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `stopped by ${signal}` : `exited with code ${code}`));
    child.once('error', (err) => resolve(`could not start (${err.message})`));
  });
  let lastLine = '';
  return new Promise<Daemon>((resolve, reject) => {
    let ready = false;
    let partial = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      try {
        appendFileSync(o.logFile, chunk);
      } catch {
        // the log is a convenience
      }
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.trim())) {
        lastLine = line.trim();
        if (!ready && READY.test(line)) {
          ready = true;
          clearTimeout(timer);
          resolve(handle(child, exited, appKey));
        }
      }
    });
    const timer = setTimeout(() => {
      if (ready) return;
      child.kill('SIGKILL');
      reject(new Error(`the broker did not start within ${Math.round((o.readyTimeoutMs ?? 20_000) / 1000)} s`));
    }, o.readyTimeoutMs ?? 20_000);
    void exited.then((how) => {
      clearTimeout(timer);
      if (ready) return;
      const said = lastLine.replace(/^airlock:\s*/, '');
      reject(ALREADY.test(said) ? new AlreadyServed(said) : new Error(said ? `the broker ${how}: ${said}` : `the broker ${how}`));
    });
  });
}

function handle(child: ChildProcess, exited: Promise<string>, appKey: Buffer): Daemon {
  return {
    pid: child.pid ?? 0,
    appKey,
    exited,
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
