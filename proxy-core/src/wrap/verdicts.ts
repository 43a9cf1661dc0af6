/**
 * The wrapper's verdicts on the upstream's tools: its own full listing, classified with the trust the user
 * gave and the claims evidence withdrew. Keeps the broker told of the catalog (with each tool's definition,
 * for the broker to pin and to show when it changes), and the client told to re-list whenever what it was
 * shown (readOnlyHint: may this run without asking?) is no longer true.
 *
 * Nothing is worked out twice for the same inputs: a repeat listing of an unchanged catalog is answered from
 * the annotated entries kept (annotated-listing.ts), and the broker is told the catalog again only when what
 * it would be told changed. A definition the broker has pinned as it is now goes by its hashes (the broker
 * holds its texts); any other goes with its texts, to be pinned or shown as changed.
 */
import { type Catalog, classifyTools, stricter, type Verdict, verdictFor } from '../classify/classify.js';
import { DEFINITION_PARTS, type ToolDefinition } from '../classify/definition.js';
import { classifyClean } from '../classify/entry-flags.js';
import { frame, isObject } from '../jsonrpc/messages.js';
import { decide, type DefinitionState } from '../policy/decide.js';
import { annotateToolsResult } from './annotate.js';
import { AnnotatedListing } from './annotated-listing.js';
import { answerFirstPage } from './first-page.js';
import type { PageBytes } from './page-bytes.js';
import type { BrokerLinkLike } from './broker-link.js';
import { type Clock, systemClock } from '../util/clock.js';
import { ToolListing, withdrawnKey } from './tool-listing.js';

export interface VerdictsContext {
  server: string;
  client: string;
  link: BrokerLinkLike;
  toClient(data: Buffer | string): void;
  /** Run `fn` once what was written to the client so far has left (at once without it). */
  whenClientWritten?(fn: () => void): void;
  toUpstream(data: Buffer | string): void;
  /** A request of the wrapper's own as this connection's era writes it (connection-era.ts); as it is without. */
  stamp?(message: unknown): unknown;
  log(msg: string): void;
  /** Time and timers (the system clock unless a test supplies its own). */
  clock?: Clock;
}

/**
 * The most definition text one catalog report carries: past it, definitions go with their hashes only (a
 * change is still detected and held, but shown by fingerprint, not text).
 */
const DEFINITION_TEXT_BUDGET = 4 * 1024 * 1024;
/**
 * Tools a report is built for in one turn of the event loop: a 10,000-tool catalog's fingerprints take some
 * 200 ms, and a call that came in meanwhile (a client's first, right behind its listing) is read between slices.
 */
const REPORT_SLICE = 500;
/**
 * A report due this long is built whole at once when its inputs change again before it is done: a server that
 * relists faster than its report is built must not keep the broker from ever hearing of its catalog.
 */
const REPORT_PATIENCE_MS = 1000;

/** A tool as the broker is told it. */
type Reported = Verdict & { outputSchema: unknown; definition?: ToolDefinition };

/** A report being built, a slice at a time: what it is built from, and what it has so far. */
interface ReportBuild {
  inputs: readonly unknown[];
  tools: Verdict[];
  verdicts: Reported[];
  /** The tools whose definitions go by hash: told again when that changes (a pin that moves needs the texts). */
  byHash: string[];
  budget: number;
}

export class ToolVerdicts {
  /** The wrapper's own listing of the upstream's tools. */
  readonly listing: ToolListing;
  /** Claims withdrawn in this process (the broker's copy arrives with the next policy push). */
  private readonly localWithdrawn = new Map<string, string>();
  /** Counts changes to `localWithdrawn` (what `trustInputs` keeps is keyed on it). */
  private localRevision = 0;
  /** The trust inputs as last worked out, with what they were made of (the policy pushed is a new object each time). */
  private trustKept: { policy: unknown; withdrawn: unknown; trust: unknown; local: number; inputs: { trust: boolean; withdrawn: Map<string, string> } } | undefined;
  /** The catalog for the kept trust inputs at a listing version (what `listing.classify` would return again). */
  private catalogKept: { inputs: unknown; version: number; catalog: Catalog } | undefined;
  /** What the client was told in tools/list: tool -> readOnlyHint. */
  private readonly advertised = new Map<string, boolean>();
  /** The last page's `advertised` merged into `advertised` (merging the same one again changes nothing). */
  private merged: ReadonlyMap<string, boolean> | null = null;
  private lastReported = '';
  /** What the last report was built from: while these are the same, it is not built again. */
  private reportInputs: readonly unknown[] = [];
  private readonly pages = new AnnotatedListing();
  private reportDue = false;
  private building: ReportBuild | null = null;
  /** When the report due became due. */
  private reportDueAt = 0;
  private readonly clock: Clock;

