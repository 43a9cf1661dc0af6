/**
 * What wrappers report about their servers' tools: the classified catalog (stored, and journaled when it
 * changes), each tool's definition (pinned: pins.ts), read-only claims withdrawn on evidence, and live
 * structuredContent checked against output schemas.
 */
import type { Verdict } from '../classify/classify.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isObject } from '../jsonrpc/messages.js';
import type { WrapperParamsOf } from '../protocol/api.js';
import type { EventDetails } from '../protocol/events.js';
import type { Pins } from './pins.js';
import type { Session } from './sessions.js';
import type { Store } from './db/store.js';
import { strings, toolClass } from './validate.js';

type SchemaCheckResult = { ok: true } | { ok: false; errors: string[] };
/** A result now, or once the validator has loaded (the daemon loads it at the first check: start.ts). */
export type OutputSchemaCheck = (schema: unknown, value: unknown) => SchemaCheckResult | Promise<SchemaCheckResult>;

export interface CatalogsOptions {
  store: Store;
  record<K extends 'classified' | 'read-only-claim-withdrawn' | 'output-schema-mismatch'>(
    type: K,
    server: string | null,
    tool: string | null,
    detail: EventDetails[K],
  ): void;
  /** Where tool definitions are pinned (none: definitions are not looked at). */
  pins?: Pins;
}

export class ServerCatalogs {
  /** Last catalog seen per server, so reconnecting wrappers do not journal the same classification again. */
  private readonly fingerprints = new Map<string, string>();
  private outputSchemaCheck: OutputSchemaCheck | null = null;

  constructor(private readonly o: CatalogsOptions) {}

  /** Plug in a validator for tool output schemas (kept optional so the broker core needs no schema library). */
  setOutputSchemaCheck(check: OutputSchemaCheck): void {
    this.outputSchemaCheck = check;
  }

  /**
   * A wrapper's classified catalog: `changed` when it differs from what was stored for the server, `pinned`
   * when a tool was pinned for the first time (the server's wrappers then need the new pins). The classes are
   * stored at once; the pins once every chunk of them is written (pins.ts `report`).
   */
  async update(session: Session, p: WrapperParamsOf<'catalog.update'>): Promise<{ changed: boolean; pinned: boolean }> {
    const pinning = this.o.pins?.report(session, p.verdicts, p.problems) ?? Promise.resolve(false);
    // awaited below; a failure is not left unhandled meanwhile
    pinning.catch(() => {});
    // the output schemas at once: a call's structuredContent the wrapper sends right behind its report (forwarding.ts)
    // is checked against them, and it is read before the turn below
    session.outputSchemas = outputSchemasOf(p.verdicts);
    // storing a big catalog is a turn of the event loop of its own, after the one that read its message
    await nextTurn();
    const changed = this.classified(session, p);
    return { changed, pinned: await pinning };
  }

  private classified(session: Session, p: WrapperParamsOf<'catalog.update'>): boolean {
    const verdicts: Verdict[] = [];
    for (const v of p.verdicts) {
      if (!isObject(v) || typeof v.name !== 'string') continue;
      verdicts.push({ name: v.name.slice(0, 1024), class: toolClass(v.class), reasons: strings(v.reasons), declared: v.declared });
    }
    const fingerprint = JSON.stringify(verdicts);
    const server = session.info.server;
    if (!this.fingerprints.has(server)) this.fingerprints.set(server, JSON.stringify(this.o.store.catalog(server)));
    if (fingerprint === this.fingerprints.get(server)) return false;
    this.fingerprints.set(server, fingerprint);
    this.o.store.replaceCatalog(server, verdicts);
    const byClass: Record<string, number> = {};
    for (const v of verdicts) byClass[v.class] = (byClass[v.class] ?? 0) + 1;
    this.o.record('classified', server, null, { tools: verdicts.length, byClass, problems: strings(p.problems) });
    return true;
  }

  /** Read-only claims a wrapper saw contradicted; true when any was new (the server's other wrappers then need a push). */
  observed(session: Session, p: WrapperParamsOf<'observed'>): boolean {
    let changed = false;
    for (const c of p.contradictions) {
      const evidence = c.evidence.slice(0, 2000);
      if (this.o.store.withdrawClaim(session.info.server, c.tool, evidence)) {
        changed = true;
        this.o.record('read-only-claim-withdrawn', session.info.server, c.tool, { evidence, client: session.info.client });
      }
    }
    return changed;
  }

  /** structuredContent from a live call: a mismatch with the declared output schema is journaled, never blocked. */
  structured(session: Session, params: unknown): void {
    if (!this.outputSchemaCheck || !isObject(params) || typeof params.tool !== 'string') return;
    const schema = session.outputSchemas.get(params.tool);
    if (schema === undefined) return;
    const tool = params.tool;
    const found = (result: SchemaCheckResult) => {
      if (!result.ok) this.o.record('output-schema-mismatch', session.info.server, tool, { errors: result.errors.slice(0, 20), client: session.info.client });
    };
    const result = this.outputSchemaCheck(schema, params.structuredContent);
    if (!(result instanceof Promise)) return found(result);
    result.then(found, (err: unknown) => found({ ok: false, errors: [`the output schema could not be checked: ${err instanceof Error ? err.message : String(err)}`] }));
  }
}

/** Each reported tool's output schema, by name. */
function outputSchemasOf(reported: readonly unknown[]): Map<string, unknown> {
  const schemas = new Map<string, unknown>();
  for (const v of reported) if (isObject(v) && typeof v.name === 'string' && v.outputSchema !== undefined) schemas.set(v.name, v.outputSchema);
  return schemas;
}
