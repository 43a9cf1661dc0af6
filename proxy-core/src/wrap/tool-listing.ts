/**
 * The wrapper's own view of the upstream's tools: it lists them itself (all pages, with request ids in a
 * namespace the client may not use) so that a decision never depends on which pages the client fetched. Its
 * first listing goes right behind the client's first tools/list, so that the client is answered first; answered
 * with the very bytes of the page the client just got, it is taken from that page (own-listing.ts).
 * After an upstream `tools/list_changed`, or a listing the client fetched that differs from ours, the next
 * decision waits for a fresh listing.
 *
 * A server may describe a tool one way to the wrapper and another way to the client, or change it without
 * saying so. Every distinct declaration seen in this wrapper's life is kept (declarations.ts), and a tool is
 * judged by the strictest of them: a change can tighten a verdict at once, and never loosens it.
 *
 * Each listing also keeps every tool's definition (listed-definitions.ts, fingerprinted when first needed and
 * only for entries not seen before): the broker pins them, and a call to a tool whose definition differs from
 * its pin asks. Until the broker's pins arrive, the first definition this wrapper saw of a tool stands in for
 * its pin, so a change within this wrapper's life holds the tool at once.
 *
 * Everything worked out of an entry is keyed by its exact JSON text (hidden-text findings: classify/entry-flags.ts),
 * so a listing repeated unchanged costs its serialisation and lookups, and any change, however deep in a schema,
 * is read afresh on the listing that shows it. A page with the very bytes of one already compared (page-bytes.ts),
 * with nothing changed here since, is not even serialised (nor, when a client's, parsed: client-requests.ts).
 *
 * A listing the client asked for is evidence in flight: until its answer has been compared (or it failed, or
 * waited past a page's timeout), the catalog is not ready, so a call pipelined right behind it is decided on
 * what that answer says, not on the definition it may be about to replace.
 *
 * All of its state is private: the relay tells it what happened (`observe`, …) and asks what is known (`ready`, …).
 */
import { type Catalog, classifyTools } from '../classify/classify.js';
import { jsonText } from '../classify/definition.js';
import { classifyClean, EntryFlags } from '../classify/entry-flags.js';
import { isObject, type JsonRpcResponse } from '../jsonrpc/messages.js';
import type { DefinitionState } from '../policy/decide.js';
import { type Clock, systemClock, type Timer } from '../util/clock.js';
import { ClientListings } from './client-listings.js';
import { Declarations } from './declarations.js';
import { ListedDefinitions } from './listed-definitions.js';
import { OwnListing, PAGE_TIMEOUT_MS } from './own-listing.js';
import { AgreedPage, type OwnPage, type PageBytes } from './page-bytes.js';

export { RESERVED_ID_PREFIX } from './own-listing.js';
/**
 * How long the wrapper's own first listing waits, after the client's initialized, for the client's first
 * tools/list to go ahead of it: the server then answers the client first, and the client's answer is not held
 * behind the reading, indexing and reporting of the wrapper's own. A call asks for the listing at once.
 */
export const FIRST_LISTING_GRACE_MS = 25;

type Waiter = { resolve(ready: boolean): void; timer: Timer };

export class ToolListing {
  /** All tools from the last complete listing, or null before the first one. */
  private raw: unknown[] | null = null;
  /** The JSON text of each entry of `raw`, in its order. */
  private rawTexts: string[] = [];
  private listProblems: string[] = [];
  /** Set once the upstream has answered initialize: from then on the wrapper may list. */
  private listingAllowed = false;
  /** Declared output schemas by tool name, indexed once per listing. */
  private outputSchemas = new Map<string, unknown>();
  private listing: Promise<void> | null = null;
  private stale = true;
  private generation = 0;
  /** Every distinct declaration per tool name, from every listing that passed by. */
  private readonly declarations = new Declarations();
  /** Counts every change to what `classify` and `definition` read (a listing taken, a declaration remembered). */
  private changes = 0;
  /** The JSON text of each entry in `raw` by name, to tell whether a listing the client fetched differs. */
  private rawText = new Map<string, string>();
  /** The wrapper's own requests, and the client's page held for them. */
  private readonly own: OwnListing;
  private readonly waiters = new Set<Waiter>();
  private cache: { key: string; catalog: Catalog } | null = null;
  /** The entries of a page whose whole text had no hidden-text findings (first-page.ts), while held. */
  private clean: unknown[] | null = null;
  /** Each tool's definition in the last complete listing, and the first one seen. */
  readonly definitions = new ListedDefinitions();
  /** Hidden-text findings by entry text, shared by the wrapper's listings and the client's pages. */
  readonly entryFlags = new EntryFlags();
  /** The last page observed and the JSON text of each of its entries (the page annotated next). */
  private observed: { tools: unknown[]; texts: string[] } | null = null;
  /** The last page observed that differed in nothing, and the `changes` count it was compared at. */
  private readonly agreed = new AgreedPage();
  /** The client's own tools/list requests the server has not answered yet. */
  private readonly clientListings: ClientListings;
  /** The wrapper's own first listing, due once the client has listed (or the grace is over). */
  private firstListing: Timer | undefined;

