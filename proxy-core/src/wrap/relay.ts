/**
 * The wrapper's routing core: every line from the client or the upstream comes in here, and leaves as the
 * bytes it came in (relayed), as a rewritten message (tools/list), or not at all (a denied call, answered
 * here). Transport-free: the caller wires stdio and the broker link in.
 *
 * A tools/call goes through the stages classify -> policy -> ticket -> journal. Allowed calls are decided
 * in the same tick they were read, from the policy the broker pushed; only the ticket stage waits.
 */
import { randomBytes } from 'node:crypto';
import { isReadOnlyClass, type Verdict } from '../classify/classify.js';
import { IpcError } from '../ipc/channel.js';
import { ARGS_SHOWN_MAX, type AskAnswer, type AskRequest, type JournalEntry, type Outcome } from '../ipc/protocol.js';
import { argumentsHash } from '../jsonrpc/canonical.js';
import { checkClientMessage, type ClientCheckContext, invalidRequestReply, parseErrorReply, parseLine } from '../jsonrpc/inbound.js';
import {
  errorResponse,
  frame,
  idKey,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  isObject,
  isRequest,
  isResponse,
  type JsonRpcId,
  type JsonRpcResponse,
  type Message,
} from '../jsonrpc/messages.js';
import { type DecidedBy, decide, type PolicyDecision } from '../policy/decide.js';
import { denialResult } from './denial.js';
import { ToolVerdicts, type VerdictsContext } from './verdicts.js';

/** Who this wrapper is and where its bytes go (shared with the verdicts), plus the relay's own timings. */
export interface RelayOptions extends VerdictsContext {
  /** How often to send progress while a ticket waits (when the call carried a progressToken). */
  progressIntervalMs?: number;
  /** How long a call may wait for the broker connection before failing closed. */
  brokerWaitMs?: number;
  /** How long a call may wait for the tool catalog before failing closed. */
  catalogWaitMs?: number;
}

type FlowState = 'deciding' | 'asking' | 'running' | 'done';

/** One tools/call on its way through the stages. */
interface CallFlow {
  id: JsonRpcId;
  key: string;
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  /** The parsed request: what the gate judged is what the server is sent (re-serialised, never the client's bytes). */
  message: Message;
  progressToken: string | number | undefined;
  startedAt: number;
  t0: number;
  state: FlowState;
  verdict?: Verdict;
  readOnly: boolean;
  waitedBroker: boolean;
  cancelled: boolean;
  ticketId?: string;
  decidedBy?: DecidedBy;
  detail?: string;
  progressTimer?: NodeJS.Timeout;
  /** The arguments as journaled and shown (cut at a size limit), computed once per call. */
  shown?: { text: string; truncated: boolean; bytes: number };
}

const RESOURCE_CHANGES = new Set(['notifications/resources/updated', 'notifications/resources/list_changed']);
const NL = Buffer.from('\n');
const LIST_WAIT_FOR_BROKER_MS = 1000;

export class Relay {
  private readonly calls = new Map<string, CallFlow>();
  private readonly verdicts: ToolVerdicts;
  /** Client requests (other than tools/call) sent upstream and not answered yet: id key -> method. */
  private readonly forwarded = new Map<string, string>();
  private readonly callPrefix = randomBytes(9).toString('base64url');
  private callCounter = 0;
  private initialized = false;
  private readonly progressIntervalMs: number;
  private readonly brokerWaitMs: number;
  private readonly catalogWaitMs: number;

  constructor(private readonly o: RelayOptions) {
    this.progressIntervalMs = o.progressIntervalMs ?? 5000;
    this.brokerWaitMs = o.brokerWaitMs ?? 1500;
    this.catalogWaitMs = o.catalogWaitMs ?? 15_000;
    this.verdicts = new ToolVerdicts(o);
    o.link.on('policy', () => this.verdicts.changed());
    o.link.on('ticket', (t: { callId?: unknown; ticketId?: unknown }) => {
      for (const f of this.calls.values()) if (f.callId === t.callId && typeof t.ticketId === 'string') f.ticketId = t.ticketId;
    });
  }

