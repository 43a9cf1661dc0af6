/** The Activity page's data: filters as queries, live calls merged into paged history without copies or duplicates. */
import { describe, expect, test } from 'vitest';
import { CallList, emptyFilter, filterQuery, lookupQuery, resultSummary, summaryMatches, UndoStamps } from '../../../renderer/src/lib/activity.js';
import { item, summary } from '../../helpers/activity-rows.js';

describe('filterQuery', () => {
  test('empty fields are left out, text is trimmed, a time range ends at the end of its minute', () => {
    expect(filterQuery(emptyFilter())).toEqual({});
    const q = filterQuery({ ...emptyFilter(), server: ' fs ', decision: 'deny', outcome: 'not-run', text: ' rm ', from: '2025-01-02T10:00', to: '2025-01-02T11:00' });
    expect(q).toMatchObject({ server: 'fs', decision: 'deny', outcome: 'not-run', text: 'rm' });
    if (typeof q === 'string') throw new Error(q);
    expect(q.to! - new Date('2025-01-02T11:00').getTime()).toBe(59_999);
  });

  test('problems are named', () => {
    expect(filterQuery({ ...emptyFilter(), from: '2025-01-02T11:00', to: '2025-01-02T10:00' })).toBe('the time range ends before it starts');
    expect(filterQuery({ ...emptyFilter(), from: 'yesterday' })).toMatch(/not a date/);
  });
});

describe('summaryMatches', () => {
  test('exact fields and time; text is unknown unless the tool name holds it', () => {
    expect(summaryMatches({}, summary('a'))).toBe(true);
    expect(summaryMatches({ server: 'fs', decision: 'allow' }, summary('a'))).toBe(true);
    expect(summaryMatches({ server: 'mail' }, summary('a'))).toBe(false);
    expect(summaryMatches({ from: 2000 }, summary('a'))).toBe(false);
    expect(summaryMatches({ text: 'WRITE' }, summary('a'))).toBe(true);
    expect(summaryMatches({ text: '/etc/passwd' }, summary('a'))).toBe('unknown');
  });
});

describe('CallList', () => {
  test('pages append below, live calls go on top, one row per call', () => {
    const list = new CallList();
    list.appendPage([item('c3', 3), item('c2', 2)], 2);
    list.upsert(summary('c4'), true);
    list.upsert(summary('c5'), true);
    expect(Array.from({ length: list.length }, (_, i) => list.at(i)?.id)).toEqual(['c5', 'c4', 'c3', 'c2']);
    list.appendPage([item('c1', 1)], null);
    expect(list.length).toBe(5);
    expect(list.at(4)?.id).toBe('c1');
    expect(list.nextCursor).toBeNull();
  });

  test('a call journaled again is updated where it stands', () => {
    const list = new CallList();
    list.appendPage([item('c1', 1, { outcome: 'pending' })], null);
    expect(list.upsert(summary('c1', { outcome: 'ok', durationMs: 12 }), false)).toBe('updated');
    expect(list.at(0)).toMatchObject({ id: 'c1', outcome: 'ok', durationMs: 12, arguments: '{"path":"/tmp/x"}' });
    expect(list.length).toBe(1);
  });

  test('a live call outside the filter is not added; a page that repeats a live call completes it', () => {
    const list = new CallList();
    expect(list.upsert(summary('x'), false)).toBe('ignored');
    expect(list.upsert(summary('y'), true)).toBe('added');
    expect(list.get('y')?.partial).toBe(true);
    list.appendPage([item('y', 9)], null);
    expect(list.length).toBe(1);
    expect(list.get('y')).toMatchObject({ partial: false, arguments: '{"path":"/tmp/x"}' });
  });

  test('complete fills a partial row in place', () => {
    const list = new CallList();
    list.upsert(summary('z'), true);
    list.complete(item('z', 4, { arguments: '{"a":1}' }));
    expect(list.at(0)).toMatchObject({ partial: false, arguments: '{"a":1}' });
  });

  test('100,000 rows: pages and live calls addressed newest first', () => {
    const pages = Array.from({ length: 200 }, (_, p) => Array.from({ length: 500 }, (_, i) => item(`c${p}-${i}`, 100_000 - p * 500 - i)));
    const live = Array.from({ length: 1000 }, (_, i) => summary(`live${i}`));
    const list = new CallList();
    for (const [p, page] of pages.entries()) list.appendPage(page, p < 199 ? 1 : null);
    for (const c of live) list.upsert(c, true);
    expect(list.length).toBe(101_000);
    expect(list.at(0)?.id).toBe('live999');
    expect(list.at(101_000 - 1)?.id).toBe('c199-499');
  });
});

test('a page of summaries is completed when opened, by the call id', () => {
  const list = new CallList();
  list.appendPage([{ ...item('s1', 5), arguments: '', summary: true }], null);
  expect(list.get('s1')?.partial).toBe(true);
  list.complete(item('s1', 5, { arguments: '{"a":1}' }));
  expect(list.get('s1')).toMatchObject({ partial: false, arguments: '{"a":1}' });
});

test('lookupQuery finds one call by its id; resultSummary reads MCP results', () => {
  expect(lookupQuery(summary('a'))).toEqual({ id: 'a', limit: 1 });
  expect(resultSummary(JSON.stringify({ content: [{ type: 'text', text: 'done' }, { type: 'image' }], isError: false }))).toEqual({ text: 'done\n[image]', isError: false });
  expect(resultSummary(JSON.stringify({ content: [{ type: 'text', text: 'nope' }], isError: true }))).toEqual({ text: 'nope', isError: true });
  expect(resultSummary(JSON.stringify({ error: { code: -32602, message: 'bad params' } }))).toEqual({ text: 'bad params', isError: true });
  expect(resultSummary('{"cut')).toEqual({ text: '{"cut', isError: false });
  expect(resultSummary(undefined)).toBeNull();
});

describe('UndoStamps', () => {
  test('each call counts on its own, from 0', () => {
    const stamps = new UndoStamps();
    expect(stamps.of('c1')).toBe(0);
    stamps.bump('c1');
    stamps.bump('c1');
    stamps.bump('c2');
    expect([stamps.of('c1'), stamps.of('c2'), stamps.of('c3')]).toEqual([2, 1, 0]);
  });
});
