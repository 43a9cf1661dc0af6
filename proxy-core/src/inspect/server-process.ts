/**
 * The server under inspection as a child process, as an MCP SDK Transport. Unlike the SDK's stdio transport
 * it runs the server in its own process group so closing it ends the whole tree, it keeps a tail of stderr for
 * error messages, and it counts what the server wrote to stdout that was not JSON-RPC instead of dropping it.
 */
import type { ChildProcess } from 'node:child_process';
import spawn from 'cross-spawn';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineSplitter } from '../jsonrpc/lines.js';
import { signalTree, stopTree, treeSpawn, type StopTimings } from '../util/process-tree.js';
import { withoutAirlockVars } from '../util/server-env.js';

export interface ServerCommand {
  command: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  cwd?: string;
}

// One line of stdout may legitimately be large (a resource, an image); beyond this it is a hostile server.
const MAX_LINE_BYTES = 32 * 1024 * 1024;
const STDERR_TAIL_CHARS = 4096;
const STOP_GENTLY: StopTimings = { stdinGraceMs: 1000, termGraceMs: 1000 };
const STOP_NOW: StopTimings = { stdinGraceMs: 0, termGraceMs: 300 };

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort if the CLI exits (Ctrl-C, an uncaught error) with a server still running.
  process.on('exit', () => {
    for (const child of live) if (child.pid !== undefined) signalTree(child.pid, 'SIGKILL');
  });
}

function kindOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

/**
 * A response the SDK cannot parse (a result that is not an object, a shapeless error) would be dropped and
 * its request left to time out. Turned into an error response instead, the caller hears about it at once.
 */
function normalizeResponse(message: Record<string, unknown>): Record<string, unknown> {
  if (!('id' in message) || 'method' in message) return message;
  const malformed = (why: string) => ({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: `malformed response: ${why}` } });
  if ('result' in message) {
    const result = message.result;
    return typeof result === 'object' && result !== null && !Array.isArray(result) ? message : malformed(`result is ${kindOf(result)}, not an object`);
  }
  if ('error' in message) {
    const error = message.error as Record<string, unknown> | null;
    const wellFormed = typeof error === 'object' && error !== null && typeof error.code === 'number' && typeof error.message === 'string';
    return wellFormed ? message : malformed('error is not {code, message}');
  }
  return malformed('neither result nor error');
}

export class ServerProcess implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Sees every parsed inbound message before the SDK does (the initialize result, raw). */
  onInbound?: (message: Record<string, unknown>) => void;

  private child: ChildProcess | undefined;
  private readonly lines = new LineSplitter(
    (line) => this.onLine(line.toString('utf8')),
    MAX_LINE_BYTES,
    () => this.noteGarbage(`(a line over ${MAX_LINE_BYTES} bytes, discarded)`),
  );
  private stopping: { child: ChildProcess; now: boolean; done: Promise<void> } | undefined;
  private stderrTail = '';
  /** What the sends wait on while the server's stdin is full. */
  private drained: Promise<void> | undefined;
  private exited = false;
  private exitInfo = '';
  /** Lines on stdout that were not JSON-RPC messages (samples kept for the report). */
  readonly garbage: { count: number; samples: string[] } = { count: 0, samples: [] };

  constructor(private readonly spec: ServerCommand) {}

  /** The last few KB the server wrote to stderr. */
  get stderr(): string {
    return this.stderrTail;
  }

  get hasExited(): boolean {
    return this.exited;
  }

  /** How the process ended ("exit code 1", "signal SIGKILL"), empty while it runs. */
  get exitDescription(): string {
    return this.exitInfo;
  }

  start(): Promise<void> {
    installExitHook();
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      // the broker's own variables stay with it; what the config entry gives the server is the entry's to say
      const tree = treeSpawn({ ...withoutAirlockVars(process.env), ...this.spec.env });
      try {
        child = spawn(this.spec.command, [...(this.spec.args ?? [])], {
          cwd: this.spec.cwd,
          stdio: ['pipe', 'pipe', 'pipe'],
          ...tree.options,
        });
        tree.track(child);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      this.child = child;
      live.add(child);
      child.once('error', (err) => {
        live.delete(child);
        // A failed spawn never emits exit.
        if (child.pid === undefined) {
          this.exited = true;
          this.exitInfo = 'not started';
        }
        reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        this.exited = true;
        this.exitInfo = signal !== null ? `signal ${signal}` : `exit code ${code ?? '?'}`;
      });
      child.once('close', () => {
        this.exited = true;
        live.delete(child);
        this.onclose?.();
      });
      child.stdin?.on('error', () => {
        // EPIPE after the server died; the exit is reported through close.
      });
      child.stdout?.on('data', (chunk: Buffer) => this.lines.push(chunk));
      child.stderr?.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      });
    });
  }

  private onLine(line: string): void {
    if (line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.noteGarbage(line);
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || (parsed as Record<string, unknown>).jsonrpc !== '2.0') {
      this.noteGarbage(line);
      return;
    }
    const message = normalizeResponse(parsed as Record<string, unknown>);
    try {
      this.onInbound?.(message);
      this.onmessage?.(message as JSONRPCMessage);
    } catch (err) {
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private noteGarbage(line: string): void {
    this.garbage.count += 1;
    if (this.garbage.samples.length < 3) this.garbage.samples.push(line.slice(0, 200));
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exited || stdin.destroyed) return Promise.reject(new Error('server is not running'));
    if (stdin.write(JSON.stringify(message) + '\n')) return Promise.resolve();
    // A server that stops reading its stdin: every send waits for the same drain, on one listener however many
    // requests are out (a listener each piled up past Node's limit), and a server that exits instead ends the
    // wait too (a drain never comes from a closed pipe).
    return (this.drained ??= new Promise<void>((resolve) => {
      const done = () => {
        stdin.off('drain', done);
        stdin.off('close', done);
        this.drained = undefined;
        resolve();
      };
      stdin.on('drain', done);
      stdin.on('close', done);
    }));
  }

  /**
   * End the server and everything it started: stdin closed, then SIGTERM, then SIGKILL, to the whole group.
   * `now` (an abort) sends SIGTERM at once and SIGKILL soon after, also when a gentle stop is under way (the
   * SDK closes the transport gently by itself when initialize fails). Settles when the tree is gone.
   */
  close(now = false): Promise<void> {
    const child = this.child ?? this.stopping?.child;
    if (!child) return Promise.resolve();
    this.child = undefined;
    if (this.stopping && (this.stopping.now || !now)) return this.stopping.done;
    const done = (async () => {
      if (child.pid !== undefined) await stopTree(child, now ? STOP_NOW : STOP_GENTLY);
      live.delete(child);
      child.stdout?.destroy();
      child.stderr?.destroy();
    })();
    this.stopping = { child, now, done };
    return done;
  }
}
