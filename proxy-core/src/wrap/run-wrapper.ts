/**
 * The running wrapper: the client's stdio and the upstream both ways through the Relay, with backpressure,
 * and the upstream stopped when the client goes away. E-Stop may terminate the upstream and start it again
 * (wrap/estop.ts): the client's side stays, the upstream behind it is replaced. Loads no SQLite, no SDK and no
 * UI code (the SDK comes in only for a remote upstream, in its own module).
 */
import type { Readable, Writable } from 'node:stream';
import { warmListingPath } from './warm-up.js';
import { type Located, locateBroker } from '../ipc/system.js';
import { LineSplitter } from '../jsonrpc/lines.js';
import { BrokerLink } from './broker-link.js';
import { tuneV8ForWrapper } from './v8-tuning.js';
import { heldArgumentsPage } from './held-arguments.js';
import type { UpstreamControl } from './estop.js';
import { Relay } from './relay.js';
import { guardedLines } from './line-guard.js';
import { frame } from '../jsonrpc/messages.js';
import { requestOf, START_FAILURE_WAIT_MS, startFailureAnswer } from './session-start.js';
import type { Upstream } from './upstream.js';
import type { InverseDecl } from '../policy/undo-spec.js';
import { snapshotStage } from './undo-stage.js';

/**
 * The largest message relayed. V8 cannot make a string much past 512 MiB, so a longer line could never be
 * parsed anyway; past it, a peer would only be filling our memory.
 */
const MAX_MESSAGE_BYTES = 256 * 2 ** 20;
/** Up to this much written in one tick is joined into one Buffer before it is written. */
const JOIN_MAX_BYTES = 64 * 1024;
/** The longest work put off until the client has read what was written waits for it (whenWritten). */
const WRITTEN_WAIT_MS = 2000;

export interface WrapOptions {
  server: string;
  client: string;
  trustFlag: boolean;
  home?: string;
  /** The broker to report to, when the caller has looked it up already (the wrap command, before it spawns). */
  located?: Located;
  /** What the broker shows as this session's upstream: the command and args, or the URL. */
  command: string[];
  /** Declared inverses (`--undo`), reported to the broker when the session opens. */
  undo?: InverseDecl[];
}

/**
 * Wire stdio, the relay and the broker link around an upstream already on its way. Resolves with the exit code
 * once the upstream is gone for good (it ended by itself, or the client left) and what it said has been passed
 * on. The caller must then end the process: stdin may still be open (the server left first), and nothing more
 * can be relayed.
 */
