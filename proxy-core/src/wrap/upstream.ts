/**
 * The upstream MCP server as the wrapper sees it: two line-framed byte streams and a way to stop it. Here, the
 * local kind: a child process, stopped with its whole tree (util/process-tree.ts).
 */
import { type ChildProcessByStdio, spawn as nodeSpawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { stopTree, treeSpawn, type StopTimings } from '../util/process-tree.js';
import { becomeSubreaper } from '../util/reaper.js';
import { withoutAirlockVars } from '../util/server-env.js';

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
  /** Stop it now, without the polite wait (E-Stop): a process tree gets SIGTERM at once and SIGKILL soon after. */
  terminate?(): Promise<void>;
  /** Start the same server again, as a new Upstream; absent where that cannot be done (a remote server). */
  respawn?(): Promise<Upstream>;
}

export type UpstreamProcess = ChildProcessByStdio<Writable, Readable, null>;

/** How long the wrapper's server gets after stdin ends, and after SIGTERM. */
export const DEFAULT_TIMINGS: StopTimings = { stdinGraceMs: 1000, termGraceMs: 2000 };
/** E-Stop has already given the server its grace: stdin ends and SIGTERM goes at once, SIGKILL a second later. */
export const TERMINATE_TIMINGS: StopTimings = { stdinGraceMs: 0, termGraceMs: 1000 };

/**
 * Spawn the server at the head of its own process tree (see util/process-tree.ts). On Linux the wrapper is a
 * child subreaper first, where the native reaper is built: whatever the server's processes orphan comes to the
 * wrapper rather than to init, so stopping the server finds it. The wrapper starts no other child processes
 * (the reaper reaps orphans by pid, and counts on every other child being a server).
 */
export async function spawnUpstream(command: string, args: string[]): Promise<UpstreamProcess> {
  becomeSubreaper();
  // the client's environment, less Airlock's own variables: the server gets nothing of Airlock's to use
  const tree = treeSpawn(withoutAirlockVars(process.env));
  let child: UpstreamProcess;
  if (process.platform === 'win32') {
    // cross-spawn resolves .cmd/.bat shims (npx.cmd) that plain spawn cannot start without a shell;
    // loaded only where it is needed, to keep start-up short elsewhere
    const { default: crossSpawn } = await import('cross-spawn');
    child = crossSpawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], ...tree.options }) as unknown as UpstreamProcess;
  } else child = nodeSpawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], ...tree.options });
  tree.track(child);
  return child;
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** What a server reported before its Upstream listened: a start failure, or its end. */
export interface EarlyEvents {
  error?: NodeJS.ErrnoException;
  close?: { code: number | null; signal: NodeJS.Signals | null };
}

/**
 * A spawned server as an Upstream. `early` is what it reported before anyone listened (it is not reported
 * again); `spawnAgain` starts the same command again (what E-Stop's restart uses).
 */
export function stdioUpstream(child: UpstreamProcess, early: EarlyEvents = {}, spawnAgain?: () => Promise<UpstreamProcess>): Upstream {
  let stopping: Promise<void> | null = null;
  const ended = new Promise<UpstreamEnd>((resolve) => {
    let failure = early.error;
    const closed = (code: number | null, signal: NodeJS.Signals | null) => {
      if (failure && child.pid === undefined) {
        const why = failure.code === 'ENOENT' ? 'command not found (use an absolute path; clients start servers with a minimal PATH)' : failure.message;
        return resolve({ description: `could not be started: ${why}`, exitCode: 127, started: false });
      }
      if (signal) resolve({ description: `was killed by ${signal}`, exitCode: 128 + (SIGNAL_NUMBERS[signal] ?? 0), started: true });
      else resolve({ description: `exited with code ${code}`, exitCode: code ?? 1, started: true });
    };
    if (early.close) return closed(early.close.code, early.close.signal);
    child.on('error', (err: NodeJS.ErrnoException) => (failure = err));
    child.on('close', closed);
  });
  return {
    input: child.stdin,
    output: child.stdout,
    ended,
    stop: () => (stopping ??= stopTree(child, DEFAULT_TIMINGS)),
    terminate: () => (stopping ??= stopTree(child, TERMINATE_TIMINGS)),
    ...(spawnAgain ? { respawn: async () => stdioUpstream(await spawnAgain(), {}, spawnAgain) } : {}),
  };
}
