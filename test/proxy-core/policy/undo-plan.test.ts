import { describe, expect, test } from 'vitest';
import type { ToolClass } from '../../../proxy-core/src/classify/classify.js';
import { decide, describeRule, type PolicySnapshot } from '../../../proxy-core/src/policy/decide.js';
import { ruleMatches, type Rule } from '../../../proxy-core/src/policy/rules.js';
import { namesAbsolutePath, plannedUndo } from '../../../proxy-core/src/policy/undo-plan.js';
import { policySnapshot, ruleFor } from '../../helpers/policy.js';

const policy = (over: Partial<PolicySnapshot> = {}): PolicySnapshot =>
  policySnapshot({ fileTools: { write_file: ['path'], move_file: ['source', 'destination'] }, inverseTools: ['create_entities'], ...over });
const rule = (action: Rule['action'], extra: Partial<Rule> = {}): Rule => ruleFor(action, '*', extra);
const call = (tool: string, args: Record<string, unknown>, toolClass: ToolClass = 'mutating') => ({ server: 'fs', client: 'cursor', tool, toolClass, args });

describe('plannedUndo: will the call be undoable?', () => {
  const abs = (v: string) => namesAbsolutePath(v, 'linux');
  test.each<[string, { pathArgs?: string[]; inverse: boolean }, Record<string, unknown>, ReturnType<typeof plannedUndo>]>([
    ['a file tool with an absolute path', { pathArgs: ['path'], inverse: false }, { path: '/home/me/a.md' }, 'snapshot'],
    ['a file tool with a path under ~', { pathArgs: ['path'], inverse: false }, { path: '~/a.md' }, 'snapshot'],
    ['a relative path: the server resolves it, Airlock cannot know where', { pathArgs: ['path'], inverse: false }, { path: 'a.md' }, null],
    ['a missing path argument', { pathArgs: ['path'], inverse: false }, {}, null],
    ['a path that is not a string', { pathArgs: ['path'], inverse: false }, { path: ['/a'] }, null],
    ['an empty path', { pathArgs: ['path'], inverse: false }, { path: '' }, null],
    ['two paths, one relative', { pathArgs: ['source', 'destination'], inverse: false }, { source: '/a', destination: 'b' }, null],
    ['two absolute paths', { pathArgs: ['source', 'destination'], inverse: false }, { source: '/a', destination: '/b' }, 'snapshot'],
    ['an inherited name is not an argument', { pathArgs: ['constructor'], inverse: false }, {}, null],
    ['a declared inverse', { inverse: true }, { anything: 1 }, 'inverse'],
    ['neither', { inverse: false }, { path: '/a' }, null],
  ])('%s', (_label, means, args, expected) => {
    expect(plannedUndo({ pathArgs: means.pathArgs, inverse: means.inverse }, args, abs)).toBe(expected);
  });

  test('Windows paths are judged by Windows rules', () => {
    expect(namesAbsolutePath('C:\\Users\\me\\a.md', 'win32')).toBe(true);
    expect(namesAbsolutePath('~\\a.md', 'win32')).toBe(true);
    expect(namesAbsolutePath('~\\a.md', 'linux')).toBe(false);
    expect(namesAbsolutePath('C:\\a', 'linux')).toBe(false);
  });
});

describe('rules on whether a call can be undone', () => {
  const askIrreversible = rule('ask', { undoable: false });
  const allowUndoable = rule('allow', { undoable: true });
  const allowAll = rule('allow', { id: 'r-all' });
  test.each<[string, Rule[], ReturnType<typeof call>, Partial<PolicySnapshot>, string, string]>([
    ['an allow for undoable calls runs a snapshotted write', [allowUndoable], call('write_file', { path: '/n/a.md' }), {}, 'allow', 'rule'],
    ['... and asks for a write Airlock cannot snapshot (relative path)', [allowUndoable], call('write_file', { path: 'a.md' }), {}, 'ask', 'class'],
    ['... runs a call with a declared inverse', [allowUndoable], call('create_entities', {}), {}, 'allow', 'rule'],
    ['... asks for a tool with no way back', [allowUndoable], call('send_mail', { to: 'x' }), {}, 'ask', 'class'],
    ['an ask for irreversible calls beats an allow for everything', [allowAll, askIrreversible], call('send_mail', {}), {}, 'ask', 'rule'],
    ['... but not for a call that can be undone', [allowAll, askIrreversible], call('write_file', { path: '/n/a.md' }), {}, 'allow', 'rule'],
    ['... and beats a session approval', [askIrreversible], call('send_mail', {}), { sessionAllows: ['send_mail'] }, 'ask', 'rule'],
    ['... and never touches a trusted read-only call (nothing to undo)', [askIrreversible], call('read_file', { path: 'x' }, 'read-only-trusted'), {}, 'allow', 'class'],
    ['... yet an unchecked read-only claim is not believed', [allowAll, askIrreversible], call('search', {}, 'read-only-unchecked'), {}, 'ask', 'rule'],
    ['a deny for irreversible calls', [allowAll, rule('deny', { undoable: false })], call('drop_table', {}, 'destructive'), {}, 'deny', 'rule'],
    ['an inverse declared only in another session does not count', [allowUndoable], call('create_entities', {}), { inverseTools: [] }, 'ask', 'class'],
    ['a policy without file tools: nothing is snapshotted', [allowUndoable], call('write_file', { path: '/n/a.md' }), { fileTools: undefined }, 'ask', 'class'],
  ])('%s', (_label, rules, c, over, action, by) => {
    const d = decide(c, policy({ rules, ...over }), { platform: 'linux', home: '/home/me', realpath: (p) => p });
    expect(d.action).toBe(action);
    expect(d.decidedBy).toBe(by);
  });

  test('judging a tool rather than a call: an allow needs proof, a deny or an ask applies', () => {
    const tool = { server: 'fs', client: 'cursor', tool: 'write_file', toolClass: 'mutating' as ToolClass };
    expect(ruleMatches(allowUndoable, tool)).toBe(false);
    expect(ruleMatches(askIrreversible, tool)).toBe(true);
    expect(ruleMatches(rule('deny', { undoable: true }), tool)).toBe(true);
    expect(ruleMatches(askIrreversible, { ...tool, toolClass: 'read-only-trusted' })).toBe(false);
  });

  test('a condition that is not a boolean (a broken push) never lets an allow apply', () => {
    const broken = { ...allowUndoable, undoable: 'yes' as unknown as boolean };
    expect(ruleMatches(broken, { ...call('write_file', { path: '/n/a.md' }), undo: 'snapshot' })).toBe(false);
    expect(ruleMatches({ ...broken, action: 'ask' }, { ...call('write_file', { path: '/n/a.md' }), undo: 'snapshot' })).toBe(true);
  });

  test('described in words', () => {
    expect(describeRule(askIrreversible)).toBe('ask server=* tool=* when it cannot be undone');
    expect(describeRule({ ...allowUndoable, args: [{ arg: 'path', kind: 'path', glob: '/n/**' }] })).toMatch(/when path .* and it can be undone$/);
  });
});
