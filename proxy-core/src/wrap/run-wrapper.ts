/**
 * The running wrapper: stdio both ways through the Relay, with backpressure, and the server's whole process
 * tree shut down when the client goes away. Loads no SQLite, no SDK and no UI code.
 */
import type { Readable, Writable } from 'node:stream';
import { dataDir } from '../ipc/paths.js';
import { LineSplitter } from '../jsonrpc/lines.js';
import { BrokerLink } from './broker-link.js';
import { Relay } from './relay.js';
import { stopUpstream, type UpstreamProcess } from './upstream.js';

/**
 * The largest message relayed. V8 cannot make a string much past 512 MiB, so a longer line could never be
 * parsed anyway; past it, a peer would only be filling our memory.
 */
const MAX_MESSAGE_BYTES = 256 * 2 ** 20;

export interface WrapOptions {
  server: string;
  client: string;
  trustFlag: boolean;
  command: string;
  args: string[];
}

/** Wire stdio, the relay and the broker link around an already spawned server; resolves with its exit code. */
export function runWrapper(o: WrapOptions, child: UpstreamProcess, spawnError?: NodeJS.ErrnoException): Promise<number> {
  const log = (msg: string) => process.stderr.write(msg.endsWith('\n') ? msg : msg + '\n');
  const link = new BrokerLink(dataDir(), { client: o.client, server: o.server, command: [o.command, ...o.args], pid: process.pid, trustFlag: o.trustFlag }, log);
  link.start();

  let clientGone = false;
  const writeClient = writerWithBackpressure(process.stdout, child.stdout);
  const toClient = (data: Buffer | string) => {
    if (!clientGone) writeClient(data);
  };
  const writeUpstream = writerWithBackpressure(child.stdin, process.stdin);
  const toUpstream = (data: Buffer | string) => {
    if (child.stdin.writable) writeUpstream(data);
  };
  // how often a waiting call reports progress (default 5 s); settable so tests need not wait that long
  const progressMs = Number(process.env.AIRLOCK_PROGRESS_MS);
  const relay = new Relay({
    server: o.server,
    client: o.client,
    trustFlag: o.trustFlag,
    link,
    toClient,
    toUpstream,
    log,
    ...(Number.isFinite(progressMs) && progressMs > 0 ? { progressIntervalMs: progressMs } : {}),
  });

  const tooLong = (who: string) => (bytes: number) =>
    log(`airlock: ${who} a message over ${MAX_MESSAGE_BYTES / 2 ** 20} MiB (${bytes} bytes so far); dropped`);
  const fromClient = new LineSplitter((line) => relay.fromClient(line), MAX_MESSAGE_BYTES, tooLong('the client sent'));
  const fromUpstream = new LineSplitter((line) => relay.fromUpstream(line), MAX_MESSAGE_BYTES, tooLong('the server wrote'));
  child.stdin.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') log(`airlock: writing to the server failed: ${err.message}`);
  });
  child.stdout.on('data', (chunk: Buffer) => fromUpstream.push(chunk));

  let stopping: Promise<void> | null = null;
  const stopServer = () => (stopping ??= stopUpstream(child));
  const onClientGone = () => {
    if (clientGone) return;
    clientGone = true;
    fromClient.flush();
    relay.clientClosed();
    void stopServer();
  };
  process.stdin.on('data', (chunk: Buffer) => fromClient.push(chunk));
  process.stdin.on('end', onClientGone);
  process.stdin.on('error', onClientGone);
  process.stdout.on('error', onClientGone);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, onClientGone);

  return new Promise<number>((resolve) => {
    let spawnFailed = false;
    const onError = (err: NodeJS.ErrnoException) => {
      spawnFailed = true;
      log(`airlock: could not start the MCP server "${o.command}": ${err.code === 'ENOENT' ? 'command not found (use an absolute path; clients start servers with a minimal PATH)' : err.message}`);
    };
    if (spawnError) onError(spawnError);
    child.on('error', onError);
    const onClose = (code: number | null, signal: NodeJS.Signals | null) => {
      fromUpstream.flush();
      const description = spawnFailed ? 'could not be started' : signal ? `was killed by ${signal}` : `exited with code ${code}`;
      if (!clientGone) relay.upstreamExited(description);
      void stopServer().then(async () => {
        await link.flush(1000);
        link.close();
        const exitCode = spawnFailed ? 127 : code ?? (signal ? 128 + signalNumber(signal) : 1);
        const done = () => resolve(exitCode);
        if (process.stdout.writableNeedDrain) process.stdout.once('drain', done);
        else done();
      });
    };
    let closed = false;
    const closeOnce = (code: number | null, signal: NodeJS.Signals | null) => {
      if (closed) return;
      closed = true;
      onClose(code, signal);
    };
    child.on('close', closeOnce);
    // a server that never started may have reported its close before we listened
    if (spawnError && child.pid === undefined) setTimeout(() => closeOnce(null, null), 50);
  }).then((code) => {
    // stdin may still be open (the server left first); nothing more can be relayed, so leave now
    process.exit(code);
  });
}

/** A writer that pauses `source` while `target` is full, so a slow reader cannot make us buffer without end. */
function writerWithBackpressure(target: Writable, source: Readable): (data: Buffer | string) => void {
  let blocked = false;
  return (data) => {
    if (target.write(data) || blocked) return;
    blocked = true;
    source.pause();
    target.once('drain', () => {
      blocked = false;
      source.resume();
    });
  };
}

function signalNumber(signal: NodeJS.Signals): number {
  const table: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  return table[signal] ?? 0;
}