  constructor(
    sendUpstream: (message: unknown) => void,
    private readonly onListed: () => void,
    private readonly clock: Clock = systemClock,
  ) {
    this.clientListings = new ClientListings(clock, PAGE_TIMEOUT_MS, () => this.ready && this.wake(true));
    this.own = new OwnListing(clock, sendUpstream);
  }

  /** True when `id` is in the wrapper's own namespace (whether or not this wrapper sent it). */
  reserves(id: unknown): boolean {
    return this.own.reserves(id);
  }

  /** Take the response to one of our own requests (never forwarded to the client). */
  takeResponse(msg: JsonRpcResponse, raw?: Buffer): void {
    this.own.take(msg, raw);
  }

  /** A line answering our own listing with the bytes of the client's page held for it: taken unread (true). */
  takeHeldAnswer(line: Buffer, listed: (result: unknown) => void): boolean {
    const m = this.own.takeHeld(line);
    if (m) listed(m.result);
    return m !== undefined;
  }

  /** A complete listing is at hand, nothing has made it stale since, and no listing the client asked for is out. */
  get ready(): boolean {
    // a client's listing the server leaves unanswered past a page's timeout stops counting: the calls behind it
    // are then decided on the wrapper's own listing (every declaration seen makes it stricter)
    return this.raw !== null && !this.stale && !this.clientListings.anyOut();
  }

  /** The client asked the server for its tools (request key): calls wait for the answer. */
  clientListingSent(key: string): void {
    this.clientListings.sent(key);
    // the wrapper's own first listing goes right behind it (after the line is forwarded)
    if (this.firstListing) queueMicrotask(() => void this.refresh());
  }

  /** Run `fn` once no listing the client asked for is out (at once when none is). */
  whenClientListingsEnd(fn: () => void): void {
    this.clientListings.whenNoneOut(fn);
  }

  /** The client's listing was answered (after `observe`), failed or was cancelled: calls behind it go on. */
  clientListingEnded(key: string): void {
    if (!this.clientListings.forget(key)) return;
    if (this.ready) this.wake(true);
    this.clientListings.settle();
  }

  /** The client's initialized: the first listing waits a moment for the client's own to go first; any other goes now. */
  clientInitialized(): void {
    if (!this.listingAllowed) return;
    if (this.raw !== null || this.listing) return void this.refresh();
    this.firstListing ??= this.clock.setTimeout(() => void this.refresh(), FIRST_LISTING_GRACE_MS);
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
    this.clock.clearTimeout(this.firstListing);
    this.firstListing = undefined;
    if (this.listing) return this.listing;
    const generation = this.generation;
    this.listing = this.own
      .listAll()
      .then(({ tools, page, texts }) => this.take(tools, page, texts))
      .catch((err: unknown) => {
        // Fail closed: an empty catalog makes every call unclassifiable, which asks.
        this.raw = [];
        this.clean = null;
        this.rawTexts = [];
        this.listProblems = [`tools/list failed: ${err instanceof Error ? err.message : String(err)}`];
        this.outputSchemas = new Map();
        this.rawText = new Map();
        this.definitions.clear();
        this.changes++;
      })
      .then(() => {
        this.own.release();
        this.listing = null;
        this.cache = null;
        if (generation === this.generation) this.stale = false;
        else void this.refresh();
        this.onListed();
        if (this.ready) this.wake(true);
      });
    return this.listing;
  }

  /** A complete listing: index it, remember its declarations, fingerprint its definitions (`texts`: known already). */
  private take(tools: unknown[], page: OwnPage | undefined, texts?: readonly string[]): void {
    this.raw = tools;
    if (tools !== this.clean) this.clean = null;
    this.rawTexts = [];
    this.listProblems = [];
    this.outputSchemas = new Map();
    const previousText = this.rawText;
    this.rawText = new Map();
    this.changes++;
    const byName = new Map<string, { entries: Record<string, unknown>[]; texts: string[] }>();
    for (let i = 0; i < tools.length; i++) {
      const t: unknown = tools[i];
      let text = texts?.[i] ?? jsonText(t);
      if (!isObject(t) || typeof t.name !== 'string') {
        this.rawTexts.push(text);
        continue;
      }
      // one string per distinct text: the one already held, when the entry is unchanged
      const before = previousText.get(t.name);
      if (before === text) text = before;
      this.rawTexts.push(text);
      if (t.outputSchema !== undefined) this.outputSchemas.set(t.name, t.outputSchema);
      this.rawText.set(t.name, text);
      if (before !== text) this.remember(t.name, text, t);
      const group = byName.get(t.name);
      if (group) {
        group.entries.push(t);
        group.texts.push(text);
      } else byName.set(t.name, { entries: [t], texts: [text] });
    }
    this.definitions.take(byName);
    // a client's page with these very bytes is this listing: nothing in it to compare, its texts are these
    if (page) this.agreed.set(page.bytes, this.changes, this.rawTexts, page.message);
    else this.agreed.clear();
  }

  /** True when `tools` is the very array of the last complete listing (a page read from its bytes: page-bytes.ts). */
  holds = (tools: unknown[]): boolean => tools === this.raw;

