/**
 * One connection to the server under inspection: the SDK client over a ServerProcess, with every request
 * bounded by a timeout and answered raw (results are judged by the caller, not refused by SDK schemas), and a
 * log of what the server sent unasked (notifications, requests to the client) with what was running then.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { printable } from './poisoning.js';
import { ServerProcess, type ServerCommand } from './server-process.js';
import { isObject } from './json.js';

// Results are taken as they come so that a malformed catalog or result is a finding, not an exception.
const AnyResult = z.unknown();
const MAX_EVENTS = 1000;

export interface ServerInfo {
  name: string;
  version: string;
  protocolVersion: string;
  instructions?: string;
  capabilities: Record<string, unknown>;
}

export interface ServerEvent {
  kind: 'notification' | 'request';
  method: string;
  /** What Airlock was doing when it arrived (`tool:NAME`, `reading resource URI`, ...), if anything. */
  during: string | undefined;
  /** The last activity that had finished when it arrived. */
  after: string | undefined;
  /** Which pass was under way: `start-up`, `listing`, `probe` or `final listing`. */
  phase: string;
}

export type RpcOutcome =
  | { ok: true; result: unknown; ms: number }
  | { ok: false; code: number | undefined; message: string; timedOut: boolean; closed: boolean; ms: number };


function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');
  return lines[lines.length - 1] ?? '';
}

export class ServerConnection {
  /** Label of the current activity, attached to events that arrive meanwhile. */
  during: string | undefined;
  /** Label of the last finished activity (a notification sent just after a response belongs to it). */
  after: string | undefined;
  /** The pass under way, attached to events. */
  phase = 'start-up';
  readonly events: ServerEvent[] = [];

  private constructor(
    private readonly client: Client,
    private readonly process: ServerProcess,
    readonly server: ServerInfo,
    readonly timeoutMs: number,
  ) {}

  /**
   * Start the server and initialize; throws an Error whose message is one line fit for the terminal, or the
   * signal's reason when it aborts first (the server is then stopped at once).
   */
  static async open(spec: ServerCommand, timeoutMs: number, version: string, signal?: AbortSignal): Promise<ServerConnection> {
    const proc = new ServerProcess(spec);
    let initializeResult: Record<string, unknown> | undefined;
    proc.onInbound = (message) => {
      if (initializeResult === undefined && isObject(message.result) && 'protocolVersion' in message.result) {
        initializeResult = message.result;
      }
    };
    // No client capabilities: a server that asks for sampling, elicitation or roots mid-probe gets a refusal.
    const client = new Client({ name: 'airlock-inspect', version }, { capabilities: {} });
    const early: ServerEvent[] = [];
    let connection: ServerConnection | undefined;
    const record = (kind: ServerEvent['kind'], method: string): void => {
      const events = connection?.events ?? early;
      // A server that floods notifications must not grow memory without bound; the first ones tell the story.
      if (events.length >= MAX_EVENTS) return;
      events.push({ kind, method, during: connection?.during, after: connection?.after, phase: connection?.phase ?? 'start-up' });
    };
    client.fallbackNotificationHandler = async (n) => record('notification', n.method);
    client.fallbackRequestHandler = async (request) => {
      record('request', request.method);
      throw new McpError(ErrorCode.MethodNotFound, `${request.method} is not offered by airlock inspect`);
    };
    client.onerror = () => {
      // Transport noise (unparseable lines, unknown message shapes) is counted by ServerProcess.
    };

    try {
      await client.connect(proc, { timeout: timeoutMs, ...(signal ? { signal } : {}) });
    } catch (err) {
      // Judged before the server is stopped: a server that leaves once its stdin closes did not exit by itself.
      const failure = ServerConnection.startFailure(spec, proc, err, timeoutMs);
      await proc.close(signal?.aborted === true);
      if (signal?.aborted) throw signal.reason;
      // The message quotes the server (its stderr, its error text): make it one safe terminal line.
      throw new Error(printable(failure, 600));
    }
    const info = initializeResult ?? {};
    const serverInfo = isObject(info.serverInfo) ? info.serverInfo : {};
    connection = new ServerConnection(
      client,
      proc,
      {
        name: typeof serverInfo.name === 'string' ? serverInfo.name : '',
        version: typeof serverInfo.version === 'string' ? serverInfo.version : '',
        protocolVersion: typeof info.protocolVersion === 'string' ? info.protocolVersion : '',
        ...(typeof info.instructions === 'string' ? { instructions: info.instructions } : {}),
        capabilities: isObject(info.capabilities) ? info.capabilities : {},
      },
      timeoutMs,
    );
    connection.events.push(...early);
    return connection;
  }

  private static startFailure(spec: ServerCommand, proc: ServerProcess, err: unknown, timeoutMs: number): string {
    const message = err instanceof Error ? err.message : String(err);
    const stderr = lastLine(proc.stderr);
    const garbage = proc.garbage.count > 0 ? `; it wrote ${proc.garbage.count} line(s) to stdout that are not JSON-RPC` : '';
    const tail = `${garbage}${stderr !== '' ? `; its stderr ends with: ${stderr.slice(0, 300)}` : ''}`;
    if (/ENOENT/.test(message)) return `cannot start server "${spec.command}": command not found`;
    if (/EACCES/.test(message)) return `cannot start server "${spec.command}": permission denied`;
    if (proc.hasExited) return `server exited (${proc.exitDescription || 'during start-up'}) before initialize completed${tail}`;
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
      return `server did not answer initialize within ${Math.round(timeoutMs / 1000)} s${tail}`;
    }
    return `initialize failed: ${message}${tail}`;
  }

  /** Whether the server process is gone. */
  get serverExited(): boolean {
    return this.process.hasExited;
  }

  /** How the server exited, for messages. */
  get exitDescription(): string {
    return this.process.exitDescription;
  }

  /** Non-JSON-RPC output seen on the server's stdout. */
  get garbage(): { count: number; samples: string[] } {
    return this.process.garbage;
  }

  /** Send one request and wait at most the timeout; never throws. */
  async request(method: string, params: Record<string, unknown> | undefined, timeoutMs = this.timeoutMs): Promise<RpcOutcome> {
    const started = performance.now();
    if (this.process.hasExited) {
      return { ok: false, code: ErrorCode.ConnectionClosed, message: 'server has exited', timedOut: false, closed: true, ms: 0 };
    }
    try {
      const request = params === undefined ? { method } : { method, params };
      const result = await this.client.request(request, AnyResult, { timeout: timeoutMs, maxTotalTimeout: timeoutMs });
      return { ok: true, result, ms: performance.now() - started };
    } catch (err) {
      const ms = performance.now() - started;
      const code = err instanceof McpError ? err.code : undefined;
      const message = err instanceof Error ? err.message : String(err);
      return {
        ok: false,
        code,
        message,
        timedOut: code === ErrorCode.RequestTimeout,
        closed: code === ErrorCode.ConnectionClosed || this.process.hasExited,
        ms,
      };
    }
  }

  /** Close the connection and end the server's process tree; `now` skips most of the grace periods. */
  async close(now = false): Promise<void> {
    try {
      await this.client.close();
    } catch {
      // Closing is best effort; the process is ended below regardless.
    }
    await this.process.close(now);
  }
}
