/**
 * A declared inverse, called for an undo a person asked for: the broker asks the wrapper of the call's server
 * (`wrapper.call-tool`), and the wrapper runs it as a tools/call of its own, through the same pipeline as a
 * client's call (internal-call.ts): classification, rules, pins, E-Stop, a ticket when it asks (the broker
 * marks it as an undo), the pre-forward stages, the journal (under the undo's id). Its id is in Airlock's
 * reserved namespace (a client can never use one), and its answer never reaches the client.
 *
 * The broker says how long it waits (a ticket's timeout and the server's time): past that the call is ended
 * here first, so the broker hears how it ended rather than a timeout of its own.
 */
import { randomBytes } from 'node:crypto';
import { CONTROL_CHARACTERS } from '../classify/classify.js';
import { IpcError } from '../ipc/channel.js';
import { isObject } from '../jsonrpc/messages.js';
import { type Clock, systemClock } from '../util/clock.js';
import type { InternalEnd } from './internal-call.js';
import type { CallPipeline } from './pipeline.js';
import { RESERVED_ID_PREFIX } from './tool-listing.js';

/** The undo ids the broker gives (broker/undo/run-context.ts newUndoId). */
const UNDO_ID = /^undo-[0-9a-f]{12}$/;
const DEFAULT_WAIT_MS = 150_000;
const MAX_WAIT_MS = 25 * 60 * 60 * 1000;
const MAX_NOTE = 500;

export interface InverseCallerContext {
  calls: Pick<CallPipeline, 'startInternal' | 'end'>;
  clock?: Clock;
}

/** How the inverse ended, as the broker hears it. */
export type ToolCallAnswer =
  | { ok: true; result: unknown }
  /** The server answered with a JSON-RPC error. */
  | { ok: false; error: { code: unknown; message: string } }
  /** Denied before it was sent (by what, and why): the server never saw it. */
  | { ok: false; notRun: { decidedBy: string; reason: string } }
  /** Sent, and ended without an answer: whether it ran is unknown. */
  | { ok: false; unknown: string };

export class InverseCaller {
  private readonly prefix = `${RESERVED_ID_PREFIX}undo-${randomBytes(6).toString('hex')}:`;
  private next = 1;
  private readonly running = new Set<string>();
  private readonly clock: Clock;

  constructor(private readonly o: InverseCallerContext) {
    this.clock = o.clock ?? systemClock;
  }

  /** The broker asks: run `tool` with `arguments` as the undo `undoId`. Malformed requests are IpcErrors. */
  call(params: unknown): Promise<ToolCallAnswer> {
    if (!isObject(params) || typeof params.tool !== 'string' || params.tool === '' || params.tool.length > 1024 || CONTROL_CHARACTERS.test(params.tool)) {
      return Promise.reject(new IpcError('bad-request', 'a tool call needs a tool name'));
    }
    const args = params.arguments ?? {};
    if (!isObject(args)) return Promise.reject(new IpcError('bad-request', "a tool call's arguments must be an object"));
    const undoId = params.undoId;
    if (typeof undoId !== 'string' || !UNDO_ID.test(undoId)) return Promise.reject(new IpcError('bad-request', 'an inverse call needs the id of its undo'));
    if (this.running.has(undoId)) return Promise.reject(new IpcError('bad-request', `undo ${undoId} is already running`));
    const note = typeof params.note === 'string' && params.note !== '' && !CONTROL_CHARACTERS.test(params.note) ? params.note.slice(0, MAX_NOTE) : `an undo (${undoId}) asked for in Airlock`;
    const asked = typeof params.waitMs === 'number' && Number.isFinite(params.waitMs) ? params.waitMs : DEFAULT_WAIT_MS;
    const waitMs = Math.min(Math.max(asked, 1000), MAX_WAIT_MS);
    const id = `${this.prefix}${this.next++}`;
    const tool = params.tool;
    this.running.add(undoId);
    return new Promise<ToolCallAnswer>((resolve) => {
      let done = false;
      const timer = this.clock.setTimeout(() => {
        this.o.calls.end(undoId, { decidedBy: 'timeout', reason: `Airlock stopped waiting for ${tool} after ${Math.round(waitMs / 1000)} s` });
      }, waitMs);
      const end = (e: InternalEnd) => {
        if (done) return;
        done = true;
        this.clock.clearTimeout(timer);
        this.running.delete(undoId);
        resolve(answerOf(e));
      };
      this.o.calls.startInternal({ id, callId: undoId, tool, args: args as Record<string, unknown>, sink: { note, end } });
    });
  }
}

function answerOf(e: InternalEnd): ToolCallAnswer {
  if (e.kind === 'not-run') return { ok: false, notRun: { decidedBy: e.decidedBy, reason: e.reason } };
  if (e.kind === 'unknown') return { ok: false, unknown: e.reason };
  const m = e.message;
  if (m.error !== undefined) {
    const err: Record<string, unknown> = isObject(m.error) ? m.error : {};
    return { ok: false, error: { code: err.code, message: typeof err.message === 'string' ? err.message.slice(0, 2000) : 'error' } };
  }
  return { ok: true, result: m.result };
}