  // ---- client -> upstream ------------------------------------------------------------------------------

  /**
   * One line from the client. It is parsed once and checked: a line that is not JSON gets -32700, anything
   * that cannot be routed safely gets -32600 (id null where its id is unusable), and is never forwarded.
   * Batches (removed from MCP in 2025-06-18) are split, so no call rides past the gate inside one.
   */
  fromClient(line: Buffer): void {
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
      const verdict = checkClientMessage(m, this.idCheck);
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
    reserved: (id) => this.verdicts.catalog.reserves(id),
  };

  /** One line from the server: relayed as its bytes, unless it is ours, a listing to annotate, or a call's end. */
  private dispatchUpstream(line: Buffer): void {
    const parsed = parseLine(line);
    if (Array.isArray(parsed)) {
      for (const m of parsed) if (isObject(m)) this.upstreamMessage(m, Buffer.from(JSON.stringify(m)));
      return;
    }
    if (!isObject(parsed)) {
      const what = parsed === undefined ? 'a line that is not JSON' : 'JSON that is not a message';
      this.o.log(`airlock: the server wrote ${what}; dropped (${preview(line)})`);
      return;
    }
    // The client gets the server's own bytes (re-serialising a 10 MB result would cost more than the relay
    // itself), unless they could read differently to a client whose parser keeps the first of two "id" keys:
    // then what the wrapper matched (a held call cannot be "answered" that way) is what the client gets.
    if (!hasOneIdKey(line)) return this.upstreamMessage(parsed, Buffer.from(JSON.stringify(parsed)));
    // a leading BOM is accepted on the way in, never passed on to the client
    this.upstreamMessage(parsed, line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf ? line.subarray(3) : line);
  }

  private clientMessage(m: Message): void {
    const method = m.method;
    if (isRequest(m)) {
      if (method === 'tools/call') return this.onToolsCall(m);
      this.forwarded.set(idKey(m.id), m.method);
    } else if (method === 'notifications/initialized') {
      this.forwardUpstream(m);
      this.initialized = true;
      if (this.verdicts.catalog.canList) void this.verdicts.catalog.refresh();
      return;
    } else if (method === 'notifications/cancelled') {
      const requestId = isObject(m.params) ? m.params.requestId : undefined;
      const key = typeof requestId === 'string' || typeof requestId === 'number' ? idKey(requestId) : undefined;
      const flow = key === undefined ? undefined : this.calls.get(key);
      if (flow && flow.state !== 'running') {
        this.cancelFlow(flow, 'the client cancelled the call');
        return; // the upstream never saw the request
      }
      if (flow) {
        flow.cancelled = true;
        this.journal(flow, 'allow', 'cancelled');
      }
      // a cancelled request is not answered by the server, so its id is free again
      if (key !== undefined && !flow) this.forwarded.delete(key);
    }
    this.forwardUpstream(m);
  }

  private onToolsCall(m: Message & { id: JsonRpcId }): void {
    const params = m.params;
    if (!isObject(params) || typeof params.name !== 'string') {
      this.reply(errorResponse(m.id, INVALID_PARAMS, 'tools/call needs params.name, a string'));
      return;
    }
    if (params.arguments !== undefined && !isObject(params.arguments)) {
      this.reply(errorResponse(m.id, INVALID_PARAMS, 'tools/call params.arguments must be an object'));
      return;
    }
    const key = idKey(m.id);
    const meta = params._meta;
    const token = isObject(meta) ? meta.progressToken : undefined;
    const flow: CallFlow = {
      id: m.id,
      key,
      callId: `${this.callPrefix}-${++this.callCounter}`,
      tool: params.name,
      args: (params.arguments as Record<string, unknown> | undefined) ?? {},
      message: m,
      progressToken: typeof token === 'string' || typeof token === 'number' ? token : undefined,
      startedAt: Date.now(),
      t0: performance.now(),
      state: 'deciding',
      readOnly: false,
      waitedBroker: false,
      cancelled: false,
    };
    this.calls.set(key, flow);
    this.decideFlow(flow);
  }

