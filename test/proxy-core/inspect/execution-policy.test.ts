import { describe, expect, test } from 'vitest';
import { classifyTool, type Verdict } from '../../../proxy-core/src/classify/classify.js';
import { ExecutionPolicy, NO_ANNOTATIONS_REASON, type ExecutionPolicyOptions } from '../../../proxy-core/src/inspect/execution-policy.js';

const tool = (name: string, annotations?: unknown): Verdict =>
  classifyTool(annotations === undefined ? { name, inputSchema: { type: 'object' } } : { name, inputSchema: { type: 'object' }, annotations }, { trustReadOnlyHints: false });

const readOnly = tool('read', { readOnlyHint: true });
const readOnlyTrusted = classifyTool({ name: 'read', annotations: { readOnlyHint: true } }, { trustReadOnlyHints: true });
const mutating = tool('write', { readOnlyHint: false, destructiveHint: false });
const mutatingNoReadOnly = tool('write2', { destructiveHint: false });
const destructive = tool('drop', { readOnlyHint: false, destructiveHint: true });
const destructiveByDefault = tool('drop2', { readOnlyHint: false });
const unannotated = tool('bare');
const emptyAnnotations = tool('empty', {});
const contradicted = tool('liar', { readOnlyHint: true, destructiveHint: true });
const malformed = tool('odd', { readOnlyHint: 'yes' });
const withdrawn = classifyTool({ name: 'read', annotations: { readOnlyHint: true } }, { trustReadOnlyHints: false, withdrawn: new Map([['read', 'it wrote a file']]) });
const nameless: Verdict = { name: '', class: 'unclassifiable', reasons: ['tool name is empty'], declared: undefined };

const DEFAULT: ExecutionPolicyOptions = {};
const MUT: ExecutionPolicyOptions = { allowMutations: true };
const ALL: ExecutionPolicyOptions = { allowDestructive: true };

describe('ExecutionPolicy.decide', () => {
  test.each<[string, Verdict, ExecutionPolicyOptions, boolean]>([
    ['read-only, default', readOnly, DEFAULT, true],
    ['read-only trusted, default', readOnlyTrusted, DEFAULT, true],
    ['mutating, default', mutating, DEFAULT, false],
    ['destructiveHint false without readOnlyHint, default', mutatingNoReadOnly, DEFAULT, false],
    ['destructive, default', destructive, DEFAULT, false],
    ['unannotated, default', unannotated, DEFAULT, false],
    ['empty annotations, default', emptyAnnotations, DEFAULT, false],
    ['contradicted read-only, default', contradicted, DEFAULT, false],
    ['withdrawn read-only, default', withdrawn, DEFAULT, false],
    ['malformed hint, default', malformed, DEFAULT, false],
    ['read-only, --allow-mutations', readOnly, MUT, true],
    ['mutating, --allow-mutations', mutating, MUT, true],
    ['destructiveHint false without readOnlyHint, --allow-mutations', mutatingNoReadOnly, MUT, true],
    ['destructive, --allow-mutations', destructive, MUT, false],
    ['destructive by default, --allow-mutations', destructiveByDefault, MUT, false],
    ['unannotated, --allow-mutations', unannotated, MUT, false],
    ['contradicted, --allow-mutations', contradicted, MUT, false],
    ['malformed, --allow-mutations', malformed, MUT, false],
    ['mutating, --allow-destructive', mutating, ALL, true],
    ['destructive, --allow-destructive', destructive, ALL, true],
    ['unannotated, --allow-destructive', unannotated, ALL, true],
    ['contradicted, --allow-destructive', contradicted, ALL, true],
    ['malformed, --allow-destructive', malformed, ALL, true],
    ['nameless, --allow-destructive', nameless, ALL, false],
    ['read-only, --only other', readOnly, { only: ['other'] }, false],
    ['read-only, --only read', readOnly, { only: ['read'] }, true],
    ['mutating, --only write (no opt-in)', mutating, { only: ['write'] }, false],
    ['read-only, --deny read', readOnly, { deny: ['read'] }, false],
    ['destructive, --allow-destructive --deny drop', destructive, { allowDestructive: true, deny: ['drop'] }, false],
    ['read-only, --only read --deny read', readOnly, { only: ['read'], deny: ['read'] }, false],
    ['read-only, empty --only list', readOnly, { only: [] }, true],
  ])('%s → run %s', (_label, verdict, options, run) => {
    expect(new ExecutionPolicy(options).decide(verdict).run).toBe(run);
  });

  test.each<[string, Verdict, ExecutionPolicyOptions, RegExp | string]>([
    ['unannotated', unannotated, DEFAULT, NO_ANNOTATIONS_REASON],
    ['mutating', mutating, DEFAULT, /opt in with --allow-mutations/],
    ['destructive', destructive, MUT, /opt in with --allow-destructive/],
    ['contradicted', contradicted, DEFAULT, /contradiction/],
    ['malformed', malformed, DEFAULT, /unclassifiable \(readOnlyHint is string/],
    ['denied', readOnly, { deny: ['read'] }, 'excluded by --deny'],
    ['not in --only', readOnly, { only: ['x'] }, 'not listed in --only'],
    ['nameless', nameless, ALL, /no usable name/],
  ])('skip reason: %s', (_label, verdict, options, reason) => {
    const decision = new ExecutionPolicy(options).decide(verdict);
    expect(decision.run).toBe(false);
    if (!decision.run) expect(decision.reason).toMatch(reason);
  });

  test('the unannotated reason is exactly the spec-default wording', () => {
    expect(new ExecutionPolicy().decide(unannotated)).toEqual({ run: false, reason: 'no annotations: destructive by spec default' });
  });
});

describe('ExecutionPolicy helpers', () => {
  test('unknownNames reports --only/--deny names missing from the catalog', () => {
    expect(new ExecutionPolicy({ only: ['a', 'typo'], deny: ['b', 'zz'] }).unknownNames(['a', 'b'])).toEqual(['typo', 'zz']);
  });

  test.each<[ExecutionPolicyOptions, RegExp]>([
    [DEFAULT, /^read-only tools only/],
    [MUT, /destructiveHint: false/],
    [ALL, /test tenant/],
    [{ only: ['a', 'b'], deny: ['c'] }, /only a, b; never c$/],
  ])('describe(%j)', (options, text) => {
    expect(new ExecutionPolicy(options).describe()).toMatch(text);
  });
});