  constructor(private readonly o: VerdictsContext) {
    this.clock = o.clock ?? systemClock;
    this.listing = new ToolListing(
      (m) => o.toUpstream(frame(o.stamp ? o.stamp(m) : m)),
      () => this.changed(),
      this.clock,
    );
  }

  private trustInputs(): { trust: boolean; withdrawn: Map<string, string> } {
    const policy = this.o.link.policy;
    const kept = this.trustKept;
    if (kept && kept.policy === policy && kept.withdrawn === policy?.withdrawn && kept.trust === policy?.trustReadOnlyHints && kept.local === this.localRevision) return kept.inputs;
    const withdrawn = new Map(this.localWithdrawn);
    if (policy) for (const [tool, evidence] of Object.entries(policy.withdrawn)) if (!withdrawn.has(tool)) withdrawn.set(tool, evidence);
    // `--trust-read-only-hints` alone trusts nothing: a config entry anyone can edit is not the person's choice.
    // The broker sends trustReadOnlyHints only when the person turned it on (`airlock trust`).
    const inputs = { trust: policy?.trustReadOnlyHints === true, withdrawn };
    this.trustKept = { policy, withdrawn: policy?.withdrawn, trust: policy?.trustReadOnlyHints, local: this.localRevision, inputs };
    return inputs;
  }

  /** The current listing, classified (worked out again whenever the trust inputs or the listing change). */
  current(): Catalog {
    const inputs = this.trustInputs();
    const version = this.listing.version;
    const kept = this.catalogKept;
    if (kept && kept.inputs === inputs && kept.version === version) return kept.catalog;
    const catalog = this.listing.classify(inputs.trust, inputs.withdrawn);
    this.catalogKept = { inputs, version, catalog };
    return catalog;
  }

  /** The verdict for a call (a tool the listing never showed is unclassifiable). */
  verdict(tool: string): Verdict {
    return verdictFor(this.current(), tool);
  }

  /** The tool's definition in the current listing, for the policy to compare with its pin. */
  definition(tool: string): DefinitionState | undefined {
    return this.listing.definition(tool);
  }

  /** Would a call to this tool run without a human yes right now? (what readOnlyHint tells the client) */
  runsWithoutAsking(v: Verdict): boolean {
    const policy = this.o.link.policy;
    if (!policy || v.class !== 'read-only-trusted') return false;
    const call = { server: this.o.server, client: this.o.client, tool: v.name, toolClass: v.class, definition: this.listing.definition(v.name) };
    return decide(call, policy).action === 'allow';
  }

  /**
   * The client's page answered as a whole while the wrapper has no listing of its own (first-page.ts: the line
   * to send, what the client was told remembered), or undefined: then the listing observes it and `answer` does.
   */
  answerFirst(message: Record<string, unknown>, result: Record<string, unknown>, raw: Buffer): Buffer | undefined {
    if (this.listing.listed) return undefined;
    const { trust, withdrawn } = this.trustInputs();
    const opts = { trustReadOnlyHints: trust, withdrawn };
    const first = answerFirstPage(message, result, raw, (entry) => classifyClean(entry, opts), (v) => this.runsWithoutAsking(v));
    if (first) this.tell(first.advertised);
    return first?.line;
  }

  /**
   * The client's tools/list answer `message` (its result `result`), annotated, as the line to send; what the
   * client was told is remembered. Each entry is shown the stricter of the page's own verdict and the wrapper's.
   */
  answer(message: Record<string, unknown>, result: Record<string, unknown>, page?: PageBytes): string | Buffer {
    const tools = result.tools;
    if (!Array.isArray(tools)) return frame({ ...message, result: this.annotate(result) });
    let texts: string[] = [];
    const textsOf = (): string[] => (texts = this.listing.textsOf(tools, page));
    const full = this.listing.listed ? this.current() : null;
    const { trust, withdrawn } = this.trustInputs();
    const opts = { trustReadOnlyHints: trust, withdrawn };
    let pageVerdicts: Catalog | undefined;
    // the page is the wrapper's own listing (its bytes agreed, its parse is that listing's): each entry's own
    // verdict went into the catalog's, which is as strict or stricter, so the catalog's is the one shown
    const ownListing = full !== null && this.listing.holds(tools) ? full : null;
    const annotated = this.pages.answer(message, result, tools, textsOf, {
      inputs: this.annotateInputs(full, trust, withdrawn),
      verdictOf: (name, entry, index, count) => {
        const known = ownListing?.verdicts.get(name);
        if (known) return known;
        // a name listed once is judged on its own entry; twice, as the whole page judges it (unclassifiable)
        const own = count === 1 ? this.listing.entryFlags.classify(entry, texts[index]!, opts) : verdictFor((pageVerdicts ??= this.classifyPage(tools, texts, opts)), name);
        const listed = full?.verdicts.get(name);
        return listed && stricter(listed.class, own.class) === listed.class ? listed : own;
      },
      runsWithoutAsking: (v) => this.runsWithoutAsking(v),
      log: this.o.log,
    }, page);
    this.listing.forgetObserved();
    this.tell(annotated.advertised);
    return annotated.line;
  }

