/**
 * The wrapper's own view of the upstream's tools: it lists them itself (all pages, with request ids in a
 * namespace the client may not use) so that a decision never depends on which pages the client fetched.
 * After an upstream `tools/list_changed`, or a listing the client fetched that differs from ours, the next
 * decision waits for a fresh listing.
 *
 * A server may describe a tool one way to the wrapper and another way to the client, or change it without
 * saying so. Every distinct declaration seen in this wrapper's life is kept, and a tool is judged by the
 * strictest of them: a change can tighten a verdict at once, and never loosens it.
 *
 * Each listing also fingerprints every tool's definition (classify/definition.ts), once per listing and only
 * for entries it has not fingerprinted before: the broker pins them, and a call to a tool whose definition
 * differs from its pin asks. Until the broker's pins arrive, the first definition this wrapper saw of a tool
 * stands in for its pin, so a change within this wrapper's life holds the tool at once.
 *
 * A listing the client asked for is evidence in flight: until its answer has been compared (or it failed, or
 * waited past a page's timeout), the catalog is not ready, so a call pipelined right behind it is decided on
 * what that answer says, not on the definition it may be about to replace.
 *
 * All of its state is private: the relay tells it what happened (`allowListing`, `markStale`, `observe`,
 * `clientListingSent`, `clientListingEnded`, `takeResponse`, `abandon`) and asks it what is known (`ready`,
 * `classify`, `outputSchema`, `definition`).
 */
import { randomBytes } from 'node:crypto';
import { type Catalog, classifyTool, classifyTools, stricter } from '../classify/classify.js';
import { jsonText, type ToolDefinition, toolDefinition } from '../classify/definition.js';
import { isObject, type JsonRpcResponse } from '../jsonrpc/messages.js';
import type { DefinitionState } from '../policy/decide.js';
import { type Clock, systemClock, type Timer } from '../util/clock.js';

const MAX_PAGES = 1000;
const PAGE_TIMEOUT_MS = 10_000;
/** Ids of the wrapper's own requests start with this; a client request with such an id is refused. */
export const RESERVED_ID_PREFIX = 'airlock-internal:';
/** Past this many distinct declarations of one tool, it is unclassifiable: a server that churns is not believed. */
const MAX_DECLARATIONS_PER_TOOL = 8;
/** Names remembered across listings (bounds memory against a server that invents names on every listing). */
const MAX_NAMES_SEEN = 50_000;
/** Client listings tracked at once (a client that pipelines more is not waited on for the rest). */
const MAX_CLIENT_LISTINGS = 64;

/** A definition fingerprinted in the last listing, by the JSON text of its entries (reused when unchanged). */
interface Fingerprinted {
  definition: ToolDefinition;
  state: DefinitionState;
  /** The JSON text of its entries. */
  key: string;
}

interface Waiter {
  resolve(ready: boolean): void;
  timer: Timer;
}

export class ToolListing {
  /** All tools from the last complete listing, or null before the first one. */
  private raw: unknown[] | null = null;
  private listProblems: string[] = [];
  /** Set once the upstream has answered initialize: from then on the wrapper may list. */
  private listingAllowed = false;
  /** Declared output schemas by tool name, indexed once per listing. */
  private outputSchemas = new Map<string, unknown>();
  private listing: Promise<void> | null = null;
  private stale = true;
  private generation = 0;
  private readonly prefix = `${RESERVED_ID_PREFIX}${randomBytes(8).toString('hex')}:`;
  /** Every distinct declaration per tool name (JSON text -> entry), from every listing that passed by. */
  private readonly seen = new Map<string, Map<string, unknown>>();
  private seenVersion = 0;
  /** The JSON text of each entry in `raw`, to tell whether a listing the client fetched differs. */
  private rawText = new Map<string, string>();
  private nextId = 1;
  private readonly pendingRequests = new Map<string, (msg: JsonRpcResponse) => void>();
  private readonly waiters = new Set<Waiter>();
  private cache: { key: string; catalog: Catalog } | null = null;
  /** Each tool's definition in the last complete listing, with its pin state. */
  private definitions = new Map<string, Fingerprinted>();
  /** The first fingerprint this wrapper saw of each tool: its pin until the broker says otherwise. */
  private readonly firstSeen = new Map<string, string>();
  /** The client's own tools/list requests the server has not answered yet: request key -> when it was sent. */
  private readonly clientListings = new Map<string, number>();

  constructor(
    private readonly sendUpstream: (message: unknown) => void,
    private readonly onListed: () => void,
    private readonly clock: Clock = systemClock,
  ) {}

  /** True when `id` is in the wrapper's own namespace (whether or not this wrapper sent it). */
  reserves(id: unknown): boolean {
    return typeof id === 'string' && id.startsWith(RESERVED_ID_PREFIX);
  }