  /** A tool's definition in the last listing and the first one seen (what the policy compares with its pin). */
  definition(name: string): DefinitionState | undefined {
    return this.definitions.state(name);
  }

  /** Counts changes to what the catalog and the definitions say (equal counts: nothing changed in between). */
  get version(): number {
    return this.changes;
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

  /**
   * A page of tools the client fetched (its own tools/list, answered by the server). Its declarations are remembered;
   * one that differs from the wrapper's listing makes that stale (the next decision waits for a fresh one), and the
   * answer is true. A page that `agrees` is that same page again: nothing to compare.
   */
  observe(tools: unknown, page?: PageBytes, message?: Record<string, unknown>): boolean {
    if (!Array.isArray(tools)) return false;
    if (page && this.agrees(page)) return false;
    this.agreed.clear();
    let differs = false;
    const texts = this.textsOf(tools);
    for (let i = 0; i < tools.length; i++) {
      const t: unknown = tools[i];
      if (!isObject(t) || typeof t.name !== 'string') continue;
      const text = texts[i]!;
      // a declaration the wrapper's own listing holds was remembered when it was taken
      if (this.rawText.get(t.name) === text) continue;
      this.remember(t.name, text, t);
      if (this.raw !== null) differs = true;
    }
    this.observed = { tools, texts };
    if (differs) this.markStale();
    else if (page && this.raw !== null) this.agreed.set(page, this.changes, null);
    // the listing of ours that is out (the first, right behind it, or one the page made stale) may get these bytes
    this.own.hold(page, message, texts);
    return differs;
  }

  /**
   * A client's page answered before it is observed (first-page.ts): our listing that is out may get these bytes
   * meanwhile, and is then taken from it without a second parse.
   */
  holdPage(page: PageBytes | undefined, message: Record<string, unknown>): void {
    // its text had nothing to find (the page answered as a whole): a listing taken from it needs no entry read
    if (this.own.hold(page, message) && isObject(message.result) && Array.isArray(message.result.tools)) this.clean = message.result.tools;
  }

  /** The page has the bytes of the last one that differed in nothing, and nothing changed here since. */
  agrees(page: PageBytes): boolean {
    return this.agreed.agrees(page, this.changes);
  }

  /** The answer with id `id` that `page` is, when it agrees with a page of the wrapper's own (else undefined). */
  agreedAnswer(page: PageBytes, id: string | number): Record<string, unknown> | undefined {
    return this.agreed.answer(page, this.changes, id);
  }

  /** The JSON text of each entry of a page (those of the page just observed are not written again). */
  textsOf(tools: unknown[], page?: PageBytes): string[] {
    if (this.observed?.tools === tools) return this.observed.texts;
    const agreed = page && this.agreed.texts(page, this.changes);
    if (agreed) return agreed;
    return tools.map((t) => {
      const text = jsonText(t);
      // one string per distinct text: the one already held, when the entry is the listing's
      const held = isObject(t) && typeof t.name === 'string' ? this.rawText.get(t.name) : undefined;
      return held === text ? held : text;
    });
  }

  private remember(name: string, text: string, entry: unknown): void {
    if (!this.declarations.remember(name, text, entry)) return;
    this.changes++;
    this.cache = null;
  }

  /** Classify the current listing with the given trust inputs (cached until any of them changes). */
  classify(trustReadOnlyHints: boolean, withdrawn: ReadonlyMap<string, string>): Catalog {
    const key = `${trustReadOnlyHints}|${this.changes}|${withdrawnKey(withdrawn)}`;
    if (this.cache && this.cache.key === key) return this.cache.catalog;
    const opts = { trustReadOnlyHints, withdrawn };
    const clean = this.raw !== null && this.raw === this.clean;
    const catalog = classifyTools(this.raw ?? [], opts, (entry, i) => (clean ? classifyClean(entry, opts) : this.entryFlags.classify(entry, this.rawTexts[i]!, opts)));
    catalog.problems.push(...this.listProblems);
    this.declarations.applyStrictest(catalog, (entry, text) => this.entryFlags.classify(entry, text, opts));
    this.cache = { key, catalog };
    return catalog;
  }

  /** The declared output schema of a tool, if the listing had one. */
  outputSchema(name: string): unknown {
    return this.outputSchemas.get(name);
  }

  /** Forget the last page observed (it is not annotated after all). */
  forgetObserved(): void {
    this.observed = null;
  }

  /** Stop waiting on our own requests (the upstream is gone); whoever waits for a listing hears "not ready". */
  abandon(): void {
    this.own.abandon();
    this.clientListings.clear();
    this.clock.clearTimeout(this.firstListing);
    this.firstListing = undefined;
    this.listingAllowed = false;
    this.clientListings.settle();
  }
}

/** The withdrawn claims as part of a cache key: the tools and their evidence (new evidence is a new verdict reason). */
export const withdrawnKey = (withdrawn: ReadonlyMap<string, string>): string => [...withdrawn].map(([tool, evidence]) => `${tool}\u0000${evidence}`).sort().join('\u0001');
