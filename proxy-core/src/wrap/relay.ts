import { CONTROL_CHARACTERS } from '../classify/classify.js';
/**
 * The wrapper's routing core: every line from the client or the upstream comes in here, and leaves as the
 * bytes it came in (relayed), as a rewritten message (tools/list), or not at all (a denied call, answered
 * here). Transport-free: the caller wires stdio and the broker link in.
 *
 * The relay only routes. A tools/call's life (classify ▸ policy ▸ ticket ▸ hooks ▸ forward ▸ journal) is the
 * pipeline's (`pipeline.ts`), one `Call` record per call; the relay hands it checked calls, the server's
 * answers to them, and the client's cancellations.
 */
import { withholdDeepTools } from './deep-tools.js';
import {
  checkClientMessage,
  type ClientCheckContext,
  invalidRequestReply,
  MAX_NESTING,
  mayNestDeeper,
  nestedDeeperThan,
  parseErrorReply,
  parseLine,
} from '../jsonrpc/inbound.js';
import {
  errorResponse,
  frame,
  idKey,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  isId,
  isObject,
  isRequest,
  isResponse,
  type JsonRpcId,
  type JsonRpcResponse,
  type Message,
} from '../jsonrpc/messages.js';
import type { PolicySnapshot } from '../policy/decide.js';
import { type Clock, systemClock } from '../util/clock.js';
import { HardStop, type UpstreamControl, type UpstreamState } from './estop.js';
import { CallPipeline, type PipelineTimings } from './pipeline.js';
import { InitCapture } from './restart.js';
import type { CallStage } from './stages.js';
import { TaskBook } from './tasks.js';
import { InverseCaller } from './undo-caller.js';
import { ToolVerdicts, type VerdictsContext } from './verdicts.js';
import { PageBytes } from './page-bytes.js';

/** Who this wrapper is and where its bytes go (shared with the verdicts), plus the pipeline's timings. */
export interface RelayOptions extends VerdictsContext, Partial<PipelineTimings> {
  /** Hooks around forwarding, in order (see `stages.ts`). */
  stages?: readonly CallStage[];
  /** The server's process, for E-Stop to terminate and start again (estop.ts); without it, E-Stop only cancels. */
  upstream?: UpstreamControl;
  /** How long a restarted server may take to answer the client's replayed initialize. */
  restartTimeoutMs?: number;
}

/** The server states in which what the server says is relayed (restarting: the answer to the replay, and what follows). */
const UPSTREAM_HEARD: ReadonlySet<UpstreamState> = new Set(['up', 'restarting']);
const RESOURCE_CHANGES = new Set(['notifications/resources/updated', 'notifications/resources/list_changed']);
const NL = Buffer.from('\n');
const LIST_WAIT_FOR_BROKER_MS = 1000;
/** Many clients give up on a request after 60 s (the MCP SDK's default): a held call is answered before. */
const HOLD_ANSWER_MS = 50_000;
const HELD_KEEP_MS = 120_000;
const RESTART_TIMEOUT_MS = 30_000;
/** What the client may send while the server is being restarted, held until it is up (past it: refused). */
const MAX_WAITING_LINES = 10_000;
const MAX_WAITING_BYTES = 64 * 2 ** 20;

export class Relay {
  /** The calls in flight: what an E-Stop or a front end acts on (`inFlight`, `end`). */
  readonly calls: CallPipeline;
  private readonly verdicts: ToolVerdicts;
  /** Client requests (other than tools/call) sent upstream and not answered yet: id key -> id and method. */
  private readonly forwarded = new Map<string, { id: JsonRpcId; method: string }>();
  private initialized = false;
  /** The client's initialize and the server's answer, for a restart after E-Stop. */
  private readonly init = new InitCapture();
  /** E-Stop beyond the next call: running calls stopped, the server terminated and restarted (estop.ts). */
  private readonly hard: HardStop;
  /** Calls that run as MCP tasks, followed to their end (tasks.ts). */
  private readonly tasks: TaskBook;
  /** Declared inverses the broker has the server run for an undo (undo-caller.ts). */
  readonly inverses: InverseCaller;
  /** Lines from the client held while the server is being restarted. */
  private waiting: Buffer[] = [];
  private waitingBytes = 0;