  /** Take the response to one of our own requests (never forwarded to the client). */
  takeResponse(msg: JsonRpcResponse): void {
    const id = msg.id as string;
    const done = this.pendingRequests.get(id);
    if (done) {
      this.pendingRequests.delete(id);
      done(msg);
    }
  }

  /** A complete listing is at hand, nothing has made it stale since, and no listing the client asked for is out. */
  get ready(): boolean {
    return this.raw !== null && !this.stale && !this.clientListingOut();
  }

  /**
   * True while a client's listing is unanswered. One the server leaves unanswered past a page's timeout stops
   * counting: the calls behind it are then decided on the wrapper's own listing, which every declaration
   * seen so far only makes stricter.
   */
  private clientListingOut(): boolean {
    if (this.clientListings.size === 0) return false;
    const now = this.clock.now();
    for (const [key, at] of this.clientListings) if (now - at >= PAGE_TIMEOUT_MS) this.clientListings.delete(key);
    return this.clientListings.size > 0;
  }

  /** The client asked the server for its tools (request key): calls wait for the answer. */
  clientListingSent(key: string): void {
    if (this.clientListings.size >= MAX_CLIENT_LISTINGS) return;
    this.clientListings.set(key, this.clock.now());
    // whoever waits gives up after its own timeout; the page's timeout here lets a silent server's listing lapse
    this.clock.setTimeout(() => {
      if (this.clientListings.get(key) !== undefined && this.ready) this.wake(true);
    }, PAGE_TIMEOUT_MS);
  }

  /** The client's listing was answered (after `observe`), failed or was cancelled: calls behind it go on. */
  clientListingEnded(key: string): void {
    if (!this.clientListings.delete(key)) return;
    if (this.ready) this.wake(true);
  }

  /** Some complete listing has been read (it may be stale). */
  get listed(): boolean {
    return this.raw !== null;
  }

  /** May the wrapper list now (the upstream answered initialize)? */
  get canList(): boolean {
    return this.listingAllowed;
  }

  /** The upstream answered initialize: listing is possible from now on (and whoever waits for it starts it). */
  allowListing(): void {
    this.listingAllowed = true;
    if (this.waiters.size > 0 && !this.ready) void this.refresh();
  }

  markStale(): void {
    this.stale = true;
    this.generation++;
    if (this.listingAllowed) void this.refresh();
  }

  /** Start (or join) a listing; resolves when `ready` or the listing failed (then the catalog is empty). */
  refresh(): Promise<void> {
    if (this.listing) return this.listing;
    const generation = this.generation;
    this.listing = this.listAll()
      .then((tools) => this.take(tools))
      .catch((err: unknown) => {
        // Fail closed: an empty catalog makes every call unclassifiable, which asks.
        this.raw = [];
        this.listProblems = [`tools/list failed: ${err instanceof Error ? err.message : String(err)}`];
        this.outputSchemas = new Map();
        this.rawText = new Map();
        this.definitions = new Map();
      })
      .then(() => {
        this.listing = null;
        this.cache = null;
        if (generation === this.generation) this.stale = false;
        else void this.refresh();
        this.onListed();
        if (this.ready) this.wake(true);
      });
    return this.listing;
  }

  /** A complete listing: index it, remember its declarations, fingerprint its definitions. */
  private take(tools: unknown[]): void {
    this.raw = tools;
    this.listProblems = [];
    this.outputSchemas = new Map();
    this.rawText = new Map();
    const byName = new Map<string, { entries: Record<string, unknown>[]; texts: string[] }>();
    for (const t of tools) {
      if (!isObject(t) || typeof t.name !== 'string') continue;
      if (t.outputSchema !== undefined) this.outputSchemas.set(t.name, t.outputSchema);
      const text = jsonText(t);
      this.rawText.set(t.name, text);
      this.remember(t.name, text, t);
      const group = byName.get(t.name);
      if (group) {
        group.entries.push(t);
        group.texts.push(text);
      } else byName.set(t.name, { entries: [t], texts: [text] });
    }
    const previous = this.definitions;
    this.definitions = new Map();
    for (const [name, { entries, texts }] of byName) {
      const key = texts.join('\n');
      const before = previous.get(name);
      const definition = before?.key === key ? before.definition : toolDefinition(name, entries);
      if (!this.firstSeen.has(name) && this.firstSeen.size < MAX_NAMES_SEEN) this.firstSeen.set(name, definition.fingerprint);
      // a name past the memory bound has no first sight of its own: its first fingerprint here stands in
      const firstSeen = this.firstSeen.get(name) ?? definition.fingerprint;
      this.definitions.set(name, { definition, state: { fingerprint: definition.fingerprint, firstSeen }, key });
    }
  }

