/** Persisted user rules: allow, deny or ask, by server and tool glob, optionally by client. */
import type { Rule, RuleAction } from '../protocol/api.js';
import { conditionsMatch, type MatchEnv } from './arg-conditions.js';
import { globMatch } from './glob.js';

export type { Rule, RuleAction };

/**
 * Does a rule apply to a call? `args` undefined judges the tool rather than one call: a rule with argument
 * conditions then applies only if it denies or asks (see arg-conditions.ts).
 */
export function ruleMatches(rule: Rule, call: { server: string; tool: string; client: string; args?: Record<string, unknown> }, env?: MatchEnv): boolean {
  return (
    globMatch(rule.server, call.server) &&
    globMatch(rule.tool, call.tool) &&
    (rule.client === undefined || globMatch(rule.client, call.client)) &&
    (rule.args === undefined || conditionsMatch(rule.args, call.args, rule.action, env))
  );
}

/** Rules that can ever apply to one wrapper session: what the broker pushes to it. */
export function rulesForSession(rules: readonly Rule[], server: string, client: string): Rule[] {
  return rules.filter((r) => globMatch(r.server, server) && (r.client === undefined || globMatch(r.client, client)));
}
