/**
 * A Relay driven directly with Buffers, in memory: the test is the client, the server and (through a
 * MemoryLink) the broker, and a FakeClock is time. What the relay sends either way is captured as parsed
 * messages (and raw lines), so races can be staged message by message, in milliseconds.
 */
import { Relay, type RelayOptions } from '../../proxy-core/src/wrap/relay.js';
import type { CallStage } from '../../proxy-core/src/wrap/stages.js';
import { FakeClock } from './fake-clock.js';
import { MemoryLink } from './memory-link.js';
import type { PolicySnapshot } from '../../proxy-core/src/policy/decide.js';
import { FIRST_LISTING_GRACE_MS } from '../../proxy-core/src/wrap/tool-listing.js';

type Msg = Record<string, unknown>;

export const TOOLS = [
  { name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'write_note', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false, destructiveHint: false } },
  { name: 'delete_all', inputSchema: { type: 'object' }, annotations: { destructiveHint: true } },
];

export interface HarnessOptions extends Partial<Omit<RelayOptions, 'link' | 'toClient' | 'toUpstream' | 'log' | 'clock'>> {
  policy?: Partial<PolicySnapshot> | null;
  tools?: unknown[];
  stages?: CallStage[];
}

export class Harness {
  readonly clock = new FakeClock();
  readonly link: MemoryLink;
  readonly relay: Relay;
  /** Every message the relay sent the client, parsed. */
  readonly toClient: Msg[] = [];
  /** Every line the relay sent the client, as text. */
  readonly clientLines: string[] = [];
  /** Every message the relay sent the server (the wrapper's own tools/list included), parsed. */
  readonly toUpstream: Msg[] = [];
  readonly logs: string[] = [];
  /** When false, the wrapper's own tools/list requests wait in `heldListings` until `answerListings()`. */
  autoList = true;
  readonly heldListings: string[] = [];
  private clientBuffer = '';
  private readonly tools: unknown[];

  constructor(o: HarnessOptions = {}) {
    this.link = new MemoryLink(o.policy === undefined ? {} : o.policy);
    this.tools = o.tools ?? TOOLS;
    this.relay = new Relay({
      server: 'fx',
      client: 'test',
      progressIntervalMs: 1000,
      holdAnswerMs: 50_000,
      ...o,
      link: this.link,
      clock: this.clock,
      log: (m) => this.logs.push(m),
      toClient: (data) => {
        this.clientBuffer += typeof data === 'string' ? data : data.toString('utf8');
        let nl;
        while ((nl = this.clientBuffer.indexOf('\n')) !== -1) {
          const line = this.clientBuffer.slice(0, nl);
          this.clientBuffer = this.clientBuffer.slice(nl + 1);
          this.clientLines.push(line);
          this.toClient.push(JSON.parse(line) as Msg);
        }
      },
      toUpstream: (data) => {
        for (const line of String(data).split('\n').filter(Boolean)) {
          const m = JSON.parse(line) as Msg;
          this.toUpstream.push(m);
          // the server answers the wrapper's own listings by itself
          if (m.method === 'tools/list' && typeof m.id === 'string' && m.id.startsWith('airlock-internal:')) {
            const id = m.id;
            if (this.autoList) queueMicrotask(() => this.server({ jsonrpc: '2.0', id, result: { tools: this.tools } }));
            else this.heldListings.push(id);
          }
        }
      },
    });
  }

  /** A message from the client (an object, or a raw line). */
  client(m: Msg | string): void {
    this.relay.fromClient(Buffer.from(typeof m === 'string' ? m : JSON.stringify(m)));
  }

  /** A message from the server (an object, or a raw line). */
  server(m: Msg | string | Buffer): void {
    this.relay.fromUpstream(Buffer.isBuffer(m) ? m : Buffer.from(typeof m === 'string' ? m : JSON.stringify(m)));
  }

  /** Answer the wrapper's listings that waited. */
  answerListings(): void {
    for (const id of this.heldListings.splice(0)) this.server({ jsonrpc: '2.0', id, result: { tools: this.tools } });
  }

  /**
   * initialize, its answer, initialized, and the wrapper's own listing (once the client has not listed within
   * the grace given it to go first): a session ready for calls.
   */
  async start(): Promise<this> {
    this.handshake();
    await this.advance(FIRST_LISTING_GRACE_MS);
    return this;
  }

  /**
   * The client lists first (id 7) and the server answers it with `tools`, the wrapper's own listing held back
   * (`heldListings`); the line the client got.
   */
  async clientListsFirst(tools: unknown[]): Promise<string | undefined> {
    this.autoList = false;
    this.handshake();
    this.client({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
    await settle();
    this.server({ jsonrpc: '2.0', id: 7, result: { tools } });
    return this.clientLines.at(-1);
  }

  /** initialize, its answer and initialized, and nothing more (the wrapper's own first listing is still due). */
  handshake(): void {
    this.client({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    this.server({ jsonrpc: '2.0', id: 'init', result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'fx', version: '1' } } });
    this.client({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  call(id: string | number, name: string, args: Msg = {}, meta?: Msg): void {
    this.client({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } });
  }

  /** The client's answer(s) with this id. */
  answers(id: string | number): Msg[] {
    return this.toClient.filter((m) => m.id === id && m.method === undefined);
  }

  /** The one answer the client got for this id (throws if none, or more than one). */
  answer(id: string | number): Msg {
    const got = this.answers(id);
    if (got.length !== 1) throw new Error(`expected one answer to ${JSON.stringify(id)}, got ${got.length}: ${JSON.stringify(this.toClient)}`);
    return got[0]!;
  }

  /** The tools/call requests the server was sent. */
  forwardedCalls(): Msg[] {
    return this.toUpstream.filter((m) => m.method === 'tools/call');
  }

  /** What the client was told about a call (the `airlock/decision` meta of its result). */
  decision(id: string | number): Msg | undefined {
    const result = this.answer(id).result as { _meta?: Record<string, Msg> } | undefined;
    return result?._meta?.['airlock/decision'];
  }

  /** Move the fake time on, then let promise continuations run. */
  async advance(ms: number): Promise<void> {
    this.clock.advance(ms);
    await settle();
  }
}

/** Let every queued promise continuation (and microtask) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

export function textOf(result: unknown): string {
  const content = (result as { content?: { text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}
