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
import { checkClientMessage, type ClientCheckContext, invalidRequestReply, parseErrorReply, parseLine } from '../jsonrpc/inbound.js';
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
import { answerRepeatedListing, type ClientAnswerContext, ClientRequest } from './client-requests.js';
import { HeldClientLines } from './held-client-lines.js';
import { InFlight } from './in-flight.js';
import { pipelineTimings } from './pipeline-core.js';
import { CallPipeline, type PipelineTimings } from './pipeline.js';
import { InitCapture } from './restart.js';
import { observeResourceChange } from './resource-changes.js';
import { ConnectionEra } from './connection-era.js';
import { guardedLines } from './line-guard.js';
import { preview, readServerLine, type ServerLinesContext } from './server-lines.js';
import type { CallStage } from './stages.js';
import { TaskBook } from './tasks.js';
import { InverseCaller } from './undo-caller.js';
import { ToolVerdicts, type VerdictsContext } from './verdicts.js';

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
/** A resource read: its answer, like a call's, is relayed unread (unread-payload.ts). */
const READ = 'resources/read';
const RESTART_TIMEOUT_MS = 30_000;

export class Relay {
  /** The calls in flight: what an E-Stop or a front end acts on (`inFlight`, `end`). */
  readonly calls: CallPipeline;
  private readonly verdicts: ToolVerdicts;
  /** Every request the server was sent and has not answered, by id key: what takes each answer. */
  private readonly inFlight = new InFlight();
  private initialized = false;
  /** The client's initialize and the server's answer, for a restart after E-Stop. */
  private readonly init = new InitCapture();
  /** E-Stop beyond the next call: running calls stopped, the server terminated and restarted (estop.ts). */
  private readonly hard: HardStop;
  /** Calls that run as MCP tasks, followed to their end (tasks.ts). */
  private readonly tasks: TaskBook;
  /** Which MCP era the client speaks on this connection (connection-era.ts). */
  private readonly era: ConnectionEra;
  /** Declared inverses the broker has the server run for an undo (undo-caller.ts). */
  readonly inverses: InverseCaller;
  /** Lines from the client held while the server is being restarted. */
  private readonly waiting = new HeldClientLines();

