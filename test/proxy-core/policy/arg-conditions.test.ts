/** Argument-scoped rules as tables: parsing, each kind of condition, paths judged as real files, allow vs deny. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { type ArgCondition, conditionsMatch, type MatchEnv, parseArgCondition, systemMatchEnv } from '../../../proxy-core/src/policy/arg-conditions.js';
import { decide, type PolicySnapshot } from '../../../proxy-core/src/policy/decide.js';
import { policySnapshot } from '../../helpers/policy.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'al-args-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const notes = join(root, 'notes');
mkdirSync(join(notes, 'deep'), { recursive: true });
writeFileSync(join(notes, 'a.md'), 'x');
mkdirSync(join(root, 'secret'));
writeFileSync(join(root, 'secret', 'key'), 'k');
// a link inside notes that leads out of it, and a folder that is a link to notes
symlinkSync(join(root, 'secret'), join(notes, 'escape'));
symlinkSync(notes, join(root, 'notes-link'));

const env: MatchEnv = { ...systemMatchEnv, home: root };

describe('parsing --arg NAME=VALUE', () => {
  test.each<[string, ArgCondition]>([
    ['path=~/notes/**', { arg: 'path', kind: 'path', glob: join(root, 'notes', '**') }],
    ['path=/srv/data/../data/*.csv', { arg: 'path', kind: 'path', glob: '/srv/data/*.csv' }],
    ['n=1..10', { arg: 'n', kind: 'range', min: 1, max: 10 }],
    ['n=..0.5', { arg: 'n', kind: 'range', max: 0.5 }],
    ['n=-3..', { arg: 'n', kind: 'range', min: -3 }],
    ['mode="fast"', { arg: 'mode', kind: 'exact', value: 'fast' }],
    ['n=3', { arg: 'n', kind: 'exact', value: 3 }],
    ['dry=true', { arg: 'dry', kind: 'exact', value: true }],
    ['name=report-*', { arg: 'name', kind: 'glob', glob: 'report-*' }],
  ])('%s', (spec, expected) => {
    expect(parseArgCondition(spec, env)).toEqual(expected);
  });

  test.each(['path', '=x', 'path=', 'n=5..1'])('refuses %s', (spec) => {
    expect(() => parseArgCondition(spec, env)).toThrow();
  });
});

describe('matching', () => {
  const under = parseArgCondition('path=~/notes/**', env);
  const cases: [string, unknown, 'allow' | 'deny', boolean][] = [
    ['a file in the folder', join(notes, 'a.md'), 'allow', true],
    ['a file not yet written, deeper down', join(notes, 'deep', 'new', 'b.md'), 'allow', true],
    ['the folder itself', notes, 'allow', true],
    ['a `..` escape', join(notes, '..', 'secret', 'key'), 'allow', false],
    ['a symlink inside that leads out', join(notes, 'escape', 'key'), 'allow', false],
    ['the same folder through a symlink', join(root, 'notes-link', 'a.md'), 'allow', true],
    ['a neighbour whose name starts the same', join(root, 'notes-old', 'a.md'), 'allow', false],
    ['a relative path (the server decides what it means)', 'notes/a.md', 'allow', false],
    ['a relative path, for a deny', 'notes/a.md', 'deny', true],
    ['~ in the value', '~/notes/a.md', 'allow', true],
    ['not a string', 42, 'allow', false],
    ['not a string, for a deny', 42, 'deny', true],
    ['a list, all inside', [join(notes, 'a.md'), join(notes, 'deep', 'c')], 'allow', true],
    ['a list, one outside', [join(notes, 'a.md'), join(root, 'secret', 'key')], 'allow', false],
    ['a list, one outside, for a deny of the folder', [join(root, 'x'), join(notes, 'a.md')], 'deny', true],
    ['an empty list', [], 'allow', false],
  ];
  test.each(cases)('path under a folder: %s', (_what, value, action, expected) => {
    expect(conditionsMatch([under], { path: value }, action, env)).toBe(expected);
  });

  test('a missing argument never matches, for an allow or a deny', () => {
    expect(conditionsMatch([under], {}, 'allow', env)).toBe(false);
    expect(conditionsMatch([under], {}, 'deny', env)).toBe(false);
  });

  test('arguments not known (judging a tool): an allow does not apply, a deny does', () => {
    expect(conditionsMatch([under], undefined, 'allow', env)).toBe(false);
    expect(conditionsMatch([under], undefined, 'deny', env)).toBe(true);
  });

  test('case rules of the platform', () => {
    const mac: MatchEnv = { platform: 'darwin', home: '/Users/me', realpath: (p) => p };
    const linux: MatchEnv = { platform: 'linux', home: '/home/me', realpath: (p) => p };
    expect(conditionsMatch([parseArgCondition('path=/Users/me/Notes/**', mac)], { path: '/users/ME/notes/a.md' }, 'allow', mac)).toBe(true);
    expect(conditionsMatch([parseArgCondition('path=/home/me/Notes/**', linux)], { path: '/home/me/notes/a.md' }, 'allow', linux)).toBe(false);
  });

  test.each<[string, Record<string, unknown>, boolean]>([
    ['n=1..10', { n: 5 }, true],
    ['n=1..10', { n: 11 }, false],
    ['n=1..10', { n: '5' }, false],
    ['mode="fast"', { mode: 'fast' }, true],
    ['mode="fast"', { mode: 'faster' }, false],
    ['n=3', { n: 3 }, true],
    ['n=3', { n: '3' }, false],
    ['name=report-*', { name: 'report-2026.pdf' }, true],
    ['name=report-*', { name: 'invoice.pdf' }, false],
  ])('%s with %j', (spec, args, expected) => {
    expect(conditionsMatch([parseArgCondition(spec, env)], args, 'allow', env)).toBe(expected);
  });

  test('all conditions must hold', () => {
    const both = [parseArgCondition('path=~/notes/**', env), parseArgCondition('mode="append"', env)];
    expect(conditionsMatch(both, { path: join(notes, 'a.md'), mode: 'append' }, 'allow', env)).toBe(true);
    expect(conditionsMatch(both, { path: join(notes, 'a.md'), mode: 'overwrite' }, 'allow', env)).toBe(false);
  });
});

describe('rules with conditions in the policy', () => {
  const policy = (rules: PolicySnapshot['rules']): PolicySnapshot => policySnapshot({ rules });
  const base = { server: 'filesystem', client: 'cursor', tool: 'write_file', toolClass: 'destructive' as const };
  const allowNotes = { id: 'r1', action: 'allow' as const, server: 'filesystem', tool: 'write_file', createdAt: 1, args: [parseArgCondition('path=~/notes/**', env)] };

  test('a matching call runs, any other asks', () => {
    expect(decide({ ...base, args: { path: join(notes, 'x.md') } }, policy([allowNotes]), env)).toMatchObject({ action: 'allow', ruleId: 'r1' });
    expect(decide({ ...base, args: { path: join(root, 'secret', 'key') } }, policy([allowNotes]), env)).toMatchObject({ action: 'ask', decidedBy: 'class' });
    expect(decide({ ...base, args: { path: join(notes, 'escape', 'key') } }, policy([allowNotes]), env)).toMatchObject({ action: 'ask' });
  });

  test('a deny with a condition beats a broader allow', () => {
    const denyDeep = { id: 'r2', action: 'deny' as const, server: '*', tool: '*', createdAt: 1, args: [parseArgCondition('path=~/notes/deep/**', env)] };
    expect(decide({ ...base, args: { path: join(notes, 'deep', 'y') } }, policy([allowNotes, denyDeep]), env)).toMatchObject({ action: 'deny', ruleId: 'r2' });
    expect(decide({ ...base, args: { path: join(notes, 'y') } }, policy([allowNotes, denyDeep]), env)).toMatchObject({ action: 'allow', ruleId: 'r1' });
  });

  test('judged without arguments (what tools/list says), an allow with conditions does not make a tool run without asking', () => {
    expect(decide({ ...base, toolClass: 'read-only-trusted' }, policy([{ ...allowNotes, action: 'deny' }]), env)).toMatchObject({ action: 'deny' });
    expect(decide(base, policy([allowNotes]), env)).toMatchObject({ action: 'ask' });
  });
});
