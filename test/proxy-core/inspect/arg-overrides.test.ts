import { describe, expect, test } from 'vitest';
import { parseArgOverride, resolveArgOverrides } from '../../../proxy-core/src/inspect/arg-overrides.js';

describe('parseArgOverride', () => {
  test.each<[string, string, unknown]>([
    ['search.query="hi"', 'search.query', 'hi'],
    ['search.limit=5', 'search.limit', 5],
    ['t.obj={"a":[1,2]}', 't.obj', { a: [1, 2] }],
    ['t.flag=false', 't.flag', false],
    ['t.eq="a=b"', 't.eq', 'a=b'],
    ['ns.tool.key=null', 'ns.tool.key', null],
  ])('%s', (raw, target, value) => {
    expect(parseArgOverride(raw)).toEqual({ target, value, raw });
  });

  test.each<[string, RegExp]>([
    ['search.query=hi', /not valid JSON \(a string needs quotes: search\.query='"hi"'\)/],
    ['search.query=', /not valid JSON/],
    ['noequals', /expected TOOL\.KEY=JSON/],
    ['=1', /expected TOOL\.KEY=JSON/],
    ['nodot=1', /no "\." between tool and key/],
    ['tool.=1', /no "\." between tool and key/],
    ['.key=1', /no "\." between tool and key/],
  ])('%s is refused', (raw, message) => {
    expect(() => parseArgOverride(raw)).toThrow(message);
  });
});

describe('resolveArgOverrides', () => {
  test('matches the longest tool name, so tool names may contain dots', () => {
    const overrides = ['a.b.c=1', 'a.x=2', 'zzz.k=3'].map(parseArgOverride);
    const { byTool, unmatched } = resolveArgOverrides(overrides, ['a', 'a.b']);
    expect(Object.fromEntries(byTool)).toEqual({ 'a.b': { c: 1 }, a: { x: 2 } });
    expect(unmatched.map((o) => o.target)).toEqual(['zzz.k']);
  });
});
