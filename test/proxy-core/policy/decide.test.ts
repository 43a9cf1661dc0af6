import { describe, expect, test } from 'vitest';
import type { ToolClass } from '../../../proxy-core/src/classify/classify.js';
import { decide, type PolicySnapshot } from '../../../proxy-core/src/policy/decide.js';
import { globMatch } from '../../../proxy-core/src/policy/glob.js';
import { policySnapshot, ruleFor } from '../../helpers/policy.js';

const policy = policySnapshot;
const rule = ruleFor;
const call = (toolClass: ToolClass, tool = 'write', client = 'cursor') => ({ server: 'fs', client, tool, toolClass });

describe('decide', () => {
  test.each<[string, ToolClass, Partial<PolicySnapshot>, string, string]>([
    ['trusted read-only runs', 'read-only-trusted', {}, 'allow', 'class'],
    ['unchecked read-only asks', 'read-only-unchecked', {}, 'ask', 'class'],
    ['mutating asks', 'mutating', {}, 'ask', 'class'],
    ['destructive asks', 'destructive', {}, 'ask', 'class'],
    ['unclassifiable asks', 'unclassifiable', {}, 'ask', 'class'],
    ['E-Stop beats everything', 'read-only-trusted', { estop: true, rules: [rule('allow', '*')] }, 'deny', 'estop'],
    ['allow rule', 'destructive', { rules: [rule('allow', 'wr*')] }, 'allow', 'rule'],
    ['deny beats allow', 'destructive', { rules: [rule('allow', '*'), rule('deny', 'write')] }, 'deny', 'rule'],
    ['deny beats allow whatever the order', 'destructive', { rules: [rule('deny', 'write'), rule('allow', '*')] }, 'deny', 'rule'],
    ['ask rule beats allow', 'read-only-trusted', { rules: [rule('allow', '*'), rule('ask', 'write')] }, 'ask', 'rule'],
    ['ask rule beats a session approval', 'mutating', { rules: [rule('ask', 'write')], sessionAllows: ['write'] }, 'ask', 'rule'],
    ['deny rule beats trusted read-only', 'read-only-trusted', { rules: [rule('deny', '*')] }, 'deny', 'rule'],
    ['session approval', 'destructive', { sessionAllows: ['write'] }, 'allow', 'session'],
    ['session approval of another tool', 'destructive', { sessionAllows: ['read'] }, 'ask', 'class'],
    ['rule for another client does not apply', 'destructive', { rules: [rule('allow', '*', { client: 'zed' })] }, 'ask', 'class'],
    ['rule for this client applies', 'destructive', { rules: [rule('allow', '*', { client: 'cur*' })] }, 'allow', 'rule'],
    ['rule for another server does not apply', 'destructive', { rules: [rule('allow', '*', { server: 'mail' })] }, 'ask', 'class'],
  ])('%s', (_label, toolClass, over, action, by) => {
    const d = decide(call(toolClass), policy(over));
    expect(d.action).toBe(action);
    expect(d.decidedBy).toBe(by);
  });
});

describe('globMatch', () => {
  test.each([
    ['*', 'anything', true],
    ['write_*', 'write_file', true],
    ['write_*', 'rewrite_file', false],
    ['?at', 'cat', true],
    ['?at', 'at', false],
    ['a.b', 'axb', false],
    ['a.b', 'a.b', true],
    ['files (x)', 'files (x)', true],
    ['[abc]', 'a', false],
    ['mcp-server-*', 'mcp-server-github', true],
  ])('%s vs %s', (glob, value, expected) => {
    expect(globMatch(glob, value)).toBe(expected);
  });
});
