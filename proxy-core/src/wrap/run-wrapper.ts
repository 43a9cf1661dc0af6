/**
 * The running wrapper: the client's stdio and the upstream both ways through the Relay, with backpressure,
 * and the upstream stopped when the client goes away. Loads no SQLite, no SDK and no UI code (the SDK comes in
 * only for a remote upstream, in its own module).
 */
import type { Readable, Writable } from 'node:stream';
import { dataDir } from '../ipc/paths.js';
import { LineSplitter } from '../jsonrpc/lines.js';
import { BrokerLink } from './broker-link.js';
import { Relay } from './relay.js';
import type { Upstream } from './upstream.js';

/**
 * The largest message relayed. V8 cannot make a string much past 512 MiB, so a longer line could never be
 * parsed anyway; past it, a peer would only be filling our memory.
 */
const MAX_MESSAGE_BYTES = 256 * 2 ** 20;

export interface WrapOptions {
  server: string;
  client: string;
  trustFlag: boolean;
  home?: string;
  /** What the broker shows as this session's upstream: the command and args, or the URL. */
  command: string[];
}

/**
 * Wire stdio, the relay and the broker link around an upstream already on its way. Resolves with the exit code
 * once the upstream is gone and what it said has been passed on. The caller must then end the process: stdin
 * may still be open (the server left first), and nothing more can be relayed.
 */
export function runWrapper(o: WrapOptions, upstream: Upstream): Promise<number> {
  const log = (msg: string) => process.stderr.write(msg.endsWith('\n') ? msg : msg + '\n');
  const link = new BrokerLink(o.home ?? dataDir(), { client: o.client, server: o.server, command: o.command, pid: process.pid, trustFlag: o.trustFlag }, log);
  link.start();

  let clientGone = false;
  const writeClient = writerWithBackpressure(process.stdout, upstream.output);
  const toClient = (data: Buffer | string) => {
    if (!clientGone) writeClient(data);
  };
  const writeUpstream = writerWithBackpressure(upstream.input, process.stdin);
  const toUpstream = (data: Buffer | string) => {
    if (upstream.input.writable) writeUpstream(data);
  };
  // how often a waiting call reports progress (default 5 s), and when a call held without a progressToken is
  // answered "waiting, call again" (default 50 s, 0: never); settable so tests need not wait that long
  const progressMs = Number(process.env.AIRLOCK_PROGRESS_MS);
  const holdText = process.env.AIRLOCK_HOLD_ANSWER_MS;
  const holdMs = holdText === undefined || holdText.trim() === '' ? NaN : Number(holdText);
  const relay = new Relay({
    server: o.server,
    client: o.client,
    trustFlag: o.trustFlag,
    link,
    toClient,
    toUpstream,
    log,
    ...(Number.isFinite(progressMs) && progressMs > 0 ? { progressIntervalMs: progressMs } : {}),
    ...(Number.isFinite(holdMs) && holdMs >= 0 ? { holdAnswerMs: holdMs } : {}),
  });

  const tooLong = (who: string) => (bytes: number) =>
    log(`airlock: ${who} a message over ${MAX_MESSAGE_BYTES / 2 ** 20} MiB (${bytes} bytes so far); dropped`);
  const fromClient = new LineSplitter((line) => relay.fromClient(line), MAX_MESSAGE_BYTES, tooLong('the client sent'));
  const fromUpstream = new LineSplitter((line) => relay.fromUpstream(line), MAX_MESSAGE_BYTES, tooLong('the server wrote'));
  upstream.input.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') log(`airlock: writing to the server failed: ${err.message}`);
  });
  upstream.output.on('data', (chunk: Buffer) => fromUpstream.push(chunk));

  const stopServer = () => upstream.stop();
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

  return upstream.ended.then(async ({ description, exitCode, started }) => {
    fromUpstream.flush();
    if (!started) log(`airlock: the MCP server "${o.command.join(' ')}" ${description}`);
    if (!clientGone) relay.upstreamExited(description);
    await stopServer();
    await link.flush(1000);
    link.close();
    if (process.stdout.writableNeedDrain) await new Promise((r) => process.stdout.once('drain', r));
    return exitCode;
  });
}

/** A writer that pauses `source` while `target` is full, so a slow reader cannot make us buffer without end. */
function writerWithBackpressure(target: Writable, source: Readable): (data: Buffer | string) => void {
  let blocked = false;
  let corked = false;
  // Everything written in one tick leaves in one write: a client that pipelines calls, or a server that
  // answers several at once, costs one system call per chunk read rather than one per message.
  const uncork = () => {
    corked = false;
    target.uncork();
  };
  return (data) => {
    if (!corked) {
      corked = true;
      target.cork();
      process.nextTick(uncork);
    }
    if (target.write(data) || blocked) return;
    blocked = true;
    source.pause();
    target.once('drain', () => {
      blocked = false;
      source.resume();
    });
  };
}
