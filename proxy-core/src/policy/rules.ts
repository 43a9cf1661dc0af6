/**
 * Persisted user rules: allow, deny or ask, by server and tool glob, optionally by client, by conditions on the
 * call's arguments, and by whether the call can be undone.
 */
import type { ToolClass } from '../classify/classify.js';
import type { Rule, RuleAction } from '../protocol/api.js';
import { conditionsMatch, type MatchEnv } from './arg-conditions.js';
import { globMatch } from './glob.js';
import type { UndoPlan } from './undo-plan.js';

export type { Rule, RuleAction };

/**
 * Does a rule apply to a call? `args` undefined judges the tool rather than one call: a rule with argument
 * conditions then applies only if it denies or asks (see arg-conditions.ts).
 */
export function ruleMatches(rule: Rule, call: RuleSubject, env?: MatchEnv): boolean {
  return (
    globMatch(rule.server, call.server) &&
    globMatch(rule.tool, call.tool) &&
    (rule.client === undefined || globMatch(rule.client, call.client)) &&
    (rule.args === undefined || conditionsMatch(rule.args, call.args, rule.action, env)) &&
    (rule.undoable === undefined || undoMatches(rule, call))
  );
}

/** What a rule is matched against: a call, or a tool when `args` and `undo` are absent. */
export interface RuleSubject {
  server: string;
  tool: string;
  client: string;
  args?: Record<string, unknown>;
  toolClass?: ToolClass;
  /** How the call would be undone (policy/undo-plan.ts); undefined when judging a tool, not a call. */
  undo?: UndoPlan;
}

/**
 * A rule on whether a call can be undone. A call that changes nothing (read-only, and its hints trusted) has
 * nothing to undo, so a rule on irreversible calls never applies to it. Judging a tool rather than a call, and
 * for a condition that cannot be read, the same asymmetry as argument conditions: an allow needs proof, a deny
 * or an ask applies.
 */
function undoMatches(rule: Rule, call: RuleSubject): boolean {
  if (rule.undoable === false && call.toolClass === 'read-only-trusted') return false;
  if (call.undo === undefined || typeof rule.undoable !== 'boolean') return rule.action !== 'allow';
  return rule.undoable ? call.undo !== null : call.undo === null;
}

/** Rules that can ever apply to one wrapper session: what the broker pushes to it. */
export function rulesForSession(rules: readonly Rule[], server: string, client: string): Rule[] {
  return rules.filter((r) => globMatch(r.server, server) && (r.client === undefined || globMatch(r.client, client)));
}

/**
 * Whether a rule applies at `now` (ms): a grant only before its end and while it has calls left. A grant's end or
 * count that is not a number (a malformed push) is never in force: a grant that could not end is not applied.
 */
export function inForce(rule: Rule, now: number): boolean {
  const { expiresAt, calls } = rule as { expiresAt?: unknown; calls?: unknown };
  if (expiresAt !== undefined && !(typeof expiresAt === 'number' && now < expiresAt)) return false;
  return calls === undefined || (typeof calls === 'number' && calls > 0);
}

/** Whether a rule is a grant: it ends by itself, at an instant or after a number of calls. */
export function isGrant(rule: Rule): boolean {
  return rule.expiresAt !== undefined || rule.calls !== undefined;
}
