/**
 * The wrapper's own view of the upstream's tools: it lists them itself (all pages, with request ids that
 * cannot collide with the client's) so that a decision never depends on which pages the client fetched.
 * After an upstream `tools/list_changed`, the next decision waits for a fresh listing.
 */
import { randomBytes } from 'node:crypto';
import { type Catalog, classifyTools } from '../classify/classify.js';
import { isObject, type JsonRpcResponse } from '../jsonrpc/messages.js';

const MAX_PAGES = 1000;
const PAGE_TIMEOUT_MS = 10_000;

export class UpstreamCatalog {
  /** All tools from the last complete listing, or null before the first one. */
  raw: unknown[] | null = null;
  listProblems: string[] = [];
  /** Declared output schemas by tool name, indexed once per listing. */
  private outputSchemas = new Map<string, unknown>();
  private listing: Promise<void> | null = null;
  private stale = true;
  private generation = 0;
  private readonly prefix = `airlock-${randomBytes(8).toString('hex')}-`;
  private nextId = 1;
  private readonly waiting = new Map<string, (msg: JsonRpcResponse) => void>();
  private cache: { key: string; catalog: Catalog } | null = null;
  /** Set once the upstream has answered initialize and the client said initialized. */
  canList = false;

  constructor(
    private readonly sendUpstream: (message: unknown) => void,
    private readonly onListed: () => void,
  ) {}

  /** True when `id` belongs to a request the wrapper itself sent. */
  owns(id: unknown): boolean {
    return typeof id === 'string' && id.startsWith(this.prefix);
  }

  /** Take the response to one of our own requests (never forwarded to the client). */
  takeResponse(msg: JsonRpcResponse): void {
    const id = msg.id as string;
    const done = this.waiting.get(id);
    if (done) {
      this.waiting.delete(id);
      done(msg);
    }
  }

  get ready(): boolean {
    return this.raw !== null && !this.stale;
  }

  markStale(): void {
    this.stale = true;
    this.generation++;
    if (this.canList) void this.refresh();
  }

  /** Start (or join) a listing; resolves when `ready` or the listing failed (then the catalog is empty). */
  refresh(): Promise<void> {
    if (this.listing) return this.listing;
    const generation = this.generation;
    this.listing = this.listAll()
      .then(
        (tools) => {
          this.raw = tools;
          this.listProblems = [];
          this.outputSchemas = new Map();
          for (const t of tools) if (isObject(t) && typeof t.name === 'string' && t.outputSchema !== undefined) this.outputSchemas.set(t.name, t.outputSchema);
        },
        (err: Error) => {
          // Fail closed: an empty catalog makes every call unclassifiable, which asks.
          this.raw = [];
          this.listProblems = [`tools/list failed: ${err.message}`];
          this.outputSchemas = new Map();
        },
      )
      .then(() => {
        this.listing = null;
        this.cache = null;
        if (generation === this.generation) this.stale = false;
        else void this.refresh();
        this.onListed();
      });
    return this.listing;
  }

  /** Wait for a fresh catalog, at most `timeoutMs`; false if it is still not ready. */
  async whenReady(timeoutMs: number): Promise<boolean> {
    if (this.ready) return true;
    const until = Date.now() + timeoutMs;
    while (!this.ready && Date.now() < until) {
      // the initialize answer may still be on its way (a client that pipelines its first messages)
      if (!this.canList) await new Promise((r) => setTimeout(r, 10));
      else await Promise.race([this.refresh(), new Promise((r) => setTimeout(r, Math.max(1, until - Date.now())).unref())]);
    }
    return this.ready;
  }

  private request(method: string, params: unknown): Promise<unknown> {
    const id = `${this.prefix}${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`no answer to ${method} within ${PAGE_TIMEOUT_MS} ms`));
      }, PAGE_TIMEOUT_MS);
      timer.unref();
      this.waiting.set(id, (msg) => {
        clearTimeout(timer);
        if (msg.error) reject(new Error(`${msg.error.code}: ${String(msg.error.message)}`));
        else resolve(msg.result);
      });
      this.sendUpstream({ jsonrpc: '2.0', id, method, params });
    });
  }

  private async listAll(): Promise<unknown[]> {
    const tools: unknown[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.request('tools/list', cursor === undefined ? {} : { cursor });
      if (!isObject(result) || !Array.isArray(result.tools)) throw new Error('tools/list result has no tools array');
      tools.push(...result.tools);
      const next = result.nextCursor;
      if (typeof next !== 'string' || next === '') return tools;
      if (seen.has(next)) throw new Error('tools/list pagination loops (a cursor came back twice)');
      seen.add(next);
      cursor = next;
    }
    throw new Error(`tools/list has more than ${MAX_PAGES} pages`);
  }

  /** Classify the current listing with the given trust inputs (cached until any of them changes). */
  classify(trustReadOnlyHints: boolean, withdrawn: ReadonlyMap<string, string>): Catalog {
    const key = `${trustReadOnlyHints}|${[...withdrawn.keys()].sort().join('\u0000')}`;
    if (this.cache && this.cache.key === key) return this.cache.catalog;
    const catalog = classifyTools(this.raw ?? [], { trustReadOnlyHints, withdrawn });
    catalog.problems.push(...this.listProblems);
    this.cache = { key, catalog };
    return catalog;
  }

  /** The declared output schema of a tool, if the listing had one. */
  outputSchema(name: string): unknown {
    return this.outputSchemas.get(name);
  }

  /** Stop waiting on our own requests (the upstream is gone). */
  abandon(): void {
    for (const [id, done] of this.waiting) done({ jsonrpc: '2.0', id, error: { code: -32603, message: 'server exited' } });
    this.waiting.clear();
  }
}
