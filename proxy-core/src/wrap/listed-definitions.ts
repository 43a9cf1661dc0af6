/**
 * Each tool's definition in the wrapper's last listing, and the first one this wrapper saw of it (its pin until
 * the broker's pins name it): what the policy compares with the pin (policy/decide.ts) and what the broker is
 * told, to pin and to show.
 *
 * A definition is kept by the exact JSON text of the entries listed under its name, and fingerprinted when it
 * is first asked for (a call to the tool, the policy's look at it, the report to the broker), once: a listing
 * that repeats an unchanged tool reuses what was worked out, and one that changes anything in it (a word deep
 * in a schema) is another text, so another definition. Its texts for display are written out only for a
 * definition the broker has not pinned as it is (verdicts.ts), once.
 */
import { definitionHashes, type ToolDefinition, toolDefinition } from '../classify/definition.js';
import type { DefinitionState } from '../policy/decide.js';

/** Names whose first sight is remembered (bounds memory against a server that invents names on every listing). */
const MAX_FIRST_SEEN = 50_000;

/** One definition of one tool: the entries listed under its name, fingerprinted on demand. */
class Listed {
  private hashes: ToolDefinition | undefined;
  private full: ToolDefinition | undefined;

  constructor(
    readonly name: string,
    /** The entries, until only the fingerprint is needed any more (`settle`). */
    private entries: readonly Record<string, unknown>[],
    /** The JSON text of the entries (one per line). */
    public key: string,
  ) {}

  /**
   * No longer listed, but still the first definition seen of its tool: its fingerprint is all that is asked of
   * it from now on, so it is worked out and the entries let go (a server that renames or rewords its tools does
   * not make the wrapper hold every version of them).
   */
  settle(): void {
    this.withHashes();
    this.full = undefined;
    this.entries = [];
    this.key = '';
  }

  get fingerprint(): string {
    return this.withHashes().fingerprint;
  }

  /** The definition by its hashes only (each part's text empty, marked cut). */
  withHashes(): ToolDefinition {
    return (this.hashes ??= this.full ? hashesOf(this.full) : definitionHashes(this.name, this.entries));
  }

  /** The definition with its texts for display. */
  withTexts(): ToolDefinition {
    if (!this.full) {
      this.full = toolDefinition(this.name, this.entries);
      // the same hashes either way; kept as one object so the broker is told the same definition
      this.hashes ??= hashesOf(this.full);
    }
    return this.full;
  }
}

function hashesOf(d: ToolDefinition): ToolDefinition {
  const parts: ToolDefinition['parts'] = {};
  for (const [part, p] of Object.entries(d.parts) as [keyof ToolDefinition['parts'], NonNullable<ToolDefinition['parts'][keyof ToolDefinition['parts']]>][]) {
    parts[part] = { sha256: p.sha256, text: '', cut: true };
  }
  return { fingerprint: d.fingerprint, parts };
}

interface Current {
  listed: Listed;
  /** The first definition seen of the tool (this one, unless it changed in this wrapper's life). */
  first: Listed;
  state?: DefinitionState;
}

export class ListedDefinitions {
  private current = new Map<string, Current>();
  private readonly firstSeen = new Map<string, Listed>();

  /** A complete listing: the entries under each name, with their JSON texts. */
  take(byName: ReadonlyMap<string, { entries: Record<string, unknown>[]; texts: string[] }>): void {
    const previous = this.current;
    this.current = new Map();
    for (const [name, { entries, texts }] of byName) {
      const key = texts.length === 1 ? texts[0]! : texts.join('\n');
      const before = previous.get(name);
      const listed = before?.listed.key === key ? before.listed : new Listed(name, entries, key);
      if (!this.firstSeen.has(name) && this.firstSeen.size < MAX_FIRST_SEEN) this.firstSeen.set(name, listed);
      // a name past the memory bound has no first sight of its own: this definition stands in
      const first = this.firstSeen.get(name) ?? listed;
      this.current.set(name, before?.listed === listed && before.first === first ? before : { listed, first });
    }
    for (const [name, before] of previous) {
      if (this.current.get(name)?.listed !== before.listed && this.firstSeen.get(name) === before.listed) before.listed.settle();
    }
  }

  /** The listing failed: no tool has a definition now (first sights stay). */
  clear(): void {
    for (const [name, c] of this.current) if (this.firstSeen.get(name) === c.listed) c.listed.settle();
    this.current = new Map();
  }

  /** A tool's definition in the last listing and the first one seen (what the policy compares with its pin). */
  state(name: string): DefinitionState | undefined {
    const c = this.current.get(name);
    if (!c) return undefined;
    return (c.state ??= { fingerprint: c.listed.fingerprint, firstSeen: c.first.fingerprint });
  }

  /** Every tool's definition in the last listing, by name (listing order). */
  names(): IterableIterator<string> {
    return this.current.keys();
  }

  /** One tool's definition: with its texts, or by its hashes only. */
  definition(name: string, withTexts: boolean): ToolDefinition | undefined {
    const c = this.current.get(name);
    if (!c) return undefined;
    return withTexts ? c.listed.withTexts() : c.listed.withHashes();
  }

  /** One tool's fingerprint in the last listing. */
  fingerprint(name: string): string | undefined {
    return this.current.get(name)?.listed.fingerprint;
  }
}
