/**
 * Drive Airlock as a user would: the real CLI as child processes, a broker in a throwaway data dir, and the
 * real MCP SDK client talking to servers through `airlock wrap`.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { BrokerEvent, HistoryItem } from '../../proxy-core/src/protocol/api.js';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import type { BrokerEndpoint } from '../../proxy-core/src/ipc/paths.js';
import type { UndoReport } from '../../proxy-core/src/protocol/undo-api.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(ROOT, 'bin', 'airlock.js');
export const FIXTURE_SERVER = join(ROOT, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
export const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const FILESYSTEM = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
export const MEMORY = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');

const cleanups: (() => unknown)[] = [];

/** Register something to undo at the next cleanup(). */
export function onCleanup(fn: () => unknown): void {
  cleanups.push(fn);
}

/** Run everything registered so far (call from afterEach/afterAll). */
export async function cleanup(): Promise<void> {
  while (cleanups.length) await cleanups.pop()!();
}

/** A fresh temp folder (short path: Unix socket paths are limited). */
export function tempDir(prefix = 'al-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // retried: a process that is still stopping may write one last file (a backup) into it
  cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return dir;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function cli(home: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolvePromise) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, AIRLOCK_HOME: home, ...env }, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolvePromise({ code, stdout, stderr });
    });
  });
}

export async function cliJson<T>(home: string, args: string[]): Promise<T> {
  const r = await cli(home, [...args, '--json']);
  if (r.code !== 0) throw new Error(`airlock ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** `airlock undo ARGS --json`: its exit code and its report, whether the undo succeeded or not. */
export async function cliUndo(home: string, args: string[]): Promise<{ code: number; report: UndoReport }> {
  const r = await cli(home, ['undo', ...args, '--json']);
  // no report at all is a failure of its own: say what the CLI said instead
  if (!r.stdout.trim()) throw new Error(`airlock undo ${args.join(' ')} printed no report (exit ${r.code}): ${r.stderr}`);
  return { code: r.code, report: JSON.parse(r.stdout) as UndoReport };
}

export interface Daemon {
  proc: ChildProcess;
  stderr: () => string;
  /** Until the daemon's stderr matches `line` (what it matched), or it exits, or `timeoutMs` passes. */
  untilStderr(line: RegExp, timeoutMs: number, what: string): Promise<RegExpExecArray>;
  stop(): Promise<void>;
}

/**
 * Start `airlock daemon` and wait until it says it listens. Without presence proofs (`--no-presence`) unless
 * `presence` is true: the suites that are not about presence approve as a script would. `prefix`: a command the
 * daemon runs under (setpriv as another user), which execs it: the pid stays the broker's.
 */
export async function startDaemon(home: string, args: string[] = [], env: NodeJS.ProcessEnv = {}, presence = false, prefix: string[] = []): Promise<Daemon> {
  const argv = [...prefix, process.execPath, CLI, 'daemon', ...(presence ? [] : ['--no-presence']), ...args];
  const proc = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, AIRLOCK_HOME: home, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  let closed = false;
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  proc.once('close', () => (closed = true));
  const daemon: Daemon = {
    proc,
    stderr: () => err,
    // woken by each chunk the daemon writes and by its exit: no polling
    untilStderr: (line, timeoutMs, what) =>
      new Promise((resolvePromise, reject) => {
        const look = () => {
          const m = line.exec(err);
          if (m) done(() => resolvePromise(m));
          // gone, and everything it wrote read
          else if (closed) done(() => reject(new Error(`daemon exited before ${what}: ${err}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`timed out waiting for ${what}`))), timeoutMs);
        const done = (settle: () => void) => {
          clearTimeout(timer);
          proc.stderr!.off('data', onData);
          proc.off('close', look);
          settle();
        };
        // after the stream's own listener has appended the chunk
        const onData = () => look();
        proc.stderr!.on('data', onData);
        proc.on('close', look);
        look();
      }),
    stop: () =>
      new Promise<void>((res) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return res();
        proc.once('exit', () => res());
        proc.kill('SIGTERM');
      }),
  };
  cleanups.push(() => daemon.stop());
  await daemon.untilStderr(/broker running/, 10_000, 'the daemon to listen');
  return daemon;
}

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface WrapOptions {
  home: string;
  server?: string;
  client?: string;
  trust?: boolean;
  /** More options of `airlock wrap`, as a config entry would give them (nothing recorded with the broker). */
  flags?: string[];
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** The wrapper's working directory (a server that serves "."). */
  cwd?: string;
}

/** Wait until the broker has this many sessions (wrappers connected and registered). */
export async function waitForSessions(home: string, count: number, timeoutMs = 8000): Promise<void> {
  await untilBroker(home, (e) => e.type === 'session-up', async (c) => ((await c.call('status', {})).sessions.length >= count ? true : undefined), timeoutMs, `${count} session(s)`);
}

/**
 * Wait until `count` calls of `tool` have their end journaled and what undo can do for them is known (newest
 * first): undo's own calls, pending ones and ones still being prepared are not counted; `keep` narrows further.
 */