  constructor(private readonly o: RelayOptions) {
    const clock: Clock = o.clock ?? systemClock;
    this.era = new ConnectionEra({ clock, log: o.log, modern: () => this.modern(), expired: () => this.verdicts.listing.markStale() });
    this.verdicts = new ToolVerdicts({ ...o, clock, stamp: (m) => this.era.stamp(m) });
    this.calls = new CallPipeline({
      server: o.server,
      client: o.client,
      link: o.link,
      verdicts: this.verdicts,
      clock,
      log: o.log,
      timings: pipelineTimings(o),
      toClient: (m) => this.o.toClient(frame(this.era.own(m))),
      relayToClient: (raw) => this.forwardClient(raw),
      toUpstream: (m) => this.o.toUpstream(frame(m)),
      initialized: () => this.initialized,
      unavailable: () => this.hard.unavailable(),
      taskCreated: (call, handle) => this.tasks.created(call, handle),
      inFlight: this.inFlight,
      serverLetGo: () => this.hard.serverLetGo(),
    });
    this.tasks = new TaskBook({
      clock,
      inFlight: this.inFlight,
      log: o.log,
      toUpstream: (m) => this.o.toUpstream(frame(this.era.stamp(m))),
      toClient: (m) => this.o.toClient(frame(m)),
      modern: () => this.era.modern,
      journal: (call) => this.calls.journalNow(call),
      ended: () => this.hard.serverLetGo(),
    });
    this.hard = new HardStop({
      server: o.server,
      clock,
      calls: this.calls,
      tasks: this.tasks,
      listing: this.verdicts.listing,
      init: this.init,
      inFlight: this.inFlight,
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
    // the server is being started again (or may be, after release): what the client says goes to the server
    // once it has been re-initialized, or has let go of what E-Stop stopped
    if (this.hard.holdsClient() && this.waiting.hold(line)) return;
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

  /** What the answer to a request of the client's needs of the relay (client-requests.ts). */
  private readonly answers: ClientAnswerContext = {
    verdicts: () => this.verdicts,
    tasks: () => this.tasks,
    init: this.init,
    server: () => this.o.server,
    link: () => this.o.link,
    log: (msg) => this.o.log(msg),
    toClient: (data) => this.o.toClient(data),
    relayToClient: (raw) => this.forwardClient(raw),
    discovered: (m) => this.era.discovered(m),
  };

  /** How a line from the server is read (server-lines.ts): what it needs of the relay. */
  private readonly serverLines: ServerLinesContext = {
    log: (msg) => this.o.log(msg),
    message: (m, raw) => this.upstreamMessage(m, raw),
    listingAnswer: (id) => this.verdicts.listing.reserves(id) || this.inFlight.get(idKey(id))?.method === 'tools/list',
    repeatedListing: (line) => answerRepeatedListing(line, this.inFlight) || this.verdicts.listing.takeHeldAnswer(line, (r) => this.era.listed(r)),
    relaysUnread: (id) => this.calls.relaysUnread(idKey(id)) || this.inFlight.get(idKey(id))?.method === READ,
    awaitsUnread: () => this.calls.awaitsUnread() || this.inFlight.awaits(READ),
  };

  private readonly idCheck: ClientCheckContext = {
    inFlight: (id) => {
      const key = idKey(id);
      return this.calls.has(key) || this.inFlight.has(key);
    },
    reserved: (id) => this.verdicts.listing.reserves(id),
  };

  private clientMessage(m: Message): void {
    const method = m.method;
    if (this.era.era !== '2025' && isRequest(m)) {
      const refused = this.era.observe(m);
      if (refused) return this.reply(refused);
    }
    if (this.hard.state !== 'up') return this.whileDown(m);
    if (isRequest(m)) {
      if (method === 'tools/call') return this.onToolsCall(m);
      if (method === 'initialize') this.init.clientAsked(m);
      // calls pipelined behind the client's own listing wait for its answer (it may change a definition)
      if (method === 'tools/list') this.verdicts.listing.clientListingSent(idKey(m.id));
      if (m.method.startsWith('tasks/')) this.tasks.clientAsked(idKey(m.id), m.method, m.params);
      this.inFlight.expect(idKey(m.id), new ClientRequest(this.answers, m.id, m.method));
    } else if (method === 'notifications/initialized') {
      this.forwardUpstream(m);
      this.initialized = true;
      this.verdicts.listing.clientInitialized();
      return;
    } else if (method === 'notifications/cancelled') {
      const requestId = isObject(m.params) ? m.params.requestId : undefined;
      const key = typeof requestId === 'string' || typeof requestId === 'number' ? idKey(requestId) : undefined;
      if (key !== undefined) {
        // a call the server never saw: the pipeline ends it, and the server does not hear of it
        if (this.calls.clientCancelled(key)) return;
        // a cancelled request is not answered by the server, so its id is free again
        if (!this.calls.has(key)) {
          this.inFlight.forget(key);
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
    readServerLine(line, this.serverLines);
  }

  private upstreamMessage(m: Message, raw: Buffer): void {
    if (isResponse(m)) {
      const id = m.id as JsonRpcId | null;
      // one table routes every answer to what asked: the client's request, a forwarded call (the client's or
      // Airlock's own), E-Stop's replayed initialize, a task request of the wrapper's
      const key = isId(id) ? idKey(id) : undefined;
      const responder = key !== undefined ? this.inFlight.take(key) : undefined;
      if (responder) return responder.answered(m, raw, key!);
      // the rest of the reserved namespace is the listing's (its own tools/list pages; any other is dropped there)
      if (this.verdicts.listing.reserves(id)) {
        this.era.listed(m.result);
        return this.verdicts.listing.takeResponse(m as unknown as JsonRpcResponse, raw);
      }
      if (id === null || id === undefined) return this.forwardClient(raw);
      // A server must not answer what it was never asked: above all a call still waiting for approval, which it
      // could otherwise "complete" with a made-up result.
      this.o.log(`airlock: the server answered request ${JSON.stringify(id)}, which it was never sent; dropped`);
      return;
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
      observeResourceChange(
        { runningReadOnly: () => this.calls.runningReadOnly(), runningTasks: () => this.tasks.runningReadOnly(), countAsChanging: (n) => this.calls.countAsChanging(n), withdraw: (s) => this.verdicts.withdraw(s) },
        method,
        m.params,
      );
      return;
    }
    this.forwardClient(raw);
  }

  // ---- lifecycle ---------------------------------------------------------------------------------------

  /** The client went away: pending tickets are withdrawn. */
  clientClosed(): void {
    this.era.close();
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

  /** The server ended: the client's initialize requests it never answered, or null once a session began. */
  unansweredInitialize(): JsonRpcId[] | null {
    return this.init.unanswered();
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
    const open = this.inFlight.drain((r) => r instanceof ClientRequest);
    for (const [key] of open) {
      this.verdicts.listing.clientListingEnded(key);
      this.tasks.forget(key);
    }
    for (const [, r] of open) this.reply(errorResponse((r as ClientRequest).id, INTERNAL_ERROR, why));
  }

  /** The server is back (or will not be): the lines held meanwhile are taken as if they came now. */
  private resumed(): void {
    const take = guardedLines('the client', this.o.log, (line) => this.fromClient(line));
    for (const line of this.waiting.take()) take(line);
  }

  private reply(message: JsonRpcResponse): void {
    this.o.toClient(frame(this.era.own(message)));
  }

  /** A 2026-07-28 connection: no handshake comes, so the tools may be listed now (and a restart replays none). */
  private modern(): void {
    this.init.stateless = true;
    this.verdicts.listing.allowListing();
    void this.verdicts.listing.refresh();
  }

  /** Send the server the message as parsed and judged: one serialisation, no duplicate keys, no odd escapes. */
  private forwardUpstream(m: Message): void {
    this.o.toUpstream(frame(m));
  }

  private forwardClient(raw: Buffer): void {
    // (the writer joins what one tick writes into one Buffer: no copy of the message here)
    this.o.toClient(raw);
    this.o.toClient(NL);
  }
}
