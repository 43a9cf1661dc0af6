/** The virtual list's arithmetic: which rows are drawn, when the end is near, where to scroll for a row. */
import { describe, expect, test } from 'vitest';
import { nearEnd, scrollToRow, visibleRange } from '../../../renderer/src/lib/virtual.js';

describe('virtual list', () => {
  test('only the rows in view, plus overscan', () => {
    expect(visibleRange({ scrollTop: 0, height: 400, rowHeight: 40, count: 100_000, overscan: 5 })).toEqual({ start: 0, end: 16, offset: 0, total: 4_000_000 });
    expect(visibleRange({ scrollTop: 40_000, height: 400, rowHeight: 40, count: 100_000, overscan: 5 })).toEqual({ start: 995, end: 1016, offset: 39_800, total: 4_000_000 });
    expect(visibleRange({ scrollTop: 9e9, height: 400, rowHeight: 40, count: 10, overscan: 5 }).end).toBe(10);
    expect(visibleRange({ scrollTop: 0, height: 400, rowHeight: 40, count: 0 })).toEqual({ start: 0, end: 0, offset: 0, total: 0 });
  });

  test('near the end; bringing a row into view', () => {
    expect(nearEnd({ start: 0, end: 60, offset: 0, total: 0 }, 100, 50)).toBe(true);
    expect(nearEnd({ start: 0, end: 20, offset: 0, total: 0 }, 100, 50)).toBe(false);
    expect(scrollToRow(0, 400, 400, 40)).toBe(0);
    expect(scrollToRow(20, 0, 400, 40)).toBe(440);
    expect(scrollToRow(5, 0, 400, 40)).toBe(0);
  });
});
