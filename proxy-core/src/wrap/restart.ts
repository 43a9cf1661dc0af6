/**
 * What a transparent restart of the upstream needs (after E-Stop terminated it): the client's own `initialize`,
 * replayed to the new process, and what the first process answered, which the new one must match. The client
 * never sees the replay; if the new server would describe itself differently (another protocol version, other
 * capabilities), the session the client negotiated no longer holds, and a restart is not safe.
 */
import { canonicalJson } from '../util/canonical-json.js';
import { idKey, isObject, type JsonRpcId, type JsonRpcResponse, type Message } from '../jsonrpc/messages.js';

interface Negotiated {
  params: unknown;
  protocolVersion: unknown;
  capabilities: string;
}

export class InitCapture {
  /** Client initialize requests not answered yet: id key -> params. */
  private readonly asked = new Map<string, unknown>();
  /** The first initialize that succeeded: what the client sent and what the server agreed to. */
  private negotiated: Negotiated | undefined;
  /** A 2026-07-28 connection has no handshake: a restarted server takes the client's next request as it comes. */
  stateless = false;
  /** The ids of those requests, to answer them when the server ends first. */
  private readonly askedIds = new Map<string, JsonRpcId>();
  /** The server answered one of them: the session began. */
  private began = false;

  /** The client sent `initialize`. */
  clientAsked(m: Message & { id: JsonRpcId }): void {
    // a session that opened with 2026 requests and then initializes is a 2025 one, replayed as such
    this.stateless = false;
    // one is all a session has; a client that keeps sending them is not remembered without end
    if (this.asked.size < 8) {
      this.asked.set(idKey(m.id), m.params);
      this.askedIds.set(idKey(m.id), m.id);
    }
  }

  /** The server ended: the client's initialize requests it never answered, or null when a session had begun. */
  unanswered(): JsonRpcId[] | null {
    return this.began ? null : [...this.askedIds.values()];
  }

  /** The server answered a request with this id key (only an initialize the client sent is of interest). */
  serverAnswered(key: string, m: Message): void {
    if (!this.asked.has(key)) return;
    const params = this.asked.get(key);
    this.asked.delete(key);
    this.askedIds.delete(key);
    this.began = true;
    const result = m.result;
    if (this.negotiated || m.error !== undefined || !isObject(result)) return;
    const capabilities = canonical(result.capabilities);
    // capabilities too deep to compare cannot be checked on a restart: the session is then not replayed
    if (capabilities !== undefined) this.negotiated = { params, protocolVersion: result.protocolVersion, capabilities };
  }

  /** Why the session cannot be replayed to a new process, or null when it can. */
  unsafe(): string | null {
    if (this.stateless) return null;
    return this.negotiated ? null : "the client's initialize was not seen, so it cannot be replayed";
  }

  /** The client's initialize again, under the wrapper's own id. */
  replay(id: string): Message {
    return { jsonrpc: '2.0', id, method: 'initialize', params: this.negotiated?.params };
  }

  /** Why the new server's answer to the replay breaks the session the client negotiated, or null when it holds. */
  mismatch(answer: JsonRpcResponse): string | null {
    const first = this.negotiated;
    if (!first) return this.unsafe();
    if (answer.error) return `the restarted server refused initialize (${String(answer.error.code)}: ${String(answer.error.message).slice(0, 200)})`;
    const result = answer.result;
    if (!isObject(result)) return 'the restarted server answered initialize without a result';
    if (result.protocolVersion !== first.protocolVersion) {
      return `the restarted server speaks protocol ${JSON.stringify(result.protocolVersion)}, not ${JSON.stringify(first.protocolVersion)} as before`;
    }
    if (canonical(result.capabilities) !== first.capabilities) return 'the restarted server declares other capabilities than before';
    return null;
  }
}

/** Capabilities as comparable text; undefined when they cannot be (nested past what recursion takes). */
function canonical(capabilities: unknown): string | undefined {
  try {
    return canonicalJson(capabilities ?? null);
  } catch {
    return undefined;
  }
}
