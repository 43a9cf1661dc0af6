/** The arithmetic of a list that renders only the rows in view (rows of one fixed height). */

export interface Viewport {
  scrollTop: number;
  height: number;
  rowHeight: number;
  count: number;
  /** Rows drawn beyond each edge, so fast scrolling shows no gap. */
  overscan?: number;
}

export interface VisibleRange {
  /** First row drawn (inclusive). */
  start: number;
  /** Row after the last one drawn (exclusive). */
  end: number;
  /** Where the first drawn row sits, in pixels from the top of the list. */
  offset: number;
  /** The whole list's height in pixels. */
  total: number;
}

export function visibleRange(v: Viewport): VisibleRange {
  const overscan = v.overscan ?? 8;
  const total = Math.max(0, v.count) * v.rowHeight;
  if (v.count <= 0 || v.rowHeight <= 0) return { start: 0, end: 0, offset: 0, total };
  const top = Math.min(Math.max(0, v.scrollTop), Math.max(0, total - 1));
  const first = Math.floor(top / v.rowHeight);
  const inView = Math.ceil(Math.max(0, v.height) / v.rowHeight) + 1;
  const start = Math.max(0, first - overscan);
  const end = Math.min(v.count, first + inView + overscan);
  return { start, end, offset: start * v.rowHeight, total };
}

/** Whether the rows drawn come within `threshold` rows of the end: time to load the next page. */
export function nearEnd(range: VisibleRange, count: number, threshold = 50): boolean {
  return range.end >= count - threshold;
}

/** The scrollTop that brings row `index` into view (unchanged when it already is). */
export function scrollToRow(index: number, scrollTop: number, height: number, rowHeight: number): number {
  const top = index * rowHeight;
  if (top < scrollTop) return top;
  if (top + rowHeight > scrollTop + height) return top + rowHeight - height;
  return scrollTop;
}
