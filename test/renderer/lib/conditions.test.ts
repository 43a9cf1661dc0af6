/** Rules and argument conditions in words, and the rule form's drafts turned into conditions. */
import { describe, expect, test } from 'vitest';
import { describeCondition, describeConditions, describeRule, emptyDraft, exactValue, parseCondition, parseConditions } from '../../../renderer/src/lib/conditions.js';

describe('in words', () => {
  test('each kind of condition', () => {
    expect(describeCondition({ arg: 'path', kind: 'path', glob: '/home/me/**' })).toBe('path is a path matching /home/me/**');
    expect(describeCondition({ arg: 'host', kind: 'glob', glob: '*.example.com' })).toBe('host matches *.example.com');
    expect(describeCondition({ arg: 'mode', kind: 'exact', value: 'read' })).toBe('mode is exactly "read"');
    expect(describeCondition({ arg: 'n', kind: 'exact', value: 3 })).toBe('n is exactly 3');
    expect(describeCondition({ arg: 'n', kind: 'range', min: 1, max: 5 })).toBe('n is from 1 to 5');
    expect(describeCondition({ arg: 'n', kind: 'range', min: 1 })).toBe('n is at least 1');
    expect(describeCondition({ arg: 'n', kind: 'range', max: 5 })).toBe('n is at most 5');
  });

  test('rules', () => {
    expect(describeConditions(undefined)).toBe('any arguments');
    expect(describeRule({ action: 'allow', server: 'fs', tool: 'write_file' })).toBe('Allow write_file on fs');
    expect(
      describeRule({ action: 'deny', server: 'fs', tool: '*', client: 'cursor', args: [{ arg: 'path', kind: 'path', glob: '/etc/**' }, { arg: 'n', kind: 'range', max: 2 }] }),
    ).toBe('Deny * on fs (from cursor) when path is a path matching /etc/** and n is at most 2');
  });
});

describe('drafts', () => {
  test('exact values: JSON scalars as written, quoted text as text, the rest as typed', () => {
    expect(exactValue('42')).toBe(42);
    expect(exactValue('-1.5e3')).toBe(-1500);
    expect(exactValue('true')).toBe(true);
    expect(exactValue('null')).toBe(null);
    expect(exactValue('"42"')).toBe('42');
    expect(exactValue('read only')).toBe('read only');
    expect(exactValue('0x10')).toBe('0x10');
  });

  test('each kind parses, with its problems named', () => {
    expect(parseCondition({ ...emptyDraft('path', 'path'), glob: ' /tmp/** ' })).toEqual({ arg: 'path', kind: 'path', glob: '/tmp/**' });
    expect(parseCondition({ ...emptyDraft('glob', 'url'), glob: 'https://*' })).toEqual({ arg: 'url', kind: 'glob', glob: 'https://*' });
    expect(parseCondition({ ...emptyDraft('exact', 'n'), value: '7' })).toEqual({ arg: 'n', kind: 'exact', value: 7 });
    expect(parseCondition({ ...emptyDraft('range', 'n'), min: '1', max: '' })).toEqual({ arg: 'n', kind: 'range', min: 1 });
    expect(parseCondition(emptyDraft('path', ''))).toBe('name the argument');
    expect(parseCondition(emptyDraft('path', 'p'))).toMatch(/give a path glob/);
    expect(parseCondition(emptyDraft('range', 'n'))).toMatch(/minimum, a maximum or both/);
    expect(parseCondition({ ...emptyDraft('range', 'n'), min: '5', max: '1' })).toBe('the minimum is above the maximum');
    expect(parseCondition({ ...emptyDraft('range', 'n'), min: 'x' })).toBe('the minimum must be a number');
  });

  test('a list of drafts: all or the first problem, numbered', () => {
    expect(parseConditions([])).toEqual([]);
    expect(parseConditions([{ ...emptyDraft('glob', 'a'), glob: '*' }, emptyDraft('glob', 'b')])).toMatch(/^condition 2: /);
  });
});
