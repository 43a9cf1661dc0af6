/**
 * The upstream MCP server as a child process, and how to stop it: close stdin, then SIGTERM, then SIGKILL,
 * to the whole process tree, so `npx`/`uvx` grandchildren are not orphaned.
 */
import { type ChildProcess, type ChildProcessByStdio, spawn as nodeSpawn, spawnSync } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/**
 * Where the wrapper's server lives, seen as two line-framed byte streams: a child process on stdio, or a
 * remote server over HTTP. The relay does not know which.
 */
export interface UpstreamEnd {
  /** Fits after "the MCP server …": "exited with code 3", "could not be started: …". */
  description: string;
  exitCode: number;
  /** False when it never ran (so nothing it was sent can have happened). */
  started: boolean;
}

export interface Upstream {
  /** Line-framed JSON-RPC for the server. */
  readonly input: Writable;
  /** Line-framed JSON-RPC from the server. */
  readonly output: Readable;
  /** Stop it (and for a process, everything it started). Safe to call more than once. */
  stop(): Promise<void>;
  /** Settles once, when the server is gone: how it ended, and the exit code the wrapper should leave with. */
  readonly ended: Promise<UpstreamEnd>;
}

export type UpstreamProcess = ChildProcessByStdio<Writable, Readable, null>;

export interface ShutdownTimings {
  /** After stdin ends, how long the server gets to exit by itself. */
  stdinGraceMs: number;
  /** After SIGTERM, how long before SIGKILL. */
  termGraceMs: number;
}

export const DEFAULT_TIMINGS: ShutdownTimings = { stdinGraceMs: 1000, termGraceMs: 2000 };

/** Spawn the server. POSIX: its own process group, so the whole tree can be signalled at once. */
export async function spawnUpstream(command: string, args: string[]): Promise<UpstreamProcess> {
  if (process.platform === 'win32') {
    // cross-spawn resolves .cmd/.bat shims (npx.cmd) that plain spawn cannot start without a shell;
    // loaded only where it is needed, to keep start-up short elsewhere
    const { default: crossSpawn } = await import('cross-spawn');
    return crossSpawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], windowsHide: true }) as unknown as UpstreamProcess;
  }
  return nodeSpawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
}

/** Signal a server and everything it started. Synchronous on Windows, so it also works in an exit hook. */
export function signalTree(pid: number, signal: NodeJS.Signals): boolean {
  if (process.platform === 'win32') {
    // no process groups: taskkill /T walks the tree, and /F is the only reliable stop for console children
    spawnSync('taskkill', ['/T', '/F', '/PID', String(pid)], { stdio: 'ignore', windowsHide: true });
    return true;
  }
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while any process of the group is alive (POSIX); on Windows, the leader only. */
export function treeAlive(pid: number): boolean {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stop the server and everything it started. Resolves when the leader has exited and the group is gone (or
 * SIGKILL was sent). Safe to call more than once.
 */
export function stopUpstream(child: ChildProcess, timings: ShutdownTimings = DEFAULT_TIMINGS): Promise<void> {
  const pid = child.pid;
  const leaderDone = child.exitCode !== null || child.signalCode !== null;
  const exited = leaderDone ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    child.stdin?.end();
  } catch {
    // already closed
  }
  if (pid === undefined) return exited;
  // ref'd on purpose: a caller awaiting the shutdown must not see Node exit under it
  const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const gone = async (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      if ((child.exitCode !== null || child.signalCode !== null) && !treeAlive(pid)) return true;
      await wait(25);
    }
    return (child.exitCode !== null || child.signalCode !== null) && !treeAlive(pid);
  };
  return (async () => {
    if (await gone(timings.stdinGraceMs)) return;
    signalTree(pid, 'SIGTERM');
    if (await gone(timings.termGraceMs)) return;
    signalTree(pid, 'SIGKILL');
    await Promise.race([exited, wait(1000)]);
  })();
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** A spawned server as an Upstream. `spawnError` is a failure reported before anyone listened for it. */
export function stdioUpstream(child: UpstreamProcess, spawnError?: NodeJS.ErrnoException): Upstream {
  let stopping: Promise<void> | null = null;
  const ended = new Promise<UpstreamEnd>((resolve) => {
    let failure = spawnError;
    const notStarted = () => {
      const why = failure?.code === 'ENOENT' ? 'command not found (use an absolute path; clients start servers with a minimal PATH)' : failure?.message;
      resolve({ description: `could not be started: ${why}`, exitCode: 127, started: false });
    };
    child.on('error', (err: NodeJS.ErrnoException) => (failure = err));
    child.on('close', (code, signal) => {
      if (failure && child.pid === undefined) return notStarted();
      if (signal) resolve({ description: `was killed by ${signal}`, exitCode: 128 + (SIGNAL_NUMBERS[signal] ?? 0), started: true });
      else resolve({ description: `exited with code ${code}`, exitCode: code ?? 1, started: true });
    });
    // a server that never started may have reported its close before we listened
    if (spawnError && child.pid === undefined) setTimeout(notStarted, 50);
  });
  return { input: child.stdin, output: child.stdout, ended, stop: () => (stopping ??= stopUpstream(child)) };
}