  /** classify -> policy, synchronously when everything is at hand; waits only for what is missing. */
  private decideFlow(flow: CallFlow): void {
    if (flow.state !== 'deciding') return;
    try {
      if (!this.verdicts.catalog.ready) {
        if (!this.verdicts.catalog.canList && !this.initialized) {
          return this.denyFlow(flow, 'error', 'the server has not been initialized yet, so its tools are unknown');
        }
        void this.verdicts.catalog.whenReady(this.catalogWaitMs).then((ok) => {
          if (ok) this.decideFlow(flow);
          else this.denyFlow(flow, 'error', "the server's tool list could not be read, so the call cannot be classified");
        });
        return;
      }
      const link = this.o.link;
      const policy = link.policy;
      if (link.state !== 'up' || !policy) {
        if (flow.waitedBroker) return this.denyFlow(flow, 'broker-down', 'Airlock is not running');
        flow.waitedBroker = true;
        void link.ensureUp(this.brokerWaitMs).then(() => this.decideFlow(flow));
        return;
      }
      const verdict = this.verdicts.verdict(flow.tool);
      flow.verdict = verdict;
      const decision = decide({ server: this.o.server, client: this.o.client, tool: flow.tool, toolClass: verdict.class }, policy);
      if (decision.action === 'allow') this.forwardCall(flow, decision.decidedBy, decision.reason);
      else if (decision.action === 'deny') this.denyFlow(flow, decision.decidedBy, decision.reason);
      else this.askFlow(flow, decision);
    } catch (err) {
      // a stage that throws is a denial, never a forwarded call
      this.denyFlow(flow, 'error', `internal error: ${(err as Error).message}`);
    }
  }

