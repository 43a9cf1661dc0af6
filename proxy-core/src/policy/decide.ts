/**
 * The policy stage: given a classified call and the policy the broker pushed, allow, deny or ask.
 * Pure and synchronous so the wrapper can decide an allowed call in the same tick it read it.
 */
import type { z } from 'zod';
import type { ToolClass } from '../classify/classify.js';
import type { DecidedBySchema, PolicySnapshotSchema } from '../protocol/api.js';
import { describeCondition, type MatchEnv } from './arg-conditions.js';
import { inForce, type Rule, ruleMatches } from './rules.js';
import { grantReason } from './grants.js';
import { namesAbsolutePath, plannedUndo, type UndoPlan } from './undo-plan.js';

/**
 * What the broker pushes to each wrapper (versioned, so the broker can wait for every wrapper to apply it):
 * E-Stop, the rules that can match this session, the tools approved for this session, the user's trust in
 * the server's read-only hints, read-only claims withdrawn on evidence (tool -> evidence), and the pinned
 * definition of each tool of the server (tool -> fingerprint).
 */
export type PolicySnapshot = z.output<typeof PolicySnapshotSchema>;

export type DecidedBy = z.output<typeof DecidedBySchema>;

export interface PolicyDecision {
  action: 'allow' | 'deny' | 'ask';
  decidedBy: DecidedBy;
  ruleId?: string;
  /**
   * With `ask`: a counted grant matched the call. Its calls are spent through the broker (one thread, one
   * store), so the wrapper asks it to spend one: answered at once, allowed, or held when none is left.
   */
  grant?: string;
  reason: string;
}

export interface CallContext {
  server: string;
  client: string;
  tool: string;
  toolClass: ToolClass;
  /** The call's arguments, for rules with argument conditions; absent when judging a tool, not a call. */
  args?: Record<string, unknown>;
  /** The tool's definition as listed now (absent: the listing did not show it, and it is unclassifiable). */
  definition?: DefinitionState;
}

/** Fingerprints of a tool's definition, computed once per listing (classify/definition.ts). */
export interface DefinitionState {
  /** The definition in the wrapper's last listing. */
  fingerprint: string;
  /** The first one this wrapper saw: the tool's pin until the broker's pins name it. */
  firstSeen: string;
}

/**
 * Has the tool's definition changed since it was pinned? The broker's pin when the policy has one for it, the
 * first definition this wrapper saw otherwise; pins the wrapper could not read (null) hold every tool.
 */
export function definitionChanged(tool: string, definition: DefinitionState | undefined, policy: PolicySnapshot): boolean {
  if (definition === undefined) return false;
  const pins = policy.pins;
  if (pins === null) return true;
  const pinned = pins !== undefined && Object.hasOwn(pins, tool) ? pins[tool] : definition.firstSeen;
  return pinned !== definition.fingerprint;
}

const STRICTNESS: Record<Rule['action'], number> = { deny: 3, ask: 2, allow: 1 };

