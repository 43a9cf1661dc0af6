/**
 * Which era of MCP this connection speaks (era.ts), as the client's own messages decide it: an `initialize` makes it
 * a 2025 connection; a request whose `_meta` names 2026-07-28 (`server/discover`, or any other) makes it a 2026 one.
 * A client that probes with `server/discover` and falls back to `initialize` (what a client speaking both does on
 * stdio when the server is older) ends up in 2025. Until the client says, nothing is assumed.
 *
 * In a 2026 connection the wrapper's own requests (its listing, its task polls) carry the `_meta` the client's last
 * request gave, Airlock's own results carry `resultType`, and the wrapper's listing is taken again when its `ttlMs`
 * runs out. A 2025 connection goes through here with one comparison per request.
 */
import { isObject, type JsonRpcResponse, type Message } from '../jsonrpc/messages.js';
import type { Clock, Timer } from '../util/clock.js';
import { type Era, listingTtl, metaVersion, MODERN_VERSIONS, requestMeta, stamped, unsupportedVersion, withResultType } from './era.js';

export interface ConnectionEraContext {
  clock: Clock;
  log(msg: string): void;
  /** The connection turned out to be a 2026 one (once): there is no handshake to wait for. */
  modern(): void;
  /** The wrapper's listing has outlived its `ttlMs`: it is taken again. */
  expired(): void;
}

export class ConnectionEra {
  private current: Era | undefined;
  /** The `_meta` of the client's last 2026 request (what the wrapper's own requests carry). */
  private lastParams: unknown;
  private ttlTimer: Timer | undefined;
  /** The client's 2026 session is established (a 2026 request, or a discover the server answered as one). */
  private declared = false;

  constructor(private readonly o: ConnectionEraContext) {}

  get era(): Era | undefined {
    return this.current;
  }

  get modern(): boolean {
    return this.current === '2026';
  }

  /**
   * A request from the client, before anything else reads it. Undefined when it goes on; an error to answer it
   * with when its `_meta` names a protocol version this connection cannot speak.
   */
  observe(m: Message & { id: unknown; method: string }): JsonRpcResponse | undefined {
    if (m.method === 'initialize') {
      if (this.current === '2026') this.o.log('airlock: the client sent initialize on a 2026-07-28 connection; it is taken as a 2025 session from now on');
      this.current = '2025';
      return undefined;
    }
    // a 2025 session's `_meta` is the client's business (no 2026 key means anything there)
    if (this.current === '2025') return undefined;
    const version = metaVersion(m.params);
    if (version === undefined) return undefined;
    if (typeof version !== 'string' || !MODERN_VERSIONS.includes(version)) return unsupportedVersion(m.id as string | number, version);
    this.lastParams = m.params;
    this.current = '2026';
    // a probe is not yet a 2026 session: the server may be an older one, and the client fall back to initialize
    // (the wrapper's listing must not reach a server that has not been initialized): its answer decides
    if (m.method !== 'server/discover') this.declare();
    return undefined;
  }

  /** The server answered the client's server/discover: a 2026 session if it offers 2026-07-28, else still undecided. */
  discovered(m: Message): void {
    if (this.current !== '2026' || this.declared) return;
    const versions = isObject(m.result) ? m.result.supportedVersions : undefined;
    if (m.error === undefined && Array.isArray(versions) && versions.some((v) => typeof v === 'string' && MODERN_VERSIONS.includes(v))) this.declare();
    else this.current = undefined;
  }

  private declare(): void {
    if (this.declared) return;
    this.declared = true;
    this.o.modern();
  }

  /** A request of the wrapper's own, as the server is sent it in this era. */
  stamp(message: unknown): unknown {
    if (this.current !== '2026') return message;
    const meta = requestMeta(this.lastParams);
    return meta ? stamped(message, meta) : message;
  }

  /** A result of Airlock's own, as the client is sent it in this era. */
  own<T>(message: T): T {
    return this.current === '2026' ? withResultType(message) : message;
  }

  /** A page of the wrapper's own listing came: its `ttlMs` (2026) says when it is to be taken again. */
  listed(result: unknown): void {
    if (this.current !== '2026' || !isObject(result)) return;
    const ttl = listingTtl(result);
    if (ttl === undefined) return;
    if (this.ttlTimer) this.o.clock.clearTimeout(this.ttlTimer);
    this.ttlTimer = this.o.clock.setTimeout(() => {
      this.ttlTimer = undefined;
      this.o.expired();
    }, ttl);
  }

  /** The connection ends: no listing is taken again. */
  close(): void {
    if (this.ttlTimer) this.o.clock.clearTimeout(this.ttlTimer);
    this.ttlTimer = undefined;
  }
}