  constructor(private readonly o: RelayOptions) {
    const clock: Clock = o.clock ?? systemClock;
    this.verdicts = new ToolVerdicts({ ...o, clock });
    this.calls = new CallPipeline({
      server: o.server,
      client: o.client,
      link: o.link,
      verdicts: this.verdicts,
      clock,
      log: o.log,
      timings: {
        progressIntervalMs: o.progressIntervalMs ?? 5000,
        brokerWaitMs: o.brokerWaitMs ?? 1500,
        catalogWaitMs: o.catalogWaitMs ?? 15_000,
        holdAnswerMs: o.holdAnswerMs ?? HOLD_ANSWER_MS,
        heldKeepMs: o.heldKeepMs ?? HELD_KEEP_MS,
      },
      toClient: (m) => this.o.toClient(frame(m)),
      relayToClient: (raw) => this.forwardClient(raw),
      toUpstream: (m) => this.o.toUpstream(frame(m)),
      initialized: () => this.initialized,
      unavailable: () => this.hard.unavailable(),
      taskCreated: (call, handle) => this.tasks.created(call, handle),
    });
    this.tasks = new TaskBook({
      clock,
      log: o.log,
      toUpstream: (m) => this.o.toUpstream(frame(m)),
      toClient: (m) => this.o.toClient(frame(m)),
      journal: (call) => o.link.journal(call.toRecord(o.client, o.server)),
      ended: () => this.hard.serverLetGo(),
    });
    this.hard = new HardStop({
      server: o.server,
      clock,
      calls: this.calls,
      tasks: this.tasks,
      listing: this.verdicts.listing,
      init: this.init,
      upstream: o.upstream,
      restartTimeoutMs: o.restartTimeoutMs ?? RESTART_TIMEOUT_MS,
      log: o.log,
      toClient: (m) => this.o.toClient(frame(m)),
      toUpstream: (m) => this.o.toUpstream(frame(m)),
      initialized: () => this.initialized,
      abandonRequests: (why) => this.abandonRequests(why),
      resumed: () => this.resumed(),
    });
    // an undo's inverse takes the same stages as a client's call (E-Stop, rules, pins, tickets), not a side door
    this.inverses = new InverseCaller({ clock, calls: this.calls });
    for (const stage of o.stages ?? []) this.calls.use(stage);
    o.link.on('policy', (p: PolicySnapshot | null) => {
      this.calls.policyChanged(p);
      this.hard.policyChanged(p);
      this.verdicts.changed();
    });
    o.link.on('ticket', (t: { callId?: unknown; ticketId?: unknown }) => {
      if (typeof t.callId === 'string' && typeof t.ticketId === 'string') this.calls.ticketAssigned(t.callId, t.ticketId);
    });
  }

  // ---- client -> upstream ------------------------------------------------------------------------------

