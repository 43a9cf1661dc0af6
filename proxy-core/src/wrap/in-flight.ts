/**
 * The requests the server was sent and owes an answer to, by id: the one table a server's response is routed
 * through (as the MCP SDK's `_responseHandlers`). Whoever sends a request (the relay for the client's, the
 * pipeline for a forwarded tools/call, E-Stop's restart for its replayed initialize, the task book for its own
 * tasks/* requests) enters its id with what takes the answer; the answer finds it here, once. An answer to an id
 * that is not in the table was never asked for, and is never relayed.
 */
import type { Message } from '../jsonrpc/messages.js';

/** What takes the server's answer to one request. */
export interface Responder {
  /** The method asked (a client's tools/list answer is annotated; a nested one is checked as a listing). */
  readonly method: string;
  /** The answer, with the id key it came under (one responder can serve many requests). */
  answered(m: Message, raw: Buffer, key: string): void;
}

const LISTING = 'tools/list';

export class InFlight {
  private readonly table = new Map<string, Responder>();
  /** How many of the entries are tools/list requests (most lines the server writes answer no listing). */
  private listings = 0;

  /** The server was sent a request under this id key: `responder` takes its answer. */
  expect(key: string, responder: Responder): void {
    this.removed(this.table.get(key));
    this.table.set(key, responder);
    if (responder.method === LISTING) this.listings++;
  }

  /** Is a tools/list answer owed under any key? */
  get awaitsListing(): boolean {
    return this.listings > 0;
  }

  /** Is an answer to a request of this method owed under any key? */
  awaits(method: string): boolean {
    for (const r of this.table.values()) if (r.method === method) return true;
    return false;
  }

  /** Is an answer owed under this key? */
  has(key: string): boolean {
    return this.table.has(key);
  }

  get(key: string): Responder | undefined {
    return this.table.get(key);
  }

  /** The answer came: what takes it, removed from the table (a second answer finds nothing). */
  take(key: string): Responder | undefined {
    const r = this.table.get(key);
    if (r !== undefined) {
      this.table.delete(key);
      this.removed(r);
    }
    return r;
  }

  /** No answer will come (cancelled, given up on, the server gone): forget the id, if `responder` still holds it. */
  forget(key: string, responder?: Responder): void {
    const r = this.table.get(key);
    if (r !== undefined && (responder === undefined || r === responder)) {
      this.table.delete(key);
      this.removed(r);
    }
  }

  /** The entries `which` picks, removed from the table. */
  drain(which: (r: Responder) => boolean): [string, Responder][] {
    const out: [string, Responder][] = [];
    for (const entry of this.table) if (which(entry[1])) out.push(entry);
    for (const [key, r] of out) {
      this.table.delete(key);
      this.removed(r);
    }
    return out;
  }

  private removed(r: Responder | undefined): void {
    if (r?.method === LISTING) this.listings--;
  }
}
