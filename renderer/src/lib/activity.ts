/**
 * The Activity page's data: the journal's filter as typed, and the list of calls it shows — pages of history
 * loaded as the person scrolls (oldest at the end) plus the calls the event stream reports live (newest at the
 * top). A call journaled again (pending, then done) is one row, updated where it stands.
 */
import type { HistoryItem, HistoryQuery, Outcome } from '@airlock/proxy-core/protocol/api';
import type { CallSummary } from '@airlock/proxy-core/protocol/events';
import type { UndoInfo } from '@airlock/proxy-core/protocol/undo-api';
import { parseLocalDateTime } from './time.js';

export const OUTCOMES: readonly Outcome[] = ['pending', 'ok', 'tool-error', 'rpc-error', 'cancelled', 'unknown', 'not-run'];

/** The filter as its form holds it: strings, empty for "any". */
export interface ActivityFilter {
  client: string;
  server: string;
  tool: string;
  /** One wrapper session's calls (a preset sets it: "this session"). */
  session: string;
  decision: '' | 'allow' | 'deny';
  outcome: '' | Outcome;
  text: string;
  /** `datetime-local` values. */
  from: string;
  to: string;
}

export type FilterQuery = Omit<HistoryQuery, 'limit' | 'before'>;

export function emptyFilter(): ActivityFilter {
  return { client: '', server: '', tool: '', session: '', decision: '', outcome: '', text: '', from: '', to: '' };
}

/** The history query of a filter, or why the filter cannot be one. */
export function filterQuery(f: ActivityFilter): FilterQuery | string {
  const q: FilterQuery = {};
  if (f.client.trim()) q.client = f.client.trim();
  if (f.server.trim()) q.server = f.server.trim();
  if (f.tool.trim()) q.tool = f.tool.trim();
  if (f.session.trim()) q.session = f.session.trim();
  if (f.decision) q.decision = f.decision;
  if (f.outcome) q.outcome = f.outcome;
  if (f.text.trim()) {
    if (f.text.trim().length > 200) return 'search text has at most 200 characters';
    q.text = f.text.trim();
  }
  const from = parseLocalDateTime(f.from);
  const to = parseLocalDateTime(f.to);
  if (f.from.trim() && from === undefined) return 'the start of the time range is not a date';
  if (f.to.trim() && to === undefined) return 'the end of the time range is not a date';
  if (from !== undefined) q.from = from;
  // a minute picked as the end includes that whole minute
  if (to !== undefined) q.to = to + 59_999;
  if (q.from !== undefined && q.to !== undefined && q.from > q.to) return 'the time range ends before it starts';
  return q;
}

/**
 * Whether a call the stream reports belongs under this filter: true or false, or 'unknown' when the filter
 * searches text the report does not carry (the arguments and the detail stay in the journal).
 */
export function summaryMatches(q: FilterQuery, c: CallSummary): boolean | 'unknown' {
  if (q.client !== undefined && c.client !== q.client) return false;
  if (q.server !== undefined && c.server !== q.server) return false;
  if (q.tool !== undefined && c.tool !== q.tool) return false;
  if (q.session !== undefined && c.sessionId !== q.session) return false;
  if (q.decision !== undefined && c.decision !== q.decision) return false;
  if (q.decidedBy !== undefined && c.decidedBy !== q.decidedBy) return false;
  if (q.outcome !== undefined && c.outcome !== q.outcome) return false;
  if (q.from !== undefined && c.startedAt < q.from) return false;
  if (q.to !== undefined && c.startedAt > q.to) return false;
  if (q.text !== undefined) return c.tool.toLowerCase().includes(q.text.toLowerCase()) ? true : 'unknown';
  return true;
}

/** A row: a journal entry, or (until its detail is loaded) the summary the stream reported. */
export type ActivityRow = (HistoryItem & { partial?: false }) | (CallSummary & { partial: true; undo?: UndoInfo; sessionId?: string; argSummary?: string; why?: string });

