/**
 * The ExecutionPolicy: which tools `airlock inspect` (and the desktop app's "test this tool") may invoke. Not
 * the broker's policy (policy/decide.ts), which decides live calls; this one decides what a check-up runs.
 * Pure: a tool's verdict from the shared classifier goes in, run-or-skip with a reason comes out.
 *
 * Default is read-only only, because a probe with generated arguments is still a real call, and a server is
 * routinely pointed at production data. The spec makes a tool without annotations destructive, so such a tool
 * never runs unless the operator opts in to everything.
 */
import type { Verdict } from '../classify/classify.js';

export interface ExecutionPolicyOptions {
  /** Also run tools that declare destructiveHint: false (they change things, but only additively). */
  allowMutations?: boolean;
  /** Run everything, destructive tools included: meant for the operator's own test tenant. */
  allowDestructive?: boolean;
  /** Run only these tools (still subject to the rest of the policy). */
  only?: readonly string[];
  /** Never run these tools. */
  deny?: readonly string[];
}

export type ExecutionDecision = { run: true; basis: string } | { run: false; reason: string };

export const NO_ANNOTATIONS_REASON = 'no annotations: destructive by spec default';

export class ExecutionPolicy {
  readonly allowMutations: boolean;
  readonly allowDestructive: boolean;
  readonly only: ReadonlySet<string> | undefined;
  readonly deny: ReadonlySet<string>;

  constructor(options: ExecutionPolicyOptions = {}) {
    this.allowDestructive = options.allowDestructive === true;
    // Everything includes the mutations.
    this.allowMutations = options.allowMutations === true || this.allowDestructive;
    this.only = options.only !== undefined && options.only.length > 0 ? new Set(options.only) : undefined;
    this.deny = new Set(options.deny ?? []);
  }

  /** Whether a tool may be invoked, and why (or why not). */
  decide(verdict: Verdict): ExecutionDecision {
    const name = verdict.name;
    if (name === '') return { run: false, reason: 'tool has no usable name, so it cannot be called' };
    if (this.deny.has(name)) return { run: false, reason: 'excluded by --deny' };
    if (this.only !== undefined && !this.only.has(name)) return { run: false, reason: 'not listed in --only' };

    switch (verdict.class) {
      case 'read-only-trusted':
      case 'read-only-unchecked':
        return { run: true, basis: 'declares readOnlyHint: true' };
      case 'mutating':
        if (this.allowMutations) return { run: true, basis: 'declares destructiveHint: false; allowed by --allow-mutations' };
        return { run: false, reason: 'mutating (declares destructiveHint: false): opt in with --allow-mutations' };
      case 'destructive':
        if (this.allowDestructive) return { run: true, basis: 'allowed by --allow-destructive' };
        if (verdict.declared === undefined) return { run: false, reason: NO_ANNOTATIONS_REASON };
        return { run: false, reason: `destructive (${verdict.reasons.join('; ')}): opt in with --allow-destructive` };
      case 'unclassifiable':
        if (this.allowDestructive) return { run: true, basis: 'allowed by --allow-destructive although unclassifiable' };
        return { run: false, reason: `unclassifiable (${verdict.reasons.join('; ')}): opt in with --allow-destructive` };
    }
  }

  /** Names given to --only or --deny that the catalog does not have (probably typos). */
  unknownNames(toolNames: Iterable<string>): string[] {
    const known = new Set(toolNames);
    return [...new Set([...(this.only ?? []), ...this.deny])].filter((n) => !known.has(n));
  }

  /** One line saying what this policy runs, for the report header. */
  describe(): string {
    const base = this.allowDestructive
      ? 'all tools, destructive ones included (--allow-destructive: use against your own test tenant only)'
      : this.allowMutations
        ? 'read-only tools and tools that declare destructiveHint: false (--allow-mutations)'
        : 'read-only tools only (default: tools that declare readOnlyHint: true)';
    const narrowed = [
      this.only !== undefined ? `only ${[...this.only].join(', ')}` : '',
      this.deny.size > 0 ? `never ${[...this.deny].join(', ')}` : '',
    ].filter((s) => s !== '');
    return narrowed.length > 0 ? `${base}; ${narrowed.join('; ')}` : base;
  }
}
