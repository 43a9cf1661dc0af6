/**
 * A client that writes raw lines to `airlock wrap`, for what no well-behaved client library would send: odd
 * ids, duplicate keys, control characters, broken JSON. It reads the wrapper's stdout line by line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { CLI, onCleanup, waitFor } from './airlock.js';

export interface RawWrapped {
  proc: ChildProcess;
  /** Every line the wrapper wrote to the client, parsed (non-JSON lines as { raw }). */
  received: Record<string, unknown>[];
  /** The same, as the raw lines the wrapper wrote. */
  lines: string[];
  stderr: () => string;
  send(line: string): void;
  /** Wait for a message the predicate accepts and return it. */
  next(match: (m: Record<string, unknown>) => boolean, timeoutMs?: number, what?: string): Promise<Record<string, unknown>>;
  /** initialize + initialized, as a client would start. */
  handshake(): Promise<void>;
  close(): Promise<void>;
}

export function startRaw(home: string, wrapArgs: string[], command: string, args: string[], env: NodeJS.ProcessEnv = {}): RawWrapped {
  const proc = spawn(process.execPath, [CLI, 'wrap', ...wrapArgs, '--', command, ...args], {
    env: { ...process.env, AIRLOCK_HOME: home, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const received: Record<string, unknown>[] = [];
  const lines: string[] = [];
  let err = '';
  let buffered = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  proc.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString('utf8');
    let nl;
    while ((nl = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      try {
        received.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        received.push({ raw: line });
      }
    }
  });
  const seen = new Set<Record<string, unknown>>();
  const raw: RawWrapped = {
    proc,
    received,
    lines,
    stderr: () => err,
    send: (line) => {
      proc.stdin!.write(line.endsWith('\n') ? line : line + '\n');
    },
    async next(match, timeoutMs = 8000, what = 'a matching message') {
      let found: Record<string, unknown> | undefined;
      await waitFor(
        () => {
          found = received.find((m) => !seen.has(m) && match(m));
          return found !== undefined;
        },
        timeoutMs,
        `${what} (stderr: ${err.slice(-500)})`,
      );
      seen.add(found!);
      return found!;
    },
    async handshake() {
      raw.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }));
      await raw.next((m) => m.id === 0, 8000, 'the initialize answer');
      raw.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.stdin!.end();
      }),
  };
  onCleanup(() => raw.close());
  return raw;
}