export function runWrapper(o: WrapOptions, first: Upstream): Promise<number> {
  // (the wrap command does this first of all; a wrapper started otherwise, a test's, does it here)
  tuneV8ForWrapper();
  const log = (msg: string) => process.stderr.write(msg.endsWith('\n') ? msg : msg + '\n');
  const session = { client: o.client, server: o.server, command: o.command, pid: process.pid, trustFlag: o.trustFlag, ...(o.undo?.length ? { undo: o.undo } : {}) };
  // an installed service's broker wins over --home (ipc/system.ts); a marker that cannot be believed throws here,
  // before the server is wired: the wrapper refuses to relay rather than report to a broker it cannot trust
  const located = o.located ?? locateBroker(o.home, process.env, log);
  const link = new BrokerLink(located.dir, session, log, located.endpoint);
  // loosening flags count only as the person's recorded choice: say so once when the broker has not got it
  if (o.trustFlag || o.undo?.length) {
    link.once('policy', (p: { trustReadOnlyHints?: boolean }) => {
      if (o.trustFlag && p.trustReadOnlyHints !== true) {
        log(`airlock: --trust-read-only-hints is not applied to "${o.server}": Airlock trusts read-only hints only once you turn it on (\`airlock trust ${o.server} on\`)`);
      }
      if (o.undo?.length) log(`airlock: --undo flags of "${o.server}" count only where they match an inverse you declared (\`airlock inverses\`)`);
    });
  }
  link.start();

  // the upstream now: the first one, or the one E-Stop's restart put in its place
  let upstream = first;
  let upstreamEnded = false;
  let clientGone = false;
  const writeClient = writerWithBackpressure(process.stdout, () => upstream.output);
  const toClient = (data: Buffer | string) => {
    if (!clientGone) writeClient.write(data);
  };
  let writeUpstream = writerWithBackpressure(first.input, () => process.stdin);
  const toUpstream = (data: Buffer | string) => {
    if (!upstreamEnded && upstream.input.writable) writeUpstream.write(data);
  };
  /** What this tick wrote to the server goes before its input is ended. */
  const stopUpstream = (how: 'stop' | 'terminate') => {
    if (upstream.input.writable) writeUpstream.flush();
    return how === 'terminate' && upstream.terminate ? upstream.terminate() : upstream.stop();
  };
  const control: UpstreamControl = {
    terminate: () => void stopUpstream('terminate'),
    respawn: async () => {
      if (!upstream.respawn) return 'it is a remote server (--url), which Airlock does not start';
      // a wrapper on its way out starts nothing: a server it started now would outlive it (its own process group)
      if (clientGone) return 'the client went away';
      const next = await upstream.respawn();
      if (clientGone) {
        void next.stop();
        return 'the client went away';
      }
      attach(next);
      return null;
    },
  };
  // how often a waiting call reports progress (default 5 s), and when a call held without a progressToken is
  // answered "waiting, call again" (default 50 s, 0: never); settable so tests need not wait that long
  const progressMs = Number(process.env.AIRLOCK_PROGRESS_MS);
  const holdText = process.env.AIRLOCK_HOLD_ANSWER_MS;
  const holdMs = holdText === undefined || holdText.trim() === '' ? NaN : Number(holdText);
  const relay = new Relay({
    server: o.server,
    client: o.client,
    link,
    toClient,
    whenClientWritten: (fn) => writeClient.whenWritten(fn),
    toUpstream,
    log,
    upstream: control,
    // a call of a file tool waits until the broker has the prior state of its files (undo)
    stages: [snapshotStage(link)],
    ...(Number.isFinite(progressMs) && progressMs > 0 ? { progressIntervalMs: progressMs } : {}),
    ...(Number.isFinite(holdMs) && holdMs >= 0 ? { holdAnswerMs: holdMs } : {}),
  });
  link.toolCaller = (params) => relay.inverses.call(params);
  link.heldArguments = (params) => heldArgumentsPage((callId) => relay.calls.waitingOn(callId), params);

  const tooLong = (who: string) => (bytes: number) =>
    log(`airlock: ${who} a message over ${MAX_MESSAGE_BYTES / 2 ** 20} MiB (${bytes} bytes so far); dropped`);
  /** The exit code of a server that ended while the wrapper still answers its client (a client leaving then keeps it). */
  let endingWith: number | undefined;
  /** Set once the server ended before any session began: the client's requests are answered with why. */
  let failedStart: ((line: Buffer) => void) | null = null;
  const fromClient = new LineSplitter(guardedLines('the client', log, (line) => (failedStart ? failedStart(line) : relay.fromClient(line))), MAX_MESSAGE_BYTES, tooLong('the client sent'));

  let exit!: (code: number) => void;
  const exited = new Promise<number>((resolve) => (exit = resolve));
  let finishing = false;
  const finish = async (exitCode: number) => {
    if (finishing) return;
    finishing = true;
    await stopUpstream('stop');
    await link.flush(1000);
    link.close();
    writeClient.flush();
    if (process.stdout.writableNeedDrain) await new Promise((r) => process.stdout.once('drain', r));
    exit(exitCode);
  };

  /** Make `next` the upstream: its lines go to the relay (each upstream has its own framing), its end is watched. */
  function attach(next: Upstream): void {
    upstream = next;
    upstreamEnded = false;
    writeUpstream = writerWithBackpressure(next.input, () => process.stdin);
    const fromUpstream = new LineSplitter(
      guardedLines('the server', log, (line) => {
        if (upstream === next) relay.fromUpstream(line);
      }),
      MAX_MESSAGE_BYTES,
      tooLong('the server wrote'),
    );
    next.input.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') log(`airlock: writing to the server failed: ${err.message}`);
    });
    next.output.on('data', (chunk: Buffer) => fromUpstream.push(chunk));
    void next.ended.then(async ({ description, exitCode, started }) => {
      if (upstream !== next) return;
      fromUpstream.flush();
      upstreamEnded = true;
      // stopped by E-Stop: the wrapper stays, to start it again on release (or to tell the client it cannot)
      if (!clientGone && relay.upstreamEnded(description)) return;
      if (!started) log(`airlock: the MCP server "${o.command.join(' ')}" ${description}`);
      if (!clientGone) {
        endingWith = exitCode;
        await answerStartFailure(description);
      }
      if (!clientGone) relay.upstreamExited(description);
      await finish(exitCode);
    });
  }
  attach(first);

  /**
   * The server ended before it answered the client's initialize (it did not start, or exited at once): the
   * client's initialize gets an error naming the command and why, so the client shows it (session-start.ts),
   * rather than a connection that closed with no reason. One not sent yet is waited for, a short while.
   */
  function answerStartFailure(description: string): Promise<void> {
    const pending = relay.unansweredInitialize();
    if (pending === null) return Promise.resolve();
    const answer = (id: string | number) => toClient(frame(startFailureAnswer(id, o.server, o.command, description)));
    for (const id of pending) answer(id);
    if (pending.length) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), START_FAILURE_WAIT_MS);
      const done = () => {
        clearTimeout(timer);
        process.stdin.off('end', done);
        resolve();
      };
      process.stdin.once('end', done);
      // every request gets the failure (a client may probe before its initialize); the initialize ends the wait
      failedStart = (line) => {
        const r = requestOf(line);
        if (r === null) return;
        answer(r.id);
        if (r.method === 'initialize') done();
      };
    });
  }

  const onClientGone = () => {
    if (clientGone) return;
    clientGone = true;
    fromClient.flush();
    relay.clientClosed();
    // a server E-Stop stopped is not running: nothing will end by itself, so the wrapper ends here
    if (upstreamEnded) void finish(endingWith ?? 0);
    else void stopUpstream('stop');
  };
  process.stdin.on('data', (chunk: Buffer) => fromClient.push(chunk));
  process.stdin.on('end', onClientGone);
  process.stdin.on('error', onClientGone);
  process.stdout.on('error', onClientGone);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, onClientGone);
  // while the server starts: what the first listing would otherwise compile on the client's time
  setImmediate(warmListingPath);

  return exited;
}

