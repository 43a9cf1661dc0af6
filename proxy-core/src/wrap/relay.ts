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
import type { AskAnswer, JournalEntry, Outcome } from '../ipc/protocol.js';
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
  raw: Buffer;
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
  /** The arguments as journaled (cut at a size limit), computed once per call. */
  argsText?: string;
  argsTruncated?: boolean;
}

const RESOURCE_CHANGES = new Set(['notifications/resources/updated', 'notifications/resources/list_changed']);
const ARGS_JOURNAL_MAX = 64 * 1024;
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

  fromClient(line: Buffer): void {
    this.dispatch(line, 'the client sent', (m, raw) => this.clientMessage(m, raw));
  }

  /**
   * Parse one line and hand each message on with the bytes to relay. Lines that are not JSON messages are
   * logged and dropped; batches (removed from MCP in 2025-06-18) are split so no call rides past the gate.
   */
  private dispatch(line: Buffer, who: string, handle: (m: Message, raw: Buffer) => void): void {
    const parsed = parseLine(line);
    if (Array.isArray(parsed)) {
      for (const m of parsed) if (isObject(m)) handle(m, Buffer.from(JSON.stringify(m)));
      return;
    }
    if (!isObject(parsed)) {
      const what = parsed === undefined ? 'a line that is not JSON' : 'JSON that is not a message';
      this.o.log(`airlock: ${who} ${what}; dropped (${preview(line)})`);
      return;
    }
    handle(parsed, line);
  }

  private clientMessage(m: Message, raw: Buffer): void {
    const method = m.method;
    if (isRequest(m)) {
      if (method === 'tools/call') return this.onToolsCall(m, raw);
      this.forwarded.set(idKey(m.id), m.method);
    } else if (method === 'notifications/initialized') {
      this.forwardUpstream(raw);
      this.initialized = true;
      if (this.verdicts.catalog.canList) void this.verdicts.catalog.refresh();
      return;
    } else if (method === 'notifications/cancelled') {
      const requestId = isObject(m.params) ? m.params.requestId : undefined;
      const flow = requestId === undefined || requestId === null ? undefined : this.calls.get(idKey(requestId as JsonRpcId));
      if (flow && flow.state !== 'running') {
        this.cancelFlow(flow, 'the client cancelled the call');
        return; // the upstream never saw the request
      }
      if (flow) {
        flow.cancelled = true;
        this.journal(flow, 'allow', 'cancelled');
      }
    }
    this.forwardUpstream(raw);
  }

  private onToolsCall(m: Message & { id: JsonRpcId }, raw: Buffer): void {
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
    if (this.calls.has(key)) {
      this.reply(errorResponse(m.id, -32600, 'a request with this id is already in flight'));
      return;
    }
    const meta = params._meta;
    const token = isObject(meta) ? meta.progressToken : undefined;
    const flow: CallFlow = {
      id: m.id,
      key,
      callId: `${this.callPrefix}-${++this.callCounter}`,
      tool: params.name,
      args: (params.arguments as Record<string, unknown> | undefined) ?? {},
      raw,
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
    this.o.link
      .ask({ callId: flow.callId, tool: flow.tool, arguments: flow.args, class: verdict.class, reasons: [...verdict.reasons, decision.reason] })
      .then(
        (answer: AskAnswer) => {
          if (flow.state !== 'asking') return;
          flow.ticketId = answer.ticketId;
          if (answer.decision !== 'allow') return this.denyFlow(flow, answer.decidedBy, answer.reason);
          // E-Stop pressed between the approval and now still wins
          if (this.o.link.policy?.estop !== false) return this.denyFlow(flow, 'estop', 'E-Stop is on: every tool call is refused');
          this.forwardCall(flow, 'user', answer.reason);
        },
        () => {
          if (flow.state === 'asking') this.denyFlow(flow, 'broker-down', 'Airlock stopped while the call waited for approval');
        },
      );
  }

  private forwardCall(flow: CallFlow, decidedBy: DecidedBy, detail: string): void {
    this.stopProgress(flow);
    flow.state = 'running';
    flow.decidedBy = decidedBy;
    flow.detail = detail;
    flow.readOnly = isReadOnlyClass(flow.verdict!.class);
    this.forwardUpstream(flow.raw);
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
    this.dispatch(line, 'the server wrote', (m, raw) => this.upstreamMessage(m, raw));
  }

  private upstreamMessage(m: Message, raw: Buffer): void {
    if (isResponse(m)) {
      const id = m.id as JsonRpcId | null;
      if (this.verdicts.catalog.owns(id)) return this.verdicts.catalog.takeResponse(m as unknown as JsonRpcResponse);
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

  private journal(flow: CallFlow, decision: 'allow' | 'deny', outcome: Outcome): void {
    const verdict = flow.verdict;
    if (flow.argsText === undefined) {
      const text = JSON.stringify(flow.args);
      flow.argsText = text.length > ARGS_JOURNAL_MAX ? text.slice(0, ARGS_JOURNAL_MAX) : text;
      flow.argsTruncated = text.length > ARGS_JOURNAL_MAX;
    }
    const entry: JournalEntry = {
      id: flow.callId,
      client: this.o.client,
      server: this.o.server,
      tool: flow.tool,
      arguments: flow.argsText,
      argsTruncated: flow.argsTruncated === true,
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

  private forwardUpstream(raw: Buffer): void {
    this.o.toUpstream(raw.length < 65536 ? Buffer.concat([raw, NL]) : raw);
    if (raw.length >= 65536) this.o.toUpstream(NL);
  }

  private forwardClient(raw: Buffer): void {
    this.o.toClient(raw.length < 65536 ? Buffer.concat([raw, NL]) : raw);
    if (raw.length >= 65536) this.o.toClient(NL);
  }
}

function parseLine(line: Buffer): unknown {
  try {
    return JSON.parse(line.toString('utf8'));
  } catch {
    return undefined;
  }
}

function preview(line: Buffer): string {
  const text = line.subarray(0, 120).toString('utf8').replace(/[\x00-\x1f\x7f]/g, '?');
  return line.length > 120 ? `${text}… ${line.length} bytes` : text;
}