  /** What a verdict or readOnlyHint reads besides the entry (the catalog object changes with the listing). */
  private annotateInputs(full: Catalog | null, trust: boolean, withdrawn: ReadonlyMap<string, string>): unknown[] {
    return [this.o.link.policy, full, this.listing.version, trust, withdrawnKey(withdrawn)];
  }

  /**
   * The answer to a client's tools/list whose page has the very bytes of the last one answered, when nothing
   * the answer reads has changed since (the wrapper's listing agreed with those bytes, and the same policy,
   * catalog, declarations, trust and withdrawn claims): the line sent then, after this answer's id. Undefined
   * otherwise: the answer is then read and annotated as any.
   */
  answerAgain(page: PageBytes): readonly Buffer[] | undefined {
    if (!this.listing.agrees(page)) return undefined;
    const full = this.listing.listed ? this.current() : null;
    const { trust, withdrawn } = this.trustInputs();
    const again = this.pages.again(page, this.annotateInputs(full, trust, withdrawn));
    if (!again) return undefined;
    this.tell(again.advertised);
    return again.line;
  }

  /** Remember what the client was told of each tool on a page. */
  private tell(advertised: ReadonlyMap<string, boolean>): void {
    if (advertised === this.merged) return;
    for (const [k, v] of advertised) this.advertised.set(k, v);
    this.merged = advertised;
  }

  private classifyPage(tools: unknown[], texts: readonly string[], opts: { trustReadOnlyHints: boolean; withdrawn: ReadonlyMap<string, string> }): Catalog {
    return classifyTools(tools, opts, (entry, i) => this.listing.entryFlags.classify(entry, texts[i]!, opts));
  }

  /**
   * Rewrite one page of a client's tools/list result, and remember what the client was told. The page is
   * also evidence: a declaration that differs from the wrapper's own listing makes that listing stale, and
   * the client is shown the stricter of the page's own verdict and the wrapper's.
   */
  annotate(result: Record<string, unknown>): Record<string, unknown> {
    // the wrapper's listing even when stale: with every declaration seen, it can only be stricter
    const full = this.listing.listed ? this.current() : null;
    const { trust, withdrawn } = this.trustInputs();
    const page = classifyTools(result.tools, { trustReadOnlyHints: trust, withdrawn });
    const annotated = annotateToolsResult(
      result,
      (name) => {
        const own = verdictFor(page, name);
        const listed = full?.verdicts.get(name);
        return listed && stricter(listed.class, own.class) === listed.class ? listed : own;
      },
      (v) => this.runsWithoutAsking(v),
      this.o.log,
    );
    this.tell(annotated.advertised);
    return annotated.result;
  }

  /** Withdraw read-only claims on evidence: here at once, at the broker for good, and tell the client. */
  withdraw(suspects: ReadonlyMap<string, string>): void {
    for (const [tool, evidence] of suspects) {
      this.localWithdrawn.set(tool, evidence);
      this.localRevision++;
      this.o.log(`airlock: read-only claim of "${tool}" withdrawn: ${evidence}`);
    }
    this.o.link.observed([...suspects].map(([tool, evidence]) => ({ tool, evidence })));
    this.changed(true);
  }