  /** A tool's definition in the last listing and the first one seen (what the policy compares with its pin). */
  definition(name: string): DefinitionState | undefined {
    return this.definitions.get(name)?.state;
  }

  /** Every tool's definition in the last listing (what the broker is told, to pin and to show). */
  allDefinitions(): Map<string, ToolDefinition> {
    const out = new Map<string, ToolDefinition>();
    for (const [name, f] of this.definitions) out.set(name, f.definition);
    return out;
  }

  /** Wait for a fresh catalog, at most `timeoutMs`; false if it is still not ready by then. */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: this.clock.setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(this.ready);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
      // before the initialize answer, listing starts in allowListing (a client that pipelines its first messages);
      // a wait only for the client's own listing needs no listing of ours
      if (this.listingAllowed && (this.raw === null || this.stale)) void this.refresh();
    });
  }

  private wake(ready: boolean): void {
    for (const w of this.waiters) {
      this.clock.clearTimeout(w.timer);
      w.resolve(ready);
    }
    this.waiters.clear();
  }

  private request(method: string, params: unknown): Promise<unknown> {
    const id = `${this.prefix}${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.pendingRequests.delete(id);
        reject(new Error(`no answer to ${method} within ${PAGE_TIMEOUT_MS} ms`));
      }, PAGE_TIMEOUT_MS);
      this.pendingRequests.set(id, (msg) => {
        this.clock.clearTimeout(timer);
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

  /**
   * A page of tools the client fetched (its own tools/list, answered by the server). Its declarations are
   * remembered, and if any differs from the wrapper's listing, that listing is stale: the next decision waits
   * for a fresh one. True when something differed.
   */
  observe(tools: unknown): boolean {
    if (!Array.isArray(tools)) return false;
    let differs = false;
    for (const t of tools) {
      if (!isObject(t) || typeof t.name !== 'string') continue;
      const text = jsonText(t);
      this.remember(t.name, text, t);
      if (this.raw !== null && this.rawText.get(t.name) !== text) differs = true;
    }
    if (differs) this.markStale();
    return differs;
  }

  private remember(name: string, text: string, entry: unknown): void {
    let forName = this.seen.get(name);
    if (!forName) {
      if (this.seen.size >= MAX_NAMES_SEEN) return;
      forName = new Map();
      this.seen.set(name, forName);
    }
    // one past the limit is kept, so that "too many declarations" can be told from "exactly at the limit"
    if (forName.has(text) || forName.size > MAX_DECLARATIONS_PER_TOOL) return;
    forName.set(text, entry);
    this.seenVersion++;
    this.cache = null;
  }

  /** Classify the current listing with the given trust inputs (cached until any of them changes). */
  classify(trustReadOnlyHints: boolean, withdrawn: ReadonlyMap<string, string>): Catalog {
    const key = `${trustReadOnlyHints}|${this.seenVersion}|${[...withdrawn.keys()].sort().join('\u0000')}`;
    if (this.cache && this.cache.key === key) return this.cache.catalog;
    const opts = { trustReadOnlyHints, withdrawn };
    const catalog = classifyTools(this.raw ?? [], opts);
    catalog.problems.push(...this.listProblems);
    for (const [name, verdict] of catalog.verdicts) {
      const declarations = this.seen.get(name);
      if (!declarations || declarations.size < 2) continue;
      if (declarations.size > MAX_DECLARATIONS_PER_TOOL) {
        catalog.verdicts.set(name, {
          ...verdict,
          class: 'unclassifiable',
          reasons: [`the server declared "${name}" in more than ${MAX_DECLARATIONS_PER_TOOL} different ways during this session; none is believed`],
        });
        continue;
      }
      let strictest = verdict;
      for (const entry of declarations.values()) {
        const other = classifyTool(entry, opts);
        if (other.class !== strictest.class && stricter(other.class, strictest.class) === other.class) strictest = other;
      }
      if (strictest !== verdict) {
        catalog.verdicts.set(name, {
          ...verdict,
          class: strictest.class,
          reasons: [`the server declared "${name}" differently during this session; the strictest declaration seen applies`, ...strictest.reasons],
        });
      }
    }
    this.cache = { key, catalog };
    return catalog;
  }

  /** The declared output schema of a tool, if the listing had one. */
  outputSchema(name: string): unknown {
    return this.outputSchemas.get(name);
  }

  /** Stop waiting on our own requests (the upstream is gone); whoever waits for a listing hears "not ready". */
  abandon(): void {
    for (const [id, done] of this.pendingRequests) done({ jsonrpc: '2.0', id, error: { code: -32603, message: 'server exited' } });
    this.pendingRequests.clear();
    this.clientListings.clear();
    this.listingAllowed = false;
  }
}