export async function finishedCalls(
  home: string,
  tool: string,
  { count = 1, keep = () => true, timeoutMs = 8000 }: { count?: number; keep?: (x: HistoryItem) => boolean; timeoutMs?: number } = {},
): Promise<HistoryItem[]> {
  return untilBroker(
    home,
    (e) => e.type === 'call' || e.type === 'undo-known',
    async (c) => {
      const calls = (await c.call('history', { tool, limit: 100 })).calls.filter(
        (x) => x.client !== 'airlock-undo' && x.finishedAt !== undefined && x.outcome !== 'pending' && x.undo?.state !== 'prepared' && keep(x),
      );
      return calls.length >= count ? calls : undefined;
    },
    timeoutMs,
    `${count} finished call(s) of ${tool}`,
  );
}

/**
 * Wait on the broker's own readiness signal rather than by polling the CLI: subscribe to its event stream,
 * look once, and look again only when an event that can change the answer arrives.
 */
/** A data dir, or a broker found otherwise (the system broker's endpoint). */
export type BrokerTarget = string | { dir: string; endpoint: BrokerEndpoint };

export async function untilBroker<T>(
  home: BrokerTarget,
  relevant: (e: BrokerEvent) => boolean,
  check: (client: BrokerClient) => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const client = await BrokerClient.connect({ ...(typeof home === 'string' ? { dir: home } : home), role: 'cli' });
  try {
    return await new Promise<T>((resolve, reject) => {
      let done = false;
      let checking = Promise.resolve();
      const timer = setTimeout(() => finish(new Error(`timed out waiting for ${what}`)), timeoutMs);
      const finish = (err: Error | null, value?: T) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value as T);
      };
      const look = () => {
        checking = checking.then(async () => {
          if (done) return;
          const value = await check(client);
          if (value !== undefined) finish(null, value);
        }).catch((err: Error) => finish(err));
      };
      void client
        .call('events', { limit: 1 })
        .then(({ events }) => client.follow(events[0]?.seq ?? 0, { event: (e) => relevant(e) && look(), end: (reason) => finish(new Error(`the broker's event stream ended (${reason}) while waiting for ${what}`)) }))
        // from the newest event on: what happened before it is what the first look sees
        .then(() => look(), (err: Error) => finish(err));
    });
  } finally {
    client.close();
  }
}

export function wrapArgs(o: WrapOptions): string[] {
  return [
    CLI,
    'wrap',
    '--name',
    o.server ?? 'fixture',
    '--client',
    o.client ?? 'test-client',
    ...(o.trust ? ['--trust-read-only-hints'] : []),
    ...(o.flags ?? []),
    '--',
    o.command,
    ...o.args,
  ];
}

export interface Wrapped {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  close(): Promise<void>;
}

/** Connect the real SDK client to a server through `airlock wrap`. */
export async function connectWrapped(o: WrapOptions, capabilities: Record<string, unknown> = {}): Promise<Wrapped> {
  // the flag asks for trust; the person's `airlock trust SERVER on` is what gives it
  if (o.trust) {
    const r = await cli(o.home, ['trust', o.server ?? 'fixture', 'on']);
    // with no broker running (a test of a broker that is down) there is nothing to record the choice with yet
    if (r.code !== 0 && !r.stderr.includes('not running')) throw new Error(`airlock trust failed: ${r.stderr}`);
  }
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: wrapArgs(o),
    env: { ...(process.env as Record<string, string>), AIRLOCK_HOME: o.home, ...(o.env as Record<string, string>) },
    stderr: 'pipe',
    ...(o.cwd ? { cwd: o.cwd } : {}),
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'airlock-test', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  const wrapped: Wrapped = { client, transport, stderr: () => err, close: () => client.close() };
  cleanups.push(() => client.close().catch(() => {}));
  return wrapped;
}

/** The fixture server's record of what it executed. */
export function executed(log: string): Record<string, unknown>[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export function executedCalls(log: string, tool?: string): Record<string, unknown>[] {
  return executed(log).filter((e) => typeof e.tool === 'string' && (tool === undefined || e.tool === tool));
}

export function fixture(home: string, args: string[] = []): { command: string; args: string[]; log: string; env: NodeJS.ProcessEnv } {
  const log = join(home, `fixture-${Math.random().toString(36).slice(2)}.log`);
  return { command: process.execPath, args: [FIXTURE_SERVER, ...args], log, env: { FIXTURE_LOG: log } };
}

export interface Ticket {
  id: string;
  client: string;
  server: string;
  tool: string;
  arguments: unknown;
  class: string;
  reasons: string[];
  createdAt: number;
}

export async function waitForTicket(home: BrokerTarget, tool?: string, timeoutMs = 8000): Promise<Ticket> {
  return untilBroker(
    home,
    (e) => e.type === 'ticket-created',
    async (c) => (await c.call('pending', {})).find((t) => tool === undefined || t.tool === tool) as Ticket | undefined,
    timeoutMs,
    `a pending ticket for ${tool ?? 'any tool'}`,
  );
}

export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

export function decisionOf(result: unknown): Record<string, unknown> | undefined {
  return (result as { _meta?: Record<string, Record<string, unknown>> })._meta?.['airlock/decision'];
}

/** Alive and not a zombie (a reaped-late child in a container counts as gone). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}
