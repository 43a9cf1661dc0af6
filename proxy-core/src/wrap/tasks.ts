/**
 * Tool calls that run as MCP tasks (2025-11-25): a tools/call with `params.task` is answered at once with a
 * task handle (`{ task: { taskId, status } }`) while the server works on. For Airlock such a call is still
 * running until the task reaches a terminal status (completed, failed, cancelled): its journal entry stays
 * pending, E-Stop stops it (`tasks/cancel`, then the server is terminated after the grace if the task has not
 * ended), and its real outcome is journaled once it is known.
 *
 * What is known of a task comes from what passes through (the server's notifications/tasks/status, its answers
 * to the client's tasks/get, tasks/cancel and tasks/result) and, when nothing was heard for a poll interval,
 * from a tasks/get the wrapper sends itself under a reserved id (never tasks/result while the task runs: the
 * SDK delivers a task's queued requests to the client through it). Once a task has completed or failed, one
 * tasks/result of the wrapper's own reads the payload the outcome depends on (isError, or an error).
 */
import { randomBytes } from 'node:crypto';
import { idKey, isObject, type Message } from '../jsonrpc/messages.js';
import type { Outcome } from '../protocol/api.js';
import { type Clock, monotonic, type Timer } from '../util/clock.js';
import type { Call } from './call.js';
import { capturedResult } from './capture.js';
import type { InFlight } from './in-flight.js';
import type { Denial } from './denial.js';
import { RESERVED_ID_PREFIX } from './tool-listing.js';

export interface TaskContext {
  clock: Clock;
  /** The ids the server owes an answer to: the wrapper's own tasks/* requests are entered here. */
  inFlight: InFlight;
  log(msg: string): void;
  /** Send the server a message of the wrapper's own. */
  toUpstream(message: unknown): void;
  /** Send the client a message of the wrapper's own. */
  toClient(message: unknown): void;
  /** Send a call's journal entry as it stands. */
  journal(call: Call): void;
  /** A task ended (or was given up on): E-Stop re-checks what it waits for. */
  ended(): void;
  /** A 2026-07-28 connection (the tasks extension): no tasks/result; tasks/get carries the result. */
  modern?(): boolean;
}

/** A task handle as a server answered a tools/call with it. */
export interface TaskHandle {
  taskId: string;
  status: string;
  pollInterval: number | undefined;
  /** As the server gave them (the client is told of the task's end with them). */
  ttl: number | null;
  createdAt: string;
}

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);
const MAX_TASK_ID = 1024;
const DEFAULT_POLL_MS = 1000;
const MIN_POLL_MS = 250;
const MAX_POLL_MS = 5000;
/** An own request the server has not answered in this long is taken as lost (the next poll asks again). */
const OWN_REQUEST_TIMEOUT_MS = 30_000;

interface Tracked {
  taskId: string;
  handle: TaskHandle;
  /** The client was given the handle (a call E-Stop answered first never was). */
  clientKnows: boolean;
  calls: Call[];
  status: string;
  /** Ended by E-Stop (or a front end): told to cancel; its outcome is what the server does next. */
  stopped: boolean;
  pollMs: number;
  heardMono: number;
  /** An own tasks/get (or tasks/result) is out: its id, and when it was sent. */
  asking: { id: string; at: number } | undefined;
  /** Terminal, and its payload is being read. */
  reading: boolean;
}

/** The handle in a tools/call answer, or undefined when the answer is an ordinary result. */
export function taskHandle(result: unknown): TaskHandle | undefined {
  if (!isObject(result)) return undefined;
  // 2025-11-25: `{ task: {...} }`; the 2026-07-28 tasks extension: the task's fields beside `resultType: "task"`
  const task = result.resultType === 'task' ? result : result.task;
  if (!isObject(task)) return undefined;
  const { taskId, status, ttl, createdAt } = task;
  const pollInterval = task.pollInterval ?? task.pollIntervalMs;
  if (typeof taskId !== 'string' || taskId === '') return undefined;
  return {
    // a handle whose id cannot be a task's is still a task: it is tracked (and stopped) under a cut id
    taskId: taskId.slice(0, MAX_TASK_ID),
    status: typeof status === 'string' ? status : 'working',
    pollInterval: typeof pollInterval === 'number' && Number.isFinite(pollInterval) ? pollInterval : undefined,
    ttl: typeof ttl === 'number' && Number.isFinite(ttl) ? ttl : null,
    createdAt: typeof createdAt === 'string' ? createdAt.slice(0, 64) : new Date().toISOString(),
  };
}

