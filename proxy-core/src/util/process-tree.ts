/**
 * A child process and everything it starts, handled as one: started as the leader of its own process group
 * (POSIX) so the whole tree can be signalled at once, and stopped in steps: stdin end, then SIGTERM, then
 * SIGKILL, to the whole group (`taskkill /T /F` on Windows, which has no groups), so `npx`/`uvx` grandchildren
 * are not orphaned. On Linux a child spawned through `treeSpawn` is also watched as a tree beyond its group
 * (util/tree-watch.ts): a worker that called setsid or double-forked is signalled and killed with the rest.
 * Shared by the wrapper's upstream and `airlock inspect`'s server.
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { TreeWatch } from './tree-watch.js';

/** Spawn options that make the child the head of a tree `signalTree` and `stopTree` can reach whole. */
export const TREE_SPAWN_OPTIONS = { detached: process.platform !== 'win32', windowsHide: true } as const;

const watches = new WeakMap<ChildProcess, TreeWatch>();

export interface TreeSpawn {
  /** TREE_SPAWN_OPTIONS, and the environment (on Linux with the tree's marker) to spawn the child with. */
  options: typeof TREE_SPAWN_OPTIONS & { env: NodeJS.ProcessEnv };
  /** The child was spawned with `options`: from now on `stopTree` reaches its whole tree. */
  track(child: ChildProcess): void;
}

/** Spawn options for a child whose whole tree `stopTree` is to end, `env` its environment. */
export function treeSpawn(env: NodeJS.ProcessEnv = process.env): TreeSpawn {
  if (process.platform !== 'linux') return { options: { ...TREE_SPAWN_OPTIONS, env }, track: () => undefined };
  const watch = new TreeWatch();
  return {
    options: { ...TREE_SPAWN_OPTIONS, env: watch.env(env) },
    track: (child) => {
      if (child.pid === undefined) return;
      watch.start(child.pid);
      watches.set(child, watch);
      child.once('exit', () => {
        // the server went by itself: what it left behind stays watched until stopTree ends it
        if (!watch.members(false).length) watch.close();
      });
    },
  };
}

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
  const watch = watches.get(child);
  // ref'd on purpose: a caller awaiting the shutdown must not see Node exit under it
  const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const groupDone = () => leaderDone() && !treeAlive(pid);
  // beyond the group (Linux): a /proc scan, so asked less often than the group is
  const outsiders = () => (watch ? watch.members().length : 0);
  const gone = async (ms: number, untilGroupDone: boolean) => {
    const until = Date.now() + ms;
    let polls = 0;
    while (Date.now() < until) {
      if (groupDone() && (untilGroupDone || (++polls % 4 === 1 && outsiders() === 0))) return true;
      await wait(25);
    }
    return groupDone() && (untilGroupDone || outsiders() === 0);
  };
  const signal = (sig: NodeJS.Signals) => {
    signalTree(pid, sig);
    watch?.signal(sig);
  };
  return (async () => {
    try {
      // stdin's end is for the server; what it left outside its group does not read it, and goes on to SIGTERM
      if ((await gone(timings.stdinGraceMs, true)) && outsiders() === 0) return;
      signal('SIGTERM');
      if (await gone(timings.termGraceMs, false)) return;
      signalTree(pid, 'SIGKILL');
      watch?.kill();
      await Promise.race([exited, wait(1000)]);
    } finally {
      watch?.close();
    }
  })();
}
