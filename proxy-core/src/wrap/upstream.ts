/**
 * The upstream MCP server as a child process, and how to stop it: close stdin, then SIGTERM, then SIGKILL,
 * to the whole process tree, so `npx`/`uvx` grandchildren are not orphaned.
 */
import { type ChildProcess, type ChildProcessByStdio, spawn as nodeSpawn, spawnSync } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

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
