/**
 * The wrapper's own tools/list requests (tool-listing.ts): ids in a namespace the client may not use, every page
 * of a listing, a timeout per page.
 *
 * The first listing goes out right behind the client's, so the server usually lists to the wrapper the very page
 * it has just listed to the client. While one of the wrapper's requests is out, the client's page last read is
 * held with its entries' JSON texts; an answer that has that page's bytes after its id is taken from it, without
 * parsing, checking and writing out 5 MB a second time. Same bytes after another id are the same result (see
 * page-bytes.ts), so the wrapper still decides on an answer to its own request, never on the client's alone. An
 * answer with any other byte is read as every line is. The page is let go once the listing it was held for ends.
 */
import { randomBytes } from 'node:crypto';
import { isObject, type JsonRpcResponse } from '../jsonrpc/messages.js';
import type { Clock } from '../util/clock.js';
import { OwnPage, PageBytes } from './page-bytes.js';

/** Ids of the wrapper's own requests start with this; a client request with such an id is refused. */
export const RESERVED_ID_PREFIX = 'airlock-internal:';
export const PAGE_TIMEOUT_MS = 10_000;
const MAX_PAGES = 1000;

/** A complete listing as the wrapper read it; `texts`: its entries' JSON texts, when taken from a page held. */
export interface OwnListingRead {
  tools: unknown[];
  /** The bytes of the answer when the listing came in one page (none: several). */
  page: OwnPage | undefined;
  texts?: readonly string[];
}

type Answered = (msg: JsonRpcResponse, raw?: Buffer, held?: { page: OwnPage; texts: readonly string[] | undefined }) => void;

interface HeldPage {
  page: PageBytes;
  message: Record<string, unknown>;
  /** Its entries' JSON texts, when they were read (a page answered as a whole is held before). */
  texts: readonly string[] | undefined;
}

export class OwnListing {
  private readonly prefix = `${RESERVED_ID_PREFIX}${randomBytes(8).toString('hex')}:`;
  private nextId = 1;
  private readonly pending = new Map<string, Answered>();
  private held: HeldPage | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly sendUpstream: (message: unknown) => void,
  ) {}

  /** True when `id` is in the wrapper's own namespace (whether or not this wrapper sent it). */
  reserves(id: unknown): boolean {
    return typeof id === 'string' && id.startsWith(RESERVED_ID_PREFIX);
  }

  /** Take the answer to one of our own requests. */
  take(msg: JsonRpcResponse, raw?: Buffer): void {
    const id = msg.id as string;
    const done = this.pending.get(id);
    if (done && this.pending.delete(id)) done(msg, raw);
  }

  /**
   * A client's page just read (`message`, whose result lists `tools` with these texts), held while a request of
   * ours is out (true when it is). Only a page with bytes is held: it is matched by them.
   */
  hold(page: PageBytes | undefined, message: Record<string, unknown> | undefined, texts?: readonly string[]): boolean {
    if (!(page && message && isObject(message.result) && this.pending.size > 0)) return false;
    this.held = { page, message, texts };
    return true;
  }

  /** Let the held page go (the listing it was held for ended). */
  release(): void {
    this.held = null;
  }

  /** A line that answers one of our requests with the held page's bytes after its id: taken unread (its message). */
  takeHeld(line: Buffer): JsonRpcResponse | undefined {
    const held = this.held;
    if (held === null) return undefined;
    const read = PageBytes.read(line);
    if (!read || typeof read.id !== 'string') return undefined;
    const done = this.pending.get(read.id);
    if (!done || !read.page.same(held.page.keep())) return undefined;
    this.pending.delete(read.id);
    const message = { ...held.message, id: read.id };
    done(message as unknown as JsonRpcResponse, line, { page: { bytes: read.page, message }, texts: held.texts });
    return message as unknown as JsonRpcResponse;
  }

  /** Every page of a listing. */
  async listAll(): Promise<OwnListingRead> {
    const tools: unknown[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await this.request('tools/list', cursor === undefined ? {} : { cursor });
      const result = answer.result;
      if (!isObject(result) || !Array.isArray(result.tools)) throw new Error('tools/list result has no tools array');
      if (page === 0) {
        const next = result.nextCursor;
        if (typeof next !== 'string' || next === '') return { tools: result.tools, page: answer.page, ...(answer.texts ? { texts: answer.texts } : {}) };
      }
      tools.push(...result.tools);
      const next = result.nextCursor;
      if (typeof next !== 'string' || next === '') return { tools, page: undefined };
      if (seen.has(next)) throw new Error('tools/list pagination loops (a cursor came back twice)');
      seen.add(next);
      cursor = next;
    }
    throw new Error(`tools/list has more than ${MAX_PAGES} pages`);
  }

  /** Stop waiting on our own requests (the upstream is gone): each fails. */
  abandon(): void {
    for (const [id, done] of this.pending) done({ jsonrpc: '2.0', id, error: { code: -32603, message: 'server exited' } });
    this.pending.clear();
    this.held = null;
  }

  private request(method: string, params: unknown): Promise<{ result: unknown; page: OwnPage | undefined; texts?: readonly string[] | undefined }> {
    const id = `${this.prefix}${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to ${method} within ${PAGE_TIMEOUT_MS} ms`));
      }, PAGE_TIMEOUT_MS);
      this.pending.set(id, (msg, raw, held) => {
        this.clock.clearTimeout(timer);
        if (msg.error) reject(new Error(`${msg.error.code}: ${String(msg.error.message)}`));
        else if (held) resolve({ result: msg.result, page: held.page, texts: held.texts });
        else resolve({ result: msg.result, page: OwnPage.of(msg, raw) });
      });
      this.sendUpstream({ jsonrpc: '2.0', id, method, params });
    });
  }
}