  /** Report the catalog to the broker and tell the client to re-list when what it was told is now wrong. */
  changed(forceNotify = false): void {
    if (!this.listing.listed) return;
    const catalog = this.current();
    this.reportSoon();
    let stale = forceNotify;
    for (const [name, readOnly] of this.advertised) {
      const v = catalog.verdicts.get(name);
      if (!v || this.runsWithoutAsking(v) !== readOnly) stale = true;
    }
    if (stale && this.advertised.size > 0) {
      this.o.toClient(frame({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
    }
  }

  /**
   * Report once the client's listings in flight are answered and written out, after the work at hand: the
   * client's answer need not wait for a catalog's worth of fingerprints (a 5 MB answer leaves in many writes,
   * each waiting for the event loop, which a report built meanwhile would hold up), and it is built a slice at a
   * time, so a call that comes in meanwhile is read and decided between slices. No decision waits for the report
   * (a call is held on the wrapper's own comparison with the pins it has), but a ticket does (`reportNow`): the
   * broker has the listing a call was decided on before the call asks.
   */
  private reportSoon(): void {
    if (this.reportInputs.length > 0 && this.reportInputs[2] !== this.o.link.policy?.pins) {
      // other pins (a push, or a connection to a broker that may have lost them): built against them now, since
      // the link resends its copy as soon as it is up, and a broker without a pin must get the texts to pin
      this.reportDue = true;
      this.reportNow();
      return;
    }
    if (this.reportDue) return;
    this.reportDue = true;
    this.reportDueAt = this.clock.now();
    this.listing.whenClientListingsEnd(() => this.afterAnswerWritten(() => this.reportSlice()));
  }

  /** Run `fn` once the answer written to the client in this turn has left (or the writer stopped waiting for it). */
  afterAnswerWritten(fn: () => void): void {
    // after the immediate, the answer's first write is made: whether it all left is known then
    setImmediate(() => (this.o.whenClientWritten ? this.o.whenClientWritten(fn) : fn()));
  }

  /** The report due, finished now: before a call asks (the broker then knows the listing it was decided on). */
  reportNow(): void {
    if (!this.reportDue) return;
    this.reportDue = false;
    if (this.listing.listed) this.buildReport(Infinity);
  }

  /** A slice of the report due; the next one in a later turn, after the event loop has read what came in. */
  private reportSlice(): void {
    if (!this.reportDue) return;
    if (!this.listing.listed || this.buildReport(REPORT_SLICE)) this.reportDue = false;
    else setImmediate(() => this.reportSlice());
  }

  /**
   * Tell the broker the catalog, when what it would be told changed (the catalog, or the pins it holds): `n` more
   * tools of it at most now; true once it is told (or there was nothing new to tell). A build whose inputs changed
   * before it was done starts over.
   */
  private buildReport(n: number): boolean {
    const catalog = this.current();
    const pins = this.o.link.policy?.pins;
    const inputs = [catalog, this.listing.version, pins];
    let b = this.building;
    if (!b || !sameInputs(b.inputs, inputs)) {
      // a build overtaken by a change starts over, whole at once when the report has waited long enough
      if (b && this.clock.now() - this.reportDueAt >= REPORT_PATIENCE_MS) n = Infinity;
      this.building = null;
      if (sameInputs(inputs, this.reportInputs)) return true;
      b = this.building = { inputs, tools: [...catalog.verdicts.values()], verdicts: [], byHash: [], budget: DEFINITION_TEXT_BUDGET };
    }
    const end = Math.min(b.tools.length, b.verdicts.length + n);
    while (b.verdicts.length < end) b.verdicts.push(this.reported(b.tools[b.verdicts.length]!, pins, b));
    if (b.verdicts.length < b.tools.length) return false;
    this.building = null;
    this.reportInputs = inputs;
    const fingerprint = JSON.stringify([b.verdicts.map((v) => [v.name, v.class, v.reasons, v.definition?.fingerprint]), catalog.problems, b.byHash]);
    if (fingerprint !== this.lastReported) {
      this.lastReported = fingerprint;
      this.o.link.catalog(b.verdicts, catalog.problems);
    }
    return true;
  }

  /** One tool as the broker is told it: by its hashes when pinned as listed now (the broker has its texts), else with them. */
  private reported(v: Verdict, pins: unknown, b: ReportBuild): Reported {
    const definitions = this.listing.definitions;
    const pinned = isObject(pins) && Object.hasOwn(pins, v.name) && pins[v.name] === definitions.fingerprint(v.name);
    if (pinned) b.byHash.push(v.name);
    let sent = definitions.definition(v.name, !pinned);
    if (sent && !pinned) {
      const size = textSize(sent);
      if (size <= b.budget) b.budget -= size;
      else sent = hashesOnly(sent);
    }
    return { ...v, outputSchema: this.listing.outputSchema(v.name), ...(sent ? { definition: sent } : {}) };
  }
}

function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function textSize(d: ToolDefinition): number {
  let n = 0;
  for (const part of DEFINITION_PARTS) n += d.parts[part]?.text.length ?? 0;
  return n;
}

/** A definition without its texts: every part by its hash, marked cut. */
function hashesOnly(d: ToolDefinition): ToolDefinition {
  const parts: ToolDefinition['parts'] = {};
  for (const part of DEFINITION_PARTS) {
    const p = d.parts[part];
    if (p) parts[part] = { sha256: p.sha256, text: '', cut: true };
  }
  return { fingerprint: d.fingerprint, parts };
}

