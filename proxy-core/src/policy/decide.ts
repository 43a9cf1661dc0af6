/**
 * The policy stage: given a classified call and the policy the broker pushed, allow, deny or ask.
 * Pure and synchronous so the wrapper can decide an allowed call in the same tick it read it.
 */
import type { z } from 'zod';
import type { ToolClass } from '../classify/classify.js';
import type { DecidedBySchema, PolicySnapshotSchema } from '../protocol/api.js';
import { describeCondition, type MatchEnv } from './arg-conditions.js';
import { type Rule, ruleMatches } from './rules.js';

/**
 * What the broker pushes to each wrapper (versioned, so the broker can wait for every wrapper to apply it):
 * E-Stop, the rules that can match this session, the tools approved for this session, the user's trust in
 * the server's read-only hints, and read-only claims withdrawn on evidence (tool -> evidence).
 */
export type PolicySnapshot = z.output<typeof PolicySnapshotSchema>;

export type DecidedBy = z.output<typeof DecidedBySchema>;

export interface PolicyDecision {
  action: 'allow' | 'deny' | 'ask';
  decidedBy: DecidedBy;
  ruleId?: string;
  reason: string;
}

export interface CallContext {
  server: string;
  client: string;
  tool: string;
  toolClass: ToolClass;
  /** The call's arguments, for rules with argument conditions; absent when judging a tool, not a call. */
  args?: Record<string, unknown>;
}

const STRICTNESS: Record<Rule['action'], number> = { deny: 3, ask: 2, allow: 1 };

export function decide(call: CallContext, policy: PolicySnapshot, env?: MatchEnv): PolicyDecision {
  if (policy.estop) return { action: 'deny', decidedBy: 'estop', reason: 'E-Stop is on: every tool call is refused' };
  let rule: Rule | undefined;
  for (const r of policy.rules) {
    if (ruleMatches(r, call, env) && (!rule || STRICTNESS[r.action] > STRICTNESS[rule.action])) rule = r;
  }
  if (rule?.action === 'deny') {
    return { action: 'deny', decidedBy: 'rule', ruleId: rule.id, reason: `denied by rule ${rule.id} (${describeRule(rule)})` };
  }
  if (rule?.action === 'ask') {
    return { action: 'ask', decidedBy: 'rule', ruleId: rule.id, reason: `rule ${rule.id} asks (${describeRule(rule)})` };
  }
  if (rule?.action === 'allow') {
    return { action: 'allow', decidedBy: 'rule', ruleId: rule.id, reason: `allowed by rule ${rule.id} (${describeRule(rule)})` };
  }
  if (policy.sessionAllows.includes(call.tool)) {
    return { action: 'allow', decidedBy: 'session', reason: 'approved for this session' };
  }
  if (call.toolClass === 'read-only-trusted') {
    return { action: 'allow', decidedBy: 'class', reason: 'read-only, and you trust this server\'s read-only hints' };
  }
  return { action: 'ask', decidedBy: 'class', reason: `${call.toolClass}: needs your approval` };
}

export function describeRule(rule: Rule): string {
  const who = rule.client === undefined ? '' : ` client=${rule.client}`;
  const when = rule.args?.length ? ` when ${rule.args.map(describeCondition).join(' and ')}` : '';
  return `${rule.action} server=${rule.server} tool=${rule.tool}${who}${when}`;
}