export class TaskBook {
  private readonly tasks = new Map<string, Tracked>();
  private readonly prefix = `${RESERVED_ID_PREFIX}task-${randomBytes(6).toString('hex')}:`;
  private counter = 0;
  /** Own requests out: id -> the task and what was asked. */
  private readonly own = new Map<string, { task: Tracked; method: 'tasks/get' | 'tasks/result' | 'tasks/cancel' }>();
  /** The client's requests about a tracked task, sent to the server: id key -> task id and method. */
  private readonly asked = new Map<string, { taskId: string; method: string }>();
  private timer: Timer | undefined;

  constructor(private readonly o: TaskContext) {}

  /** Is this call a task that has not ended (the server still works on it)? */
  running(callId: string): boolean {
    for (const t of this.tasks.values()) if (!TERMINAL.has(t.status) && t.calls.some((c) => c.callId === callId)) return true;
    return false;
  }

  /** Task calls of a read-only class still running (suspects when a resource changes, as running calls are). */
  runningReadOnly(): Call[] {
    const out: Call[] = [];
    for (const t of this.tasks.values()) if (!TERMINAL.has(t.status)) out.push(...t.calls.filter((c) => c.readOnly));
    return out;
  }

  /** The server answered a forwarded call with a task handle: the call runs on as that task. */
  created(call: Call, handle: TaskHandle): void {
    let t = this.tasks.get(handle.taskId);
    if (t) {
      // the same id for a second call: both share its fate
      t.calls.push(call);
    } else {
      const poll = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, handle.pollInterval ?? DEFAULT_POLL_MS));
      t = { taskId: handle.taskId, handle, clientKnows: false, calls: [call], status: 'working', stopped: false, pollMs: poll, heardMono: monotonic(this.o.clock), asking: undefined, reading: false };
      this.tasks.set(handle.taskId, t);
    }
    // the handle is not the call's result: the journal keeps the payload the task ends with (a result, once
    // journaled, is never replaced)
    call.result = undefined;
    // an undo's inverse is Airlock's own call: its client never saw the handle
    if (!call.answered && !call.internal) t.clientKnows = true;
    call.detail += `; runs as task ${JSON.stringify(handle.taskId.slice(0, 200))} (its outcome is journaled when the task ends)`;
    this.o.journal(call);
    // stopped while the server was still to answer: the task it made is stopped too
    if (call.answered) this.stop(t, 'it was ended before the server answered with a task');
    this.status(t, handle.status);
    this.arm();
  }

  /** E-Stop: every task still running is told to cancel. Returns the ids of the calls they belong to. */
  stopAll(denial: Denial): string[] {
    const ids: string[] = [];
    for (const t of this.tasks.values()) {
      if (TERMINAL.has(t.status)) continue;
      this.stop(t, `${denial.decidedBy}: ${denial.reason}`);
      for (const c of t.calls) ids.push(c.callId);
    }
    return ids;
  }

  /** The client asked the server about a task (tasks/get, tasks/result, tasks/cancel): its answer is heard too. */
  clientAsked(key: string, method: string, params: unknown): void {
    if (method === 'tasks/update') return this.updated(params);
    if (method !== 'tasks/get' && method !== 'tasks/result' && method !== 'tasks/cancel') return;
    const taskId = isObject(params) ? params.taskId : undefined;
    if (typeof taskId === 'string' && this.tasks.has(taskId)) this.asked.set(key, { taskId, method });
  }

  /** The client's request under this key will not be answered (cancelled, or the server is going away). */
  forget(key: string): void {
    this.asked.delete(key);
  }

  /** The server answered one of the client's requests (any: only those about a tracked task matter). */
  serverAnswered(key: string, m: Message, raw: Buffer): void {
    const asked = this.asked.get(key);
    if (!asked) return;
    this.asked.delete(key);
    const t = this.tasks.get(asked.taskId);
    if (!t) return;
    if (asked.method === 'tasks/result') return this.payload(t, m, raw);
    if (this.carriesEnd(t, m, raw)) return;
    if (isObject(m.result)) this.status(t, m.result.status, m.result.statusMessage);
  }

  /** The client gave a task input (tasks/update, 2026-07-28): the calls it belongs to journal what was answered. */
  private updated(params: unknown): void {
    const t = isObject(params) && typeof params.taskId === 'string' ? this.tasks.get(params.taskId) : undefined;
    if (!t || !isObject(params)) return;
    const keys = isObject(params.inputResponses) ? Object.keys(params.inputResponses).slice(0, 50).map((k) => JSON.stringify(k.slice(0, 100))) : [];
    for (const c of t.calls) {
      c.detail += `; the client gave the task input (tasks/update${keys.length > 0 ? `: ${keys.join(', ')}` : ''})`;
      this.o.journal(c);
    }
  }

  /**
   * A tasks/get answer of the 2026 extension that ends the task carries its result (or error) itself: that is the
   * payload. One that asks for input says what, for the journal. True when the task ended here.
   */
  private carriesEnd(t: Tracked, m: Message, raw: Buffer): boolean {
    const r = m.result;
    if (this.o.modern?.() !== true || !isObject(r) || typeof r.status !== 'string') return false;
    if (r.status === 'input_required' && isObject(r.inputRequests) && t.status !== 'input_required') {
      const keys = Object.keys(r.inputRequests).slice(0, 50).map((k) => JSON.stringify(k.slice(0, 100)));
      for (const c of t.calls) {
        c.detail += `; the task asked for input (${keys.join(', ')})`;
        this.o.journal(c);
      }
    }
    if (r.status !== 'completed' && r.status !== 'failed') return false;
    // (a terminal status heard before, from a notification, left the result to be read here)
    if (TERMINAL.has(t.status) && !t.reading) return false;
    if (!TERMINAL.has(t.status)) {
      t.status = r.status;
      const note = typeof r.statusMessage === 'string' && r.statusMessage !== '' ? `: ${r.statusMessage.slice(0, 200)}` : '';
      for (const c of t.calls) c.detail += `; the task ended ${r.status}${note}`;
    }
    this.payload(t, { jsonrpc: '2.0', id: m.id, ...(r.error !== undefined ? { error: r.error } : { result: r.result }) } as Message, raw);
    return true;
  }

  /** notifications/tasks/status from the server. */
  statusNotified(params: unknown): void {
    if (!isObject(params) || typeof params.taskId !== 'string') return;
    const t = this.tasks.get(params.taskId);
    if (t) this.status(t, params.status, params.statusMessage);
  }

  /** The server answered one of the wrapper's own task requests (routed here through the in-flight table). */
  private takeResponse(m: Message, raw: Buffer): void {
    const own = this.own.get(String(m.id));
    if (!own) return;
    this.own.delete(String(m.id));
    const t = own.task;
    if (t.asking?.id === m.id) t.asking = undefined;
    if (this.tasks.get(t.taskId) !== t) return;
    if (own.method === 'tasks/result') return this.payload(t, m, raw);
    if (this.carriesEnd(t, m, raw)) return;
    if (isObject(m.result)) return this.status(t, m.result.status, m.result.statusMessage);
    // a server that cannot say how its task stands: it is still running, as far as anyone knows
    if (own.method === 'tasks/get') t.heardMono = monotonic(this.o.clock) + 4 * t.pollMs;
    // a cancellation refused may be a task that just ended: ask how it stands (else the grace decides)
    else if (!t.asking && !TERMINAL.has(t.status)) this.ask(t, 'tasks/get');
  }

  /**
   * The server is gone (terminated by E-Stop, or it ended): a task that had not ended never will. A stopped one
   * is journaled cancelled, any other as unknown.
   */
  upstreamExited(description: string): void {
    for (const t of this.tasks.values()) {
      if (TERMINAL.has(t.status)) continue;
      t.status = 'cancelled';
      for (const c of t.calls) {
        c.detail += `; the MCP server ${description} before the task ended`;
        this.finishCall(c, t.stopped ? 'cancelled' : 'unknown');
      }
      // the server that would have told the client is gone: the client hears it here, not by waiting on
      if (t.clientKnows) {
        const { taskId, ttl, createdAt } = t.handle;
        const statusMessage = `the MCP server ${description} before the task ended; whether it finished its work is unknown`;
        this.o.toClient({
          jsonrpc: '2.0',
          method: 'notifications/tasks/status',
          params: { taskId, status: 'cancelled', ttl, createdAt, lastUpdatedAt: new Date(this.o.clock.now()).toISOString(), statusMessage },
        });
      }
    }
    this.tasks.clear();
    for (const id of this.own.keys()) this.o.inFlight.forget(idKey(id));
    this.own.clear();
    this.asked.clear();
    this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  // ---- plumbing ------------------------------------------------------------------------------------------

  private stop(t: Tracked, why: string): void {
    if (t.stopped) return;
    t.stopped = true;
    for (const c of t.calls) if (!c.detail.includes('ended while running')) c.detail += `; ended while running (${why})`;
    this.ask(t, 'tasks/cancel');
  }

  /** What the server said of a task's status. */
  private status(t: Tracked, status: unknown, message?: unknown): void {
    // (a status that is not one says nothing: it is no news of the task)
    if (typeof status !== 'string' || TERMINAL.has(t.status)) return;
    t.heardMono = monotonic(this.o.clock);
    t.status = status;
    if (!TERMINAL.has(status)) return;
    const note = typeof message === 'string' && message !== '' ? `: ${message.slice(0, 200)}` : '';
    for (const c of t.calls) c.detail += `; the task ended ${status}${note}`;
    if (status === 'cancelled') return this.finish(t, 'cancelled');
    // completed or failed: the payload says whether the tool reported an error (2026: tasks/get carries it)
    t.reading = true;
    this.ask(t, this.o.modern?.() === true ? 'tasks/get' : 'tasks/result');
  }

  /** The payload of a terminal task (tasks/result's answer): its real outcome. */
  private payload(t: Tracked, m: Message, raw: Buffer): void {
    if (this.tasks.get(t.taskId) !== t) return;
    let outcome: Outcome = 'ok';
    if (m.error !== undefined) outcome = t.status === 'cancelled' ? 'cancelled' : 'rpc-error';
    else if (isObject(m.result) && m.result.isError === true) outcome = 'tool-error';
    else if (t.status === 'failed') outcome = 'tool-error';
    for (const c of t.calls) {
      try {
        c.result = capturedResult(m, raw);
      } catch (err) {
        this.o.log(`airlock: could not keep the result of task ${t.taskId.slice(0, 200)} for the journal: ${(err as Error).message}`);
      }
    }
    // a result the client read before a terminal status was heard still ends the task
    if (!TERMINAL.has(t.status)) t.status = outcome === 'ok' ? 'completed' : 'failed';
    this.finish(t, outcome);
  }

  private finish(t: Tracked, outcome: Outcome): void {
    this.tasks.delete(t.taskId);
    for (const [id, o] of this.own) if (o.task === t) this.forgetOwn(id);
    for (const c of t.calls) this.finishCall(c, outcome);
    this.o.ended();
  }

  private finishCall(c: Call, outcome: Outcome): void {
    // a call E-Stop answered before the server made it a task has its outcome already
    if (c.outcome === 'pending') c.outcome = outcome;
    c.markFinished(this.o.clock.now(), monotonic(this.o.clock));
    this.o.journal(c);
  }

  private ask(t: Tracked, method: 'tasks/get' | 'tasks/result' | 'tasks/cancel'): void {
    const id = `${this.prefix}${++this.counter}`;
    this.own.set(id, { task: t, method });
    this.o.inFlight.expect(idKey(id), { method, answered: (m, raw) => this.takeResponse(m, raw) });
    if (method !== 'tasks/cancel') t.asking = { id, at: monotonic(this.o.clock) };
    this.o.toUpstream({ jsonrpc: '2.0', id, method, params: { taskId: t.taskId } });
  }

  private forgetOwn(id: string): void {
    this.own.delete(id);
    this.o.inFlight.forget(idKey(id));
  }

  /** Poll the tasks nobody has heard of for a while; the timer runs only while a task does. */
  private arm(): void {
    if (this.timer || this.tasks.size === 0) return;
    let next = MAX_POLL_MS;
    for (const t of this.tasks.values()) next = Math.min(next, t.pollMs);
    this.timer = this.o.clock.setTimeout(() => this.poll(), next);
  }

  private poll(): void {
    this.timer = undefined;
    const now = monotonic(this.o.clock);
    for (const t of this.tasks.values()) {
      if (t.asking && now - t.asking.at > OWN_REQUEST_TIMEOUT_MS) {
        this.forgetOwn(t.asking.id);
        t.asking = undefined;
        // the payload of a terminal task was not given: what its status said is what is known
        if (t.reading) {
          for (const c of t.calls) c.detail += '; its result could not be read';
          this.finish(t, t.status === 'failed' ? 'tool-error' : 'ok');
          continue;
        }
      }
      if (TERMINAL.has(t.status) || t.asking || now - t.heardMono < t.pollMs) continue;
      this.ask(t, 'tasks/get');
    }
    this.arm();
  }
}
