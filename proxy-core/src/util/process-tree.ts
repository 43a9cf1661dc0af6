/**
 * A child process and everything it starts, handled as one: started as the leader of its own process group
 * (POSIX) so the whole tree can be signalled at once, and stopped in steps: stdin end, then SIGTERM, then
 * SIGKILL, to the whole group (`taskkill /T /F` on Windows, which has no groups), so `npx`/`uvx` grandchildren
 * are not orphaned. Shared by the wrapper's upstream and `airlock inspect`'s server.
 */
import { type ChildProcess, spawnSync } from 'node:child_process';

/** Spawn options that make the child the head of a tree `signalTree` and `stopTree` can reach whole. */
export const TREE_SPAWN_OPTIONS = { detached: process.platform !== 'win32', windowsHide: true } as const;

export interface StopTimings {
  /** After stdin ends, how long the process gets to exit by itself. */
  stdinGraceMs: number;
  /** After SIGTERM, how long before SIGKILL. */
  termGraceMs: number;
}

/** Signal a process and everything it started. Synchronous on Windows, so it also works in an exit hook. */
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
 * Stop a child spawned with TREE_SPAWN_OPTIONS and everything it started. Resolves when the leader has exited
 * and the group is gone (or SIGKILL was sent). Safe to call more than once.
 */
export function stopTree(child: ChildProcess, timings: StopTimings): Promise<void> {
  const pid = child.pid;
  const leaderDone = () => child.exitCode !== null || child.signalCode !== null;
  const exited = leaderDone() ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
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
      if (leaderDone() && !treeAlive(pid)) return true;
      await wait(25);
    }
    return leaderDone() && !treeAlive(pid);
  };
  return (async () => {
    if (await gone(timings.stdinGraceMs)) return;
    signalTree(pid, 'SIGTERM');
    if (await gone(timings.termGraceMs)) return;
    signalTree(pid, 'SIGKILL');
    await Promise.race([exited, wait(1000)]);
  })();
}
