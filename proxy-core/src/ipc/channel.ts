/**
 * A line-framed JSON channel over one socket, with requests (answered once), notifications, and the
 * connection's end. Used by the wrapper, the CLI and the broker alike.
 */
import type { Socket } from 'node:net';
import { LineSplitter } from '../jsonrpc/lines.js';
import { isObject } from '../jsonrpc/messages.js';

export type Frame =
  | { t: 'req'; id: number; m: string; p?: unknown }
  | { t: 'res'; id: number; ok: true; r?: unknown }
  | { t: 'res'; id: number; ok: false; e: { code: string; message: string } }
  | { t: 'note'; m: string; p?: unknown };

/** An error from the other side of the channel, with a string code (not a JSON-RPC error). */
export class IpcError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'IpcError';
  }
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; timer?: NodeJS.Timeout };

export interface ChannelHandlers {
  request?: (method: string, params: unknown) => unknown | Promise<unknown>;
  notify?: (method: string, params: unknown) => void;
  close?: (err?: Error) => void;
}

/** A method whose requests `Channel.setRaw` hands over as bytes. */
export interface RawMethod {
  /** `,"m":"<method>","p":`: what follows the id in a request of it. */
  readonly mid: Buffer;
  /**
   * The params' bytes as the handler takes them, or undefined to have them parsed as JSON. A request that came in
   * several chunks is offered as those chunks' parts of it (declined, it is offered again joined).
   */
  take(params: Buffer | readonly Buffer[]): unknown;
}

/** A raw method: its name, and what its params' bytes become. */
export function rawMethod(method: string, take: RawMethod['take']): [string, RawMethod] {
  return [method, { mid: Buffer.from(`,"m":${JSON.stringify(method)},"p":`), take }];
}

const REQ_HEAD = Buffer.from('{"t":"req","id":');

/** Lines above this are refused: nothing Airlock sends between its own processes comes near it. */
export const MAX_FRAME = 256 * 1024 * 1024;

export class Channel {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;
  private handlers: ChannelHandlers = {};
  private readonly splitter: LineSplitter;

  /** The longest line this side accepts now (the broker starts unauthenticated peers far below MAX_FRAME). */
  private maxFrame: number;
  /** Requests whose params are handed over as bytes, by method (see `setRaw`). */
  private raw: ReadonlyMap<string, RawMethod> | null = null;

  constructor(
    readonly socket: Socket,
    options: { maxFrame?: number } = {},
  ) {
    this.maxFrame = options.maxFrame ?? MAX_FRAME;
    // a chunk can hold whole lines over the limit, and lines after a destroy: neither is delivered
    const refused = (length: number) => {
      if (this.closed) return true;
      if (length <= this.maxFrame) return false;
      this.destroy(new IpcError('frame-too-large', 'frame too large'));
      return true;
    };
    this.splitter = new LineSplitter(
      (line) => {
        if (!refused(line.length)) this.onLine(line);
      },
      Number.POSITIVE_INFINITY,
      undefined,
      // A raw request of several chunks reaches its method as those chunks. Joined, a wrapper's journal batch of
      // 200 KB took memory of its own each time, some 50 pages touched for the first time: most of what taking a
      // batch in cost the broker, where a page fault costs microseconds (up to 12 in a virtual machine).
      (parts, length) => refused(length) || (this.raw !== null && this.rawRequest(parts, length, this.raw)),
    );
    socket.on('data', (chunk: Buffer) => {
      if (this.closed) return;
      try {
        this.splitter.push(chunk);
      } catch (err) {
        // what a peer sent can never end the process reading it (a throw here would be uncaught): only its connection
        this.destroy(new IpcError('bad-frame', `could not read what the peer sent: ${(err as Error).message}`));
        return;
      }
      if (this.splitter.pending > this.maxFrame) this.destroy(new IpcError('frame-too-large', 'frame too large'));
    });
    socket.on('error', (err) => this.finish(err));
    socket.on('close', () => this.finish());
  }

  /** Change the longest line accepted from now on (default: back to MAX_FRAME, e.g. once a peer is authenticated). */
  setMaxFrame(bytes = MAX_FRAME): void {
    this.maxFrame = bytes;
  }

  /**
   * Requests of these methods whose line is exactly `{"t":"req","id":<n>,"m":"<method>","p":<params>}` reach the
   * request handler with what the method's `take` makes of the params' bytes, unparsed; a request of any other
   * form (or that `take` declines) is parsed as usual. For a peer whose bulk data needs no reading on arrival.
   */
  setRaw(methods: ReadonlyMap<string, RawMethod>): void {
    this.raw = methods;
  }