  private askFlow(flow: CallFlow, decision: PolicyDecision): void {
    flow.state = 'asking';
    const verdict = flow.verdict!;
    if (flow.progressToken !== undefined) {
      let n = 0;
      const tick = () => {
        n++;
        const ticket = flow.ticketId ? ` (ticket ${flow.ticketId})` : '';
        this.o.toClient(
          frame({
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken: flow.progressToken, progress: n, message: `Waiting for your approval in Airlock${ticket}` },
          }),
        );
      };
      flow.progressTimer = setInterval(tick, this.progressIntervalMs);
      flow.progressTimer.unref();
    }
    const shown = this.shownArgs(flow);
    const request: AskRequest = {
      callId: flow.callId,
      tool: flow.tool,
      // a held call's arguments can be huge: the broker gets what it may show, and the hash of the whole
      arguments: shown.truncated ? shown.text : flow.args,
      argsTruncated: shown.truncated,
      argsBytes: shown.bytes,
      argsSha256: argumentsHash(flow.args),
      class: verdict.class,
      reasons: [...verdict.reasons, decision.reason],
    };
    this.o.link
      .ask(request)
      .then(
        (answer: AskAnswer) => {
          if (flow.state !== 'asking') return;
          flow.ticketId = answer.ticketId;
          if (answer.decision !== 'allow') return this.denyFlow(flow, answer.decidedBy, answer.reason);
          // E-Stop pressed between the approval and now still wins
          if (this.o.link.policy?.estop !== false) return this.denyFlow(flow, 'estop', 'E-Stop is on: every tool call is refused');
          this.forwardCall(flow, 'user', answer.reason);
        },
        (err: Error) => {
          if (flow.state !== 'asking') return;
          // a broker that refused the request (a bad field) is not a broker that went away: say which
          const refused = err instanceof IpcError && err.code === 'bad-request';
          if (refused) this.denyFlow(flow, 'error', `Airlock could not hold this call for approval: ${err.message}`);
          else this.denyFlow(flow, 'broker-down', 'Airlock stopped answering while the call waited for approval');
        },
      );
  }

  private forwardCall(flow: CallFlow, decidedBy: DecidedBy, detail: string): void {
    this.stopProgress(flow);
    flow.state = 'running';
    flow.decidedBy = decidedBy;
    flow.detail = detail;
    flow.readOnly = isReadOnlyClass(flow.verdict!.class);
    this.forwardUpstream(flow.message);
    this.journal(flow, 'allow', 'pending');
  }

  private denyFlow(flow: CallFlow, decidedBy: DecidedBy, reason: string): void {
    if (flow.state === 'done') return;
    this.stopProgress(flow);
    flow.state = 'done';
    flow.decidedBy = decidedBy;
    flow.detail = reason;
    this.calls.delete(flow.key);
    const verdict = flow.verdict ?? this.verdicts.verdict(flow.tool);
    flow.verdict = verdict;
    this.reply({
      jsonrpc: '2.0',
      id: flow.id,
      result: denialResult({ decidedBy, reason, tool: flow.tool, server: this.o.server, verdict, ticketId: flow.ticketId }),
    });
    this.journal(flow, 'deny', 'not-run');
  }

  private cancelFlow(flow: CallFlow, reason: string): void {
    if (flow.state === 'asking') this.o.link.cancel(flow.callId);
    this.stopProgress(flow);
    flow.state = 'done';
    flow.decidedBy = 'cancelled';
    flow.detail = reason;
    this.calls.delete(flow.key);
    flow.verdict ??= this.verdicts.verdict(flow.tool);
    this.journal(flow, 'deny', 'cancelled');
  }

  private stopProgress(flow: CallFlow): void {
    if (flow.progressTimer) clearInterval(flow.progressTimer);
    flow.progressTimer = undefined;
  }

  // ---- upstream -> client ------------------------------------------------------------------------------

  fromUpstream(line: Buffer): void {
    this.dispatchUpstream(line);
  }

  private upstreamMessage(m: Message, raw: Buffer): void {
    if (isResponse(m)) {
      const id = m.id as JsonRpcId | null;
      if (this.verdicts.catalog.reserves(id)) return this.verdicts.catalog.takeResponse(m as unknown as JsonRpcResponse);
      if (id !== null && id !== undefined) {
        const key = idKey(id);
        const flow = this.calls.get(key);
        if (flow && flow.state === 'running') return this.finishCall(flow, m, raw);
        const method = this.forwarded.get(key);
        if (method === undefined) {
          // A server must not answer what it was never asked: above all a call still waiting for approval,
          // which it could otherwise "complete" with a made-up result.
          this.o.log(`airlock: the server answered request ${JSON.stringify(id)}, which it was never sent; dropped`);
          return;
        }
        this.forwarded.delete(key);
        if (method === 'tools/list') {
          const result = m.result;
          if (!isObject(result)) return this.forwardClient(raw);
          const send = () => this.o.toClient(frame({ ...m, result: this.verdicts.annotate(result) }));
          // What readOnlyHint says depends on the broker's policy: give a connection in progress a moment
          // rather than tell the client "asks" for everything and take it back with list_changed.
          if (this.o.link.state === 'connecting') return void this.o.link.ensureUp(LIST_WAIT_FOR_BROKER_MS).then(send);
          return send();
        }
        if (method === 'initialize') {
          const caps = isObject(m.result) ? m.result.capabilities : undefined;
          this.verdicts.catalog.canList = true;
          if (!isObject(caps) || caps.tools === undefined) this.o.log('airlock: the server does not declare the tools capability');
        }
      }
      return this.forwardClient(raw);
    }
    const method = m.method;
    if (method === 'notifications/tools/list_changed') {
      this.verdicts.catalog.markStale();
    } else if (typeof method === 'string' && RESOURCE_CHANGES.has(method)) {
      this.forwardClient(raw);
      this.observeResourceChange(method, m.params);
      return;
    }
    this.forwardClient(raw);
  }

  private finishCall(flow: CallFlow, m: Message, raw: Buffer): void {
    this.calls.delete(flow.key);
    flow.state = 'done';
    const result = m.result;
    let outcome: Outcome = 'ok';
    if (m.error !== undefined) outcome = 'rpc-error';
    else if (isObject(result) && result.isError === true) outcome = 'tool-error';
    this.forwardClient(raw);
    this.journal(flow, 'allow', flow.cancelled ? 'cancelled' : outcome);
    if (outcome === 'ok' && isObject(result) && result.structuredContent !== undefined && raw.length < 1024 * 1024) {
      if (this.verdicts.catalog.outputSchema(flow.tool) !== undefined) this.o.link.structured(flow.tool, result.structuredContent);
    }
  }

  /**
   * A resource changed while a read-only call was running: the claim of every read-only call in flight is
   * withdrawn (we cannot tell which one did it), for every later call, and the client is told to re-list.
   */
  private observeResourceChange(method: string, params: unknown): void {
    const uri = isObject(params) && typeof params.uri === 'string' ? ` (${params.uri.slice(0, 300)})` : '';
    const suspects = new Map<string, string>();
    for (const f of this.calls.values()) {
      if (f.state === 'running' && f.readOnly && !suspects.has(f.tool)) {
        suspects.set(f.tool, `the server sent ${method}${uri} while "${f.tool}" was running (call ${f.callId}, ${new Date().toISOString()})`);
      }
    }
    if (suspects.size > 0) this.verdicts.withdraw(suspects);
  }

  // ---- lifecycle ---------------------------------------------------------------------------------------

  /** The client went away: pending tickets are withdrawn. */
  clientClosed(): void {
    for (const f of [...this.calls.values()]) if (f.state === 'deciding' || f.state === 'asking') this.cancelFlow(f, 'the client disconnected');
  }

  /** The upstream is gone: calls it never answered end as unknown, and the client hears why. */
  upstreamExited(description: string): void {
    this.verdicts.catalog.abandon();
    for (const f of [...this.calls.values()]) {
      if (f.state === 'running') {
        this.calls.delete(f.key);
        f.state = 'done';
        f.detail = `${f.detail ?? ''}; ${description} before answering`;
        this.journal(f, 'allow', 'unknown');
        this.reply(errorResponse(f.id, INTERNAL_ERROR, `the MCP server ${description} before answering this call; whether it ran is unknown`));
      } else if (f.state !== 'done') {
        this.denyFlow(f, 'error', `the MCP server ${description}`);
      }
    }
  }


  // ---- plumbing ----------------------------------------------------------------------------------------

  private shownArgs(flow: CallFlow): { text: string; truncated: boolean; bytes: number } {
    if (!flow.shown) {
      const text = JSON.stringify(flow.args);
      flow.shown = { text: text.length > ARGS_SHOWN_MAX ? text.slice(0, ARGS_SHOWN_MAX) : text, truncated: text.length > ARGS_SHOWN_MAX, bytes: text.length };
    }
    return flow.shown;
  }

  private journal(flow: CallFlow, decision: 'allow' | 'deny', outcome: Outcome): void {
    const verdict = flow.verdict;
    const shown = this.shownArgs(flow);
    const entry: JournalEntry = {
      id: flow.callId,
      client: this.o.client,
      server: this.o.server,
      tool: flow.tool,
      arguments: shown.text,
      argsTruncated: shown.truncated,
      class: verdict?.class ?? 'unclassifiable',
      reasons: verdict?.reasons ?? [],
      decision,
      decidedBy: flow.decidedBy ?? 'error',
      detail: flow.detail ?? '',
      outcome,
      startedAt: flow.startedAt,
    };
    if (flow.ticketId) entry.ticketId = flow.ticketId;
    if (outcome !== 'pending') entry.durationMs = Math.round((performance.now() - flow.t0) * 1000) / 1000;
    this.o.link.journal(entry);
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