  /**
   * One line from the client. It is parsed once and checked: a line that is not JSON gets -32700, anything
   * that cannot be routed safely gets -32600 (id null where its id is unusable), and is never forwarded.
   * Batches (removed from MCP in 2025-06-18) are split, so no call rides past the gate inside one.
   */
  fromClient(line: Buffer): void {
    if (this.hard.holdsClient() && this.waiting.length < MAX_WAITING_LINES && this.waitingBytes + line.length <= MAX_WAITING_BYTES) {
      // the server is being started again (or may be, after release): what the client says goes to the server
      // once it has been re-initialized, or has let go of what E-Stop stopped
      this.waiting.push(Buffer.from(line));
      this.waitingBytes += line.length;
      return;
    }
    const parsed = parseLine(line);
    if (parsed === undefined) {
      this.o.log(`airlock: the client sent a line that is not JSON; answered with a parse error (${preview(line)})`);
      this.reply(parseErrorReply());
      return;
    }
    if (Array.isArray(parsed) && parsed.length === 0) {
      this.reply(invalidRequestReply('an empty batch'));
      return;
    }
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      const verdict = checkClientMessage(m, this.idCheck, line.length);
      if (verdict.ok) this.clientMessage(verdict.message);
      else {
        this.o.log(`airlock: refused a message from the client: ${verdict.why}`);
        if (verdict.reply) this.reply(verdict.reply);
      }
    }
  }

  private readonly idCheck: ClientCheckContext = {
    inFlight: (id) => {
      const key = idKey(id);
      return this.calls.has(key) || this.forwarded.has(key);
    },
    reserved: (id) => this.verdicts.listing.reserves(id),
  };

  /** One line from the server: relayed as its bytes, unless it is ours, a listing to annotate, or a call's end. */
  private dispatchUpstream(line: Buffer): void {
    const parsed = parseLine(line);
    if (Array.isArray(parsed)) {
      for (const m of parsed) if (isObject(m) && !(mayNestDeeper(line.length) && this.tooDeep(m))) this.upstreamMessage(m, Buffer.from(JSON.stringify(m)));
      return;
    }
    if (!isObject(parsed)) {
      const what = parsed === undefined ? 'a line that is not JSON' : 'JSON that is not a message';
      this.o.log(`airlock: the server wrote ${what}; dropped (${preview(line)})`);
      return;
    }
    if (mayNestDeeper(line.length) && this.tooDeep(parsed)) return;
    // The client gets the server's own bytes (re-serialising a 10 MB result would cost more than the relay
    // itself), unless they could read differently to a client whose parser keeps the first of two "id" keys:
    // then what the wrapper matched (a held call cannot be "answered" that way) is what the client gets.
    if (!hasOneIdKey(line)) return this.upstreamMessage(parsed, Buffer.from(JSON.stringify(parsed)));
    // a leading BOM is accepted on the way in, never passed on to the client
    this.upstreamMessage(parsed, line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf ? line.subarray(3) : line);
  }

  /**
   * A server message nested past MAX_NESTING is not relayed (re-serialising it, journaling it or hashing it would
   * overflow the stack): an answer becomes an error answer to the same request, anything else is dropped. True
   * when the message was handled so.
   */
  private tooDeep(m: Record<string, unknown>): boolean {
    if (!nestedDeeperThan(m, MAX_NESTING)) return false;
    const listingAnswer = isId(m.id) && !Object.hasOwn(m, 'method') && (this.verdicts.listing.reserves(m.id) || this.forwarded.get(idKey(m.id))?.method === 'tools/list');
    const kept = listingAnswer ? withholdDeepTools(m, MAX_NESTING) : null;
    if (kept) {
      this.o.log(`airlock: the server listed ${kept.withheld.length} tool(s) nested deeper than ${MAX_NESTING} levels (${kept.withheld.map((n) => JSON.stringify(n.slice(0, 80))).join(', ')}); withheld, every call to them asks`);
      this.upstreamMessage(kept.message, Buffer.from(JSON.stringify(kept.message)));
      return true;
    }
    this.o.log(`airlock: the server wrote a message nested deeper than ${MAX_NESTING} levels; refused`);
    if (!Object.hasOwn(m, 'method') && isId(m.id)) {
      const answer: Message = { ...errorResponse(m.id, INTERNAL_ERROR, `Airlock refused the server's answer: it is nested deeper than ${MAX_NESTING} levels`) };
      this.upstreamMessage(answer, Buffer.from(JSON.stringify(answer)));
    }
    return true;
  }

  private clientMessage(m: Message): void {
    const method = m.method;
    if (this.hard.state !== 'up') return this.whileDown(m);
    if (isRequest(m)) {
      if (method === 'tools/call') return this.onToolsCall(m);
      if (method === 'initialize') this.init.clientAsked(m);
      // calls pipelined behind the client's own listing wait for its answer (it may change a definition)
      if (method === 'tools/list') this.verdicts.listing.clientListingSent(idKey(m.id));
      if (m.method.startsWith('tasks/')) this.tasks.clientAsked(idKey(m.id), m.method, m.params);
      this.forwarded.set(idKey(m.id), { id: m.id, method: m.method });
    } else if (method === 'notifications/initialized') {
      this.forwardUpstream(m);
      this.initialized = true;
      if (this.verdicts.listing.canList) void this.verdicts.listing.refresh();
      return;
    } else if (method === 'notifications/cancelled') {
      const requestId = isObject(m.params) ? m.params.requestId : undefined;
      const key = typeof requestId === 'string' || typeof requestId === 'number' ? idKey(requestId) : undefined;
      if (key !== undefined) {
        // a call the server never saw: the pipeline ends it, and the server does not hear of it
        if (this.calls.clientCancelled(key)) return;
        // a cancelled request is not answered by the server, so its id is free again
        if (!this.calls.has(key)) {
          this.forwarded.delete(key);
          this.verdicts.listing.clientListingEnded(key);
          this.tasks.forget(key);
        }
      }
    }
    this.forwardUpstream(m);
  }

  private onToolsCall(m: Message & { id: JsonRpcId }): void {
    const params = m.params;
    if (!isObject(params) || typeof params.name !== 'string') {
      this.reply(errorResponse(m.id, INVALID_PARAMS, 'tools/call needs params.name, a string'));
      return;
    }
    if (CONTROL_CHARACTERS.test(params.name)) {
      this.reply(errorResponse(m.id, INVALID_PARAMS, 'tools/call params.name contains control characters; no tool has such a name'));
      return;
    }
    if (params.arguments !== undefined && !isObject(params.arguments)) {
      this.reply(errorResponse(m.id, INVALID_PARAMS, 'tools/call params.arguments must be an object'));
      return;
    }
    const meta = params._meta;
    const token = isObject(meta) ? meta.progressToken : undefined;
    const progressToken = typeof token === 'string' || typeof token === 'number' ? token : undefined;
    this.calls.start(m, idKey(m.id), params.name, (params.arguments as Record<string, unknown> | undefined) ?? {}, progressToken);
  }

  /**
   * The server is down (stopped by E-Stop, being restarted, or gone for good): a call goes to the pipeline,
   * which refuses it (and journals it); any other request gets an error at once; a notification, or an answer to
   * a request of the old process, has no one to go to.
   */
  private whileDown(m: Message): void {
    if (!isRequest(m)) return;
    if (m.method === 'tools/call') return this.onToolsCall(m);
    this.reply(errorResponse(m.id, INTERNAL_ERROR, this.hard.refusal()));
  }

  // ---- upstream -> client ------------------------------------------------------------------------------

  fromUpstream(line: Buffer): void {
    // a process E-Stop is terminating (or has) says nothing more to the client
    if (!UPSTREAM_HEARD.has(this.hard.state)) return;
    this.dispatchUpstream(line);
  }

  private upstreamMessage(m: Message, raw: Buffer): void {
    if (isResponse(m)) {
      const id = m.id as JsonRpcId | null;
      const listing = this.verdicts.listing;
      if (this.hard.takes(id)) return this.hard.takeResponse(m as unknown as JsonRpcResponse);
      if (this.tasks.takes(id)) return this.tasks.takeResponse(m as unknown as JsonRpcResponse, raw);
      // an undo's inverse: its call in the pipeline takes the answer (a late one, for a call that ended, is dropped)
      if (this.inverses.takes(id)) {
        if (this.calls.serverAnswered(idKey(id as JsonRpcId), m, raw)) this.hard.serverLetGo();
        return;
      }
      if (listing.reserves(id)) return listing.takeResponse(m as unknown as JsonRpcResponse, raw);
      if (id !== null && id !== undefined) {
        const key = idKey(id);
        if (this.calls.serverAnswered(key, m, raw)) return this.hard.serverLetGo();
        const method = this.forwarded.get(key)?.method;
        if (method === undefined) {
          // A server must not answer what it was never asked: above all a call still waiting for approval,
          // which it could otherwise "complete" with a made-up result.
          this.o.log(`airlock: the server answered request ${JSON.stringify(id)}, which it was never sent; dropped`);
          return;
        }
        this.forwarded.delete(key);
        this.tasks.serverAnswered(key, m, raw);
        if (method === 'tools/list') {
          const result = m.result;
          // the page is evidence first (a declaration that differs makes our listing stale), then the calls
          // that waited behind it are decided
          const page = PageBytes.of(m.id, raw);
          if (isObject(result)) listing.observe(result.tools, page);
          listing.clientListingEnded(key);
          if (!isObject(result)) return this.forwardClient(raw);
          const send = () => this.o.toClient(this.verdicts.answer(m, result, page));
          // What readOnlyHint says depends on the broker's policy: give a connection in progress a moment
          // rather than tell the client "asks" for everything and take it back with list_changed.
          if (this.o.link.state === 'connecting') return void this.o.link.ensureUp(LIST_WAIT_FOR_BROKER_MS).then(send);
          return send();
        }
        if (method === 'initialize') {
          this.init.serverAnswered(key, m);
          const caps = isObject(m.result) ? m.result.capabilities : undefined;
          listing.allowListing();
          if (!isObject(caps) || caps.tools === undefined) this.o.log('airlock: the server does not declare the tools capability');
        }
      }
      return this.forwardClient(raw);
    }
    const method = m.method;
    if (method === 'notifications/tools/list_changed') {
      this.verdicts.listing.markStale();
    } else if (method === 'notifications/tasks/status') {
      this.tasks.statusNotified(m.params);
    } else if (method === 'notifications/progress' && isObject(m.params) && this.calls.silencedProgress(m.params.progressToken)) {
      // progress on a call E-Stop ended: the client has its answer, and no longer knows the token
      return;
    } else if (typeof method === 'string' && RESOURCE_CHANGES.has(method)) {
      this.forwardClient(raw);
      this.observeResourceChange(method, m.params);
      return;
    }
    this.forwardClient(raw);
  }

  /**
   * A resource changed while a read-only call was running: the claim of every read-only call in flight is
   * withdrawn (we cannot tell which one did it), for every later call, and the client is told to re-list.
   */
  private observeResourceChange(method: string, params: unknown): void {
    const uri = isObject(params) && typeof params.uri === 'string' ? ` (${params.uri.slice(0, 300)})` : '';
    const suspects = new Map<string, string>();
    const running = this.calls.runningReadOnly();
    // one of them changed something: the tripwire counts the trusted ones (which ran without a place) as changing
    this.calls.countAsChanging(running.filter((c) => c.verdict?.class === 'read-only-trusted').length);
    for (const c of [...running, ...this.tasks.runningReadOnly()]) {
      if (!suspects.has(c.tool)) {
        suspects.set(c.tool, `the server sent ${method}${uri} while "${c.tool}" was running (call ${c.callId}, ${new Date().toISOString()})`);
      }
    }
    if (suspects.size > 0) this.verdicts.withdraw(suspects);
  }

  // ---- lifecycle ---------------------------------------------------------------------------------------

  /** The client went away: pending tickets are withdrawn. */
  clientClosed(): void {
    this.calls.clientClosed();
  }

  /**
   * The server process ended. True when E-Stop terminated it (or a restart failed): the wrapper stays, the server
   * is restarted on release or the client is told to restart it. False when it ended by itself: the wrapper ends.
   */
  upstreamEnded(description: string): boolean {
    return this.hard.upstreamEnded(description);
  }

  /** Where the server stands: up, or stopped by E-Stop (see estop.ts). */
  get upstreamState(): UpstreamState {
    return this.hard.state;
  }

  /** The upstream is gone: calls it never answered end as unknown, and the client hears why. */
  upstreamExited(description: string): void {
    this.verdicts.listing.abandon();
    this.calls.upstreamExited(description);
    this.tasks.upstreamExited(description);
  }

  // ---- plumbing ----------------------------------------------------------------------------------------

  /** The server is going away: each request it was sent and has not answered gets an error now. */
  private abandonRequests(why: string): void {
    const open = [...this.forwarded.entries()];
    this.forwarded.clear();
    for (const [key] of open) {
      this.verdicts.listing.clientListingEnded(key);
      this.tasks.forget(key);
    }
    for (const [, { id }] of open) this.reply(errorResponse(id, INTERNAL_ERROR, why));
  }

  /** The server is back (or will not be): the lines held meanwhile are taken as if they came now. */
  private resumed(): void {
    const lines = this.waiting;
    this.waiting = [];
    this.waitingBytes = 0;
    for (const line of lines) this.fromClient(line);
  }

  private reply(message: JsonRpcResponse): void {
    this.o.toClient(frame(message));
  }

  /** Send the server the message as parsed and judged: one serialisation, no duplicate keys, no odd escapes. */
  private forwardUpstream(m: Message): void {
    this.o.toUpstream(frame(m));
  }

  private forwardClient(raw: Buffer): void {
    this.o.toClient(raw.length < 65536 ? Buffer.concat([raw, NL]) : raw);
    if (raw.length >= 65536) this.o.toClient(NL);
  }
}

/** Every way JSON can spell the key "id" (its letters' \\u escapes have no hex letters, so case cannot vary). */
const ID_KEY_SPELLINGS = ['"id"', '"\\u0069d"', '"i\\u0064"', '"\\u0069\\u0064"'].map((k) => Buffer.from(k));

/** At most one spelling of "id" anywhere in the line (a cheap scan; a false "no" only costs a re-serialisation). */
function hasOneIdKey(line: Buffer): boolean {
  let seen = 0;
  for (const key of ID_KEY_SPELLINGS) {
    for (let at = line.indexOf(key); at !== -1; at = line.indexOf(key, at + 1)) if (++seen > 1) return false;
  }
  return true;
}

function preview(line: Buffer): string {
  const text = line.subarray(0, 120).toString('utf8').replace(/[\x00-\x1f\x7f]/g, '?');
  return line.length > 120 ? `${text}… ${line.length} bytes` : text;
}