/** `now`: the wrapper's clock (ms), which ends a grant at its instant in the same tick as any call. */
export function decide(call: CallContext, policy: PolicySnapshot, env?: MatchEnv, now: number = Date.now()): PolicyDecision {
  if (policy.estop) return { action: 'deny', decidedBy: 'estop', reason: 'E-Stop is on: every tool call is refused' };
  if (policy.journalDown) return { action: 'deny', decidedBy: 'error', reason: policy.journalDown };
  // how the call would be undone, worked out only when a rule asks
  const subject = call.args !== undefined && policy.rules.some((r) => r.undoable !== undefined) ? { ...call, undo: undoPlanOf(call.tool, call.args, policy, env) } : call;
  let rule: Rule | undefined;
  for (const r of policy.rules) {
    if (!inForce(r, now) || !ruleMatches(r, subject, env)) continue;
    // of two allows, one that spends nothing is taken over a counted grant
    if (!rule || STRICTNESS[r.action] > STRICTNESS[rule.action] || (r.action === 'allow' && rule.action === 'allow' && rule.calls !== undefined && r.calls === undefined)) rule = r;
  }
  if (rule?.action === 'deny') {
    return { action: 'deny', decidedBy: 'rule', ruleId: rule.id, reason: ruleReason(rule) };
  }
  // a changed definition (a rug pull) asks whatever would let the tool run: a rule, a session approval, trust
  if (definitionChanged(call.tool, call.definition, policy)) {
    return {
      action: 'ask',
      decidedBy: 'class',
      reason: `the definition of "${call.tool}" changed since it was pinned; every call asks until you accept it (airlock pins accept ${shellWord(call.server)} ${shellWord(call.tool)})`,
    };
  }
  if (rule?.action === 'ask') {
    return { action: 'ask', decidedBy: 'rule', ruleId: rule.id, reason: ruleReason(rule) };
  }
  if (rule?.action === 'allow') {
    if (rule.calls !== undefined) return { action: 'ask', decidedBy: 'rule', ruleId: rule.id, grant: rule.id, reason: grantReason(rule, now) };
    if (rule.expiresAt !== undefined) return { action: 'allow', decidedBy: 'rule', ruleId: rule.id, reason: grantReason(rule, now) };
    return { action: 'allow', decidedBy: 'rule', ruleId: rule.id, reason: ruleReason(rule) };
  }
  if (policy.sessionAllows.includes(call.tool)) {
    return { action: 'allow', decidedBy: 'session', reason: 'approved for this session' };
  }
  if (call.toolClass === 'read-only-trusted') {
    return { action: 'allow', decidedBy: 'class', reason: 'read-only, and you trust this server\'s read-only hints' };
  }
  return { action: 'ask', decidedBy: 'class', reason: `${call.toolClass}: needs your approval` };
}

/** What a matching rule says of a call, once per rule object (a policy push brings new ones): not per call. */
const RULE_REASONS = new WeakMap<Rule, string>();
function ruleReason(rule: Rule): string {
  let reason = RULE_REASONS.get(rule);
  if (reason === undefined) {
    const words = describeRule(rule);
    reason = rule.action === 'deny' ? `denied by rule ${rule.id} (${words})` : rule.action === 'ask' ? `rule ${rule.id} asks (${words})` : `allowed by rule ${rule.id} (${words})`;
    // a team policy's rule says whose it is, and why (the file's note)
    if (rule.managed && rule.note) reason += `: ${rule.note}`;
    RULE_REASONS.set(rule, reason);
  }
  return reason;
}

/**
 * The wrapper's reading of the pins a policy push carries (it loads no schema library): absent is none known
 * (the first definition the wrapper sees stands in), anything but an object is unreadable (null: every tool
 * held). The object is kept as it came: a push can carry 10,000 pins, and copying them cost a wrapper some 10 ms
 * on every push. A pin is read only through `Object.hasOwn` and compared with `!==` to a fingerprint (a string),
 * so a pin that is not a string never matches a definition (that tool is held), and an inherited name is no pin.
 */
export function readPins(value: unknown): Record<string, string> | null | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  return value as Record<string, string>;
}

/** How a call would be undone, from what the policy says of the tool (its files snapshotted, an inverse declared). */
function undoPlanOf(tool: string, args: Record<string, unknown>, policy: PolicySnapshot, env: MatchEnv | undefined): UndoPlan {
  const fileTools = policy.fileTools;
  const pathArgs = fileTools && Object.hasOwn(fileTools, tool) ? fileTools[tool] : undefined;
  const inverse = policy.inverseTools?.includes(tool) ?? false;
  return plannedUndo({ pathArgs, inverse }, args, (v) => namesAbsolutePath(v, env?.platform));
}

/** A name as it can be typed in a shell. */
function shellWord(s: string): string {
  return /^[\w.:@/+=-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

export function describeRule(rule: Rule): string {
  const who = rule.client === undefined ? '' : ` client=${rule.client}`;
  const conditions = describeConditions(rule);
  return `${rule.action} server=${rule.server} tool=${rule.tool}${who}${conditions ? ` when ${conditions}` : ''}`;
}

/** A rule's conditions in words, joined by "and" (empty when it has none): on its arguments, then on undo. */
export function describeConditions(rule: Pick<Rule, 'args' | 'undoable'>): string {
  const undo = rule.undoable === undefined ? [] : [rule.undoable ? 'it can be undone' : 'it cannot be undone'];
  return [...(rule.args ?? []).map(describeCondition), ...undo].join(' and ');
}