/**
 * A writer that pauses `source` while `target` is full, so a slow reader cannot make us buffer without end. A
 * target that closes while full (a server E-Stop terminated) lets the source go on.
 *
 * Everything written in one tick leaves in one write, at the end of the tick (never later): a client that
 * pipelines calls, or a server that answers several at once, costs one system call per chunk read rather than
 * one per message, and one Buffer rather than a list for the stream to gather.
 */
function writerWithBackpressure(target: Writable, source: () => Readable): { write(data: Buffer | string): void; flush(): void; whenWritten(fn: () => void): void } {
  let blocked = false;
  let pending: (Buffer | string)[] = [];
  /** What waits for the target to take everything written (`whenWritten`). */
  let afterDrain: (() => void)[] = [];
  const drained = () => {
    const waiting = afterDrain;
    afterDrain = [];
    for (const fn of waiting) fn();
  };
  // one chunk as it is; small ones joined (a copy of a few kilobytes is cheaper than a gathered write), texts as
  // one text (encoded once, in the write, rather than each into a Buffer of its own and then copied again); a big
  // message (a 10 MB result) is never copied: the stream gathers it with the rest in one write
  const write = (chunks: (Buffer | string)[]): boolean => {
    if (chunks.length === 1) return target.write(chunks[0]!);
    let bytes = 0;
    let texts = true;
    for (const c of chunks) {
      bytes += c.length;
      if (typeof c !== 'string') texts = false;
    }
    if (bytes <= JOIN_MAX_BYTES) return target.write(texts ? chunks.join('') : Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))));
    target.cork();
    let ok = true;
    for (const c of chunks) ok = target.write(c);
    target.uncork();
    return ok;
  };
  const flush = () => {
    const chunks = pending;
    pending = [];
    if (chunks.length === 0) return;
    if (write(chunks) || blocked) return;
    blocked = true;
    const paused = source();
    paused.pause();
    const release = () => {
      target.off('drain', release);
      target.off('close', release);
      blocked = false;
      paused.resume();
      drained();
    };
    target.once('drain', release);
    target.once('close', release);
  };
  return {
    write(data) {
      if (pending.length === 0) process.nextTick(flush);
      pending.push(data);
    },
    /** Write what this tick holds now (before the target is ended). */
    flush,
    /**
     * Run `fn` once what was written so far has left (the stream is not full), or after `WRITTEN_WAIT_MS` at
     * most: a reader that stops reading does not hold back what waits.
     */
    whenWritten(fn) {
      if (!blocked && pending.length === 0) return fn();
      let done = false;
      const once = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        fn();
      };
      // past the wait, it goes on, and no longer waits for a drain that may never come
      const timer = setTimeout(() => {
        afterDrain = afterDrain.filter((f) => f !== once);
        once();
      }, WRITTEN_WAIT_MS);
      timer.unref();
      afterDrain.push(once);
    },
  };
}