/** The rows, newest first, addressed by index without copying: live calls on top, history pages below. */
export class CallList {
  /** Calls reported live, oldest first (so a new one is a push). */
  private live: ActivityRow[] = [];
  /** History pages, newest first. */
  private pages: ActivityRow[] = [];
  private byId = new Map<string, ActivityRow>();
  /** The cursor of the next (older) page, null when the journal has no more. */
  nextCursor: number | null = null;
  /** Whether the first page has been loaded. */
  loaded = false;

  get length(): number {
    return this.live.length + this.pages.length;
  }

  /** Row `i` from the top. */
  at(i: number): ActivityRow | undefined {
    return i < this.live.length ? this.live[this.live.length - 1 - i] : this.pages[i - this.live.length];
  }

  get(id: string): ActivityRow | undefined {
    return this.byId.get(id);
  }

  /** Add a page of older calls; a call already shown (reported live meanwhile) is completed, not repeated. */
  appendPage(calls: readonly HistoryItem[], nextCursor: number | null): void {
    for (const c of calls) {
      const seen = this.byId.get(c.id);
      if (seen) {
        if (seen.partial) Object.assign(seen, c, { partial: c.summary === true });
        continue;
      }
      // the page's own objects, not copies: 100,000 of them add up. A summary (no arguments, no result) is
      // completed when its row is opened, like a call the stream reported.
      const row: ActivityRow = c.summary ? Object.assign(c, { partial: true as const }) : c;
      this.pages.push(row);
      this.byId.set(c.id, row);
    }
    this.nextCursor = nextCursor;
    this.loaded = true;
  }

  /** A call the stream reported: update its row, or add it on top. Returns what it did. */
  upsert(summary: CallSummary, belongs: boolean): 'updated' | 'added' | 'ignored' {
    const seen = this.byId.get(summary.id);
    if (seen) {
      Object.assign(seen, summary);
      return 'updated';
    }
    if (!belongs) return 'ignored';
    const row: ActivityRow = { ...summary, partial: true };
    this.live.push(row);
    this.byId.set(summary.id, row);
    return 'added';
  }

  /** What undo can do for a call now (an event said, or its entry was read again); false when it is not shown. */
  setUndo(id: string, undo: UndoInfo | undefined): boolean {
    const seen = this.byId.get(id);
    if (!seen) return false;
    if (undo === undefined) delete seen.undo;
    else seen.undo = undo;
    return true;
  }

  /** A row's full journal entry, once loaded. */
  complete(item: HistoryItem): void {
    const seen = this.byId.get(item.id);
    if (seen) Object.assign(seen, item, { partial: false });
  }
}

/** The query that finds one call's whole journal entry. */
export function lookupQuery(c: Pick<CallSummary, 'id'>): HistoryQuery {
  return { id: c.id, limit: 1 };
}

/** A call's result text, for the summary line of its detail: the text parts of an MCP result, or the JSON. */
export function resultSummary(result: string | undefined): { text: string; isError: boolean } | null {
  if (result === undefined || result === '') return null;
  try {
    const v = JSON.parse(result) as unknown;
    if (typeof v === 'object' && v !== null) {
      const r = v as { content?: unknown; isError?: unknown; error?: { message?: unknown } };
      if (Array.isArray(r.content)) {
        const texts = r.content
          .map((c: unknown) => (typeof c === 'object' && c !== null && typeof (c as { text?: unknown }).text === 'string' ? (c as { text: string }).text : `[${String((c as { type?: unknown })?.type ?? 'item')}]`))
          .join('\n');
        return { text: texts, isError: r.isError === true };
      }
      if (r.error && typeof r.error.message === 'string') return { text: r.error.message, isError: true };
    }
  } catch {
    // cut at its limit: not JSON any more
  }
  return { text: result, isError: false };
}

/**
 * How often an event set each call's undo state. A journal read that started before the latest such event must
 * not overwrite what the event said: the reader notes the stamp before it reads and applies its answer only if
 * the stamp is unchanged.
 */
export class UndoStamps {
  private readonly counts = new Map<string, number>();

  of(id: string): number {
    return this.counts.get(id) ?? 0;
  }

  bump(id: string): void {
    this.counts.set(id, this.of(id) + 1);
  }
}
