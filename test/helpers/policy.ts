/** Policies and rules as the broker pushes them to a wrapper, for tests of the policy stage. */
import type { PolicySnapshot } from '../../proxy-core/src/policy/decide.js';
import type { Rule } from '../../proxy-core/src/policy/rules.js';

/** Nothing allowed, nothing trusted, no E-Stop; then what the test sets. */
export const policySnapshot = (over: Partial<PolicySnapshot> = {}): PolicySnapshot => ({
  version: 1,
  estop: false,
  rules: [],
  sessionAllows: [],
  trustReadOnlyHints: false,
  withdrawn: {},
  ...over,
});

/** A rule for every server, on `tool`; the rest as given. */
export const ruleFor = (action: Rule['action'], tool = '*', extra: Partial<Rule> = {}): Rule => ({ id: `r-${action}-${tool}`, action, server: '*', tool, createdAt: 0, ...extra });
