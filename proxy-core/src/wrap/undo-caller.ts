/**
 * A declared inverse, called for an undo a person asked for: the broker asks the wrapper of the call's server
 * (`wrapper.call-tool`), and the wrapper sends the server a tools/call of its own, with an id in Airlock's
 * reserved namespace (a client can never use one, and the answer never reaches the client).
 *
 * It is not run while E-Stop is on (E-Stop refuses every tool call, Airlock's own too), before the server has
 * answered initialize, or while E-Stop has the server stopped: the broker is told why, and the undo says so.
 */
import { randomBytes } from 'node:crypto';
import { CONTROL_CHARACTERS } from '../classify/classify.js';
import { IpcError } from '../ipc/channel.js';
import { isObject, type JsonRpcResponse } from '../jsonrpc/messages.js';
import { type Clock, systemClock, type Timer } from '../util/clock.js';
import { RESERVED_ID_PREFIX } from './tool-listing.js';

/** Shorter than the broker's own wait for the answer, so the broker hears "no answer" from us, not a timeout. */
const CALL_TIMEOUT_MS = 28_000;

export interface InverseCallerContext {
  toUpstream(message: unknown): void;
  /** Why the server cannot take a call of Airlock's own now (E-Stop, not initialized, stopped), or undefined. */
  unavailable(): string | undefined;
  clock?: Clock;
}

export type ToolCallAnswer = { ok: true; result: unknown } | { ok: false; error: { code: unknown; message: string } };

interface Pending {
  resolve(a: ToolCallAnswer): void;
  reject(err: Error): void;
  timer: Timer;
}

export class InverseCaller {
  private readonly prefix = `${RESERVED_ID_PREFIX}undo-${randomBytes(6).toString('hex')}:`;
  private next = 1;
  private readonly pending = new Map<string, Pending>();
  private readonly clock: Clock;

  constructor(private readonly o: InverseCallerContext) {
    this.clock = o.clock ?? systemClock;
  }

  /** Is this the id of one of our calls? */
  takes(id: unknown): boolean {
    return typeof id === 'string' && id.startsWith(this.prefix);
  }

  /** The server answered one of our calls. */
  takeResponse(m: JsonRpcResponse): void {
    const id = m.id as string;
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    this.clock.clearTimeout(p.timer);
    if (m.error !== undefined) {
      const e: Record<string, unknown> = isObject(m.error) ? m.error : {};
      p.resolve({ ok: false, error: { code: e.code, message: typeof e.message === 'string' ? e.message.slice(0, 2000) : 'error' } });
    } else p.resolve({ ok: true, result: m.result });
  }

  /** The broker asks: run `tool` with `arguments` upstream and answer with its result. Refusals are IpcErrors. */
  call(params: unknown): Promise<ToolCallAnswer> {
    if (!isObject(params) || typeof params.tool !== 'string' || params.tool === '' || params.tool.length > 1024 || CONTROL_CHARACTERS.test(params.tool)) {
      return Promise.reject(new IpcError('bad-request', 'a tool call needs a tool name'));
    }
    const args = params.arguments ?? {};
    if (!isObject(args)) return Promise.reject(new IpcError('bad-request', "a tool call's arguments must be an object"));
    const why = this.o.unavailable();
    if (why !== undefined) return Promise.reject(new IpcError('refused', why));
    const id = `${this.prefix}${this.next++}`;
    const tool = params.tool;
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        if (!this.pending.delete(id)) return;
        this.o.toUpstream({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'Airlock stopped waiting for it' } });
        reject(new IpcError('timeout', `${tool} did not answer within ${CALL_TIMEOUT_MS / 1000} s`));
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.o.toUpstream({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args } });
    });
  }

  /** The server is gone: calls it never answered end now (whether they ran is unknown). */
  abandon(why: string): void {
    for (const [id, p] of this.pending) {
      this.clock.clearTimeout(p.timer);
      p.reject(new IpcError('upstream-gone', why));
      this.pending.delete(id);
    }
  }
}