  /** Install handlers. Frames that arrived before this call were delivered to the previous handlers. */
  setHandlers(handlers: ChannelHandlers): void {
    this.handlers = handlers;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  request<T = unknown>(method: string, params?: unknown, timeoutMs?: number): Promise<T> {
    return this.requesting<T>(method, timeoutMs, (id) => this.write({ t: 'req', id, m: method, p: params }));
  }

  /**
   * The same request with its params already JSON text: `params` joined is one JSON value. A sender that keeps
   * what it sends as text (the journal's entries) saves serialising it again; the pieces leave in one write.
   */
  requestJson<T = unknown>(method: string, params: readonly (string | Buffer)[], timeoutMs?: number): Promise<T> {
    return this.requesting<T>(method, timeoutMs, (id) => {
      if (this.closed) return;
      const socket = this.socket;
      socket.cork();
      socket.write(`{"t":"req","id":${id},"m":${JSON.stringify(method)},"p":`);
      for (const part of params) if (part.length > 0) socket.write(part);
      socket.write('}\n');
      socket.uncork();
    });
  }

  private requesting<T>(method: string, timeoutMs: number | undefined, send: (id: number) => void): Promise<T> {
    if (this.closed) return Promise.reject(new IpcError('closed', 'connection closed'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { resolve: resolve as (v: unknown) => void, reject };
      if (timeoutMs !== undefined) {
        entry.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new IpcError('timeout', `${method}: no answer within ${timeoutMs} ms`));
        }, timeoutMs);
        entry.timer.unref();
      }
      this.pending.set(id, entry);
      send(id);
    });
  }

  notify(method: string, params?: unknown): void {
    this.write({ t: 'note', m: method, p: params });
  }

  /** Write a frame; false when the channel is closed (the caller decides whether that matters). */
  write(frame: Frame | Record<string, unknown>): boolean {
    if (this.closed) return false;
    let text: string;
    try {
      text = JSON.stringify(frame);
    } catch (err) {
      // A value JSON.stringify cannot write (nested past what it can walk, which a peer's own answer relayed here
      // can be): an answer says so instead, anything else is not sent. Never a throw: an answer is written in a
      // promise's callback, where a throw would end the process.
      if (frame.t !== 'res' || typeof frame.id !== 'number') return false;
      text = JSON.stringify({ t: 'res', id: frame.id, ok: false, e: { code: 'unwritable', message: `the answer could not be written: ${(err as Error).message}` } });
    }
    this.socket.write(text + '\n');
    return true;
  }

  destroy(err?: Error): void {
    this.socket.destroy();
    this.finish(err);
  }

  /** End politely after pending writes. */
  end(): void {
    this.socket.end();
  }

  private onLine(line: Buffer): void {
    if (this.raw !== null && this.rawRequest([line], line.length, this.raw)) return;
    let frame: unknown;
    try {
      frame = JSON.parse(line.toString('utf8'));
    } catch {
      this.destroy(new IpcError('bad-frame', 'peer sent a line that is not JSON'));
      return;
    }
    if (!isObject(frame)) return;
    if (frame.t === 'res' && typeof frame.id === 'number') {
      const p = this.pending.get(frame.id);
      if (!p) return;
      this.pending.delete(frame.id);
      if (p.timer) clearTimeout(p.timer);
      if (frame.ok === true) p.resolve(frame.r);
      else {
        const e = isObject(frame.e) ? frame.e : {};
        p.reject(new IpcError(String(e.code ?? 'error'), String(e.message ?? 'request failed')));
      }
      return;
    }
    if (frame.t === 'req' && typeof frame.id === 'number' && typeof frame.m === 'string') {
      this.answer(frame.id, frame.m, frame.p);
      return;
    }
    if (frame.t === 'note' && typeof frame.m === 'string') {
      try {
        this.handlers.notify?.(frame.m, frame.p);
      } catch {
        // a handler bug must not take the connection down with it
      }
      return;
    }
    // anything else (including handshake frames handled elsewhere) is ignored here
    this.handlers.notify?.('__frame', frame);
  }

  /**
   * A request `setRaw` names, in exactly its form, as the parts it came in (`length` bytes in all): handled, true.
   * Its head is read from its first part and its closing brace from its last; a request split anywhere else is
   * declined here, and taken once joined.
   */
  private rawRequest(parts: readonly Buffer[], length: number, raw: ReadonlyMap<string, RawMethod>): boolean {
    const first = parts[0]!;
    const last = parts[parts.length - 1]!;
    if (length < REQ_HEAD.length + 12 || last[last.length - 1] !== 0x7d /* } */ || first.length < REQ_HEAD.length || first.compare(REQ_HEAD, 0, REQ_HEAD.length, 0, REQ_HEAD.length) !== 0) return false;
    let i = REQ_HEAD.length;
    let id = 0;
    while (i < first.length && i < REQ_HEAD.length + 15 && first[i]! >= 0x30 && first[i]! <= 0x39) id = id * 10 + first[i++]! - 0x30;
    if (i === REQ_HEAD.length) return false;
    for (const [method, m] of raw) {
      const mid = m.mid;
      const start = i + mid.length;
      if (start > first.length || first.compare(mid, 0, mid.length, i, start) !== 0) continue;
      const params = m.take(parts.length === 1 ? first.subarray(start, length - 1) : withoutEnds(parts, start));
      if (params === undefined) return false;
      this.answer(id, method, params);
      return true;
    }
    return false;
  }

  private answer(id: number, method: string, params: unknown): void {
    const handler = this.handlers.request;
    const fail = (err: unknown) => {
      const code = err instanceof IpcError ? err.code : 'error';
      const message = err instanceof Error ? err.message : String(err);
      this.write({ t: 'res', id, ok: false, e: { code, message } });
    };
    if (!handler) return fail(new IpcError('no-handler', `no handler for ${method}`));
    try {
      const out = handler(method, params);
      if (out instanceof Promise) out.then((r) => this.write({ t: 'res', id, ok: true, r }), fail);
      else this.write({ t: 'res', id, ok: true, r: out });
    } catch (err) {
      fail(err);
    }
  }

  private finish(err?: Error): void {
    if (this.closed) return;
    this.closed = true;
    for (const [, p] of this.pending) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new IpcError('closed', err ? `connection lost: ${err.message}` : 'connection closed'));
    }
    this.pending.clear();
    this.handlers.close?.(err);
  }
}

/** `parts` from `start` of the first to the byte before the last one's end (its closing brace), empty parts left out. */
function withoutEnds(parts: readonly Buffer[], start: number): Buffer[] {
  const out: Buffer[] = [];
  const last = parts.length - 1;
  for (let k = 0; k <= last; k++) {
    const part = parts[k]!;
    const piece = part.subarray(k === 0 ? start : 0, k === last ? part.length - 1 : part.length);
    if (piece.length > 0) out.push(piece);
  }
  return out;
}
