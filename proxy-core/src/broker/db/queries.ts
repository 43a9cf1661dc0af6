/**
 * The journal's and event stream's read side: history and event queries built from a filter, and the mapping
 * from rows to the protocol's shapes. Pure SQL text and row mapping; the Store prepares and caches statements.
 */
import type { BrokerEvent, CallRecord, HistoryItem, HistoryQuery } from '../../protocol/api.js';
import { CLASS_ORDER } from '../../classify/classify.js';

export type Row = Record<string, unknown>;

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 10_000;

export function parseJson(text: unknown, fallback: unknown = null): unknown {
  if (typeof text !== 'string') return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

/** `50%_off\` -> `%50\%\_off\\%`: a LIKE pattern matching the text as a substring, with `ESCAPE '\'`. */
export function likeSubstring(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A page size the database can take: an integer in 1..MAX_PAGE, DEFAULT_PAGE when absent or nonsense. */
export function pageSize(limit: unknown): number {
  if (typeof limit !== 'number' || !Number.isFinite(limit) || limit < 1) return DEFAULT_PAGE;
  return Math.min(Math.floor(limit), MAX_PAGE);
}

/**
 * History's equality filters, in the order their index is preferred. Only the first one present may use its
 * index (the others are written `+col`, which SQLite cannot look up in an index): without statistics the
 * planner takes whichever of several equally plausible indexes it meets first, and scanning the
 * `decision = 'allow'` index for a rare server walks the whole journal. Tool and server are the most selective in practice; decision has two
 * values.
 */
const EQUALITY: readonly (readonly [keyof HistoryQuery, string, 'text' | 'name'])[] = [
  ['id', 'id', 'text'],
  ['tool', 'tool', 'name'],
  ['server', 'server', 'name'],
  ['client', 'client', 'name'],
  ['decidedBy', 'decided_by', 'name'],
  ['outcome', 'outcome', 'name'],
  ['decision', 'decision', 'name'],
  // no index of its own: a session's calls are found walking seq down, and a session is most often a recent one
  ['session', 'session', 'name'],
];

/** How much of the arguments a summary row reads: enough for the argument summary (classify/arg-summary.ts). */
export const ARGS_HEAD = 4096;

/** Every column of a journal row but the two big ones, arguments and result: what a list of calls needs. */
const SUMMARY_COLUMNS = [
  'seq', 'id', 'session', 'client', 'server', 'tool', 'args_truncated', 'args_bytes', 'args_sha256', 'class', 'reasons', 'decision',
  'decided_by', 'detail', 'ticket_id', 'outcome', 'result_truncated', 'result_bytes', 'started_at', 'asked_after', 'decided_after',
  'forwarded_after', 'finished_after', 'duration_ms',
].map((c) => `j.${c}`).join(', ') + `, substr(j.arguments, 1, ${ARGS_HEAD}) AS args_head, 1 AS summary`;

export interface BuiltQuery {
  /** The same for every query with the same filters present: the key of a prepared statement. */
  sql: string;
  params: Record<string, unknown>;
  /** A text search's other candidates (calls whose long arguments are indexed in part), with the same params. */
  rest?: string;
}

/** The equality filter whose index a query without the search index would use, as [column, value, kind]. */
export function firstEquality(q: HistoryQuery): readonly [string, string, 'text' | 'name'] | null {
  for (const [key, column, kind] of EQUALITY) {
    const value = q[key];
    if (value !== undefined && value !== null) return [column, String(value), kind];
  }
  return null;
}

/** Whether the query has an equality filter, which then picks the index (see EQUALITY). */
export function hasEqualityFilter(q: HistoryQuery): boolean {
  return EQUALITY.some(([key]) => q[key] !== undefined && q[key] !== null);
}

export function hasTimeRange(q: HistoryQuery): boolean {
  return (q.from !== undefined && q.from !== null) || (q.to !== undefined && q.to !== null);
}

/**
 * The text search's question to journal_search (a trigram index without positions, migration 10): the calls
 * holding every third trigram of the text and its last one. That is a superset of the calls whose tool,
 * arguments or detail holds the text (the index folds case as LIKE does for ASCII, and beyond), so the LIKE
 * still decides, on those rows alone. Null when the index cannot answer: under three characters (no trigram)
 * or a NUL (where SQLite's LIKE stops reading).
 */
export function searchTerms(text: string): string | null {
  const chars = [...text];
  if (chars.length < 3 || text.includes('\0')) return null;
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i += 3) grams.add(chars.slice(i, i + 3).join(''));
  grams.add(chars.slice(chars.length - 3).join(''));
  return [...grams].map((g) => `"${g.replace(/"/g, '""')}"`).join(' AND ');
}

/** A page's cursor: the calls before it. */
const BEFORE = 'j.seq < @before';

/**
 * Newest first, one more row than the page so the caller knows whether there is a next page; null when a
 * filter names something never journaled (`find` gives a name's id: names.ts), so nothing can match.
 *
 * A time range without an equality filter is served one of two ways, which the caller picks (`timeIndex`):
 * walking seq down and checking the time (best when the newest rows are in the range and fill a page: it
 * stops after about a page) or looking the range up in the started_at index and sorting just the seqs found
 * there (best for a range that is narrow or old: its cost is the number of calls in the range, read from the
 * index alone). With an equality filter the time is only checked, on the rows that index gives.
 *
 * A text the search index can take walks that index's candidates newest first instead (every other filter is
 * then only checked, on those rows), unless the caller found the leading equality filter's index to give few
 * rows (`searchIndex` false: see firstEquality); a shorter text is checked on the rows the rest of the query gives.
 */
export function historyQuery(q: HistoryQuery, find: (name: string) => number | undefined, timeIndex = false, searchIndex = true): BuiltQuery | null {
  const where: string[] = [];
  const params: Record<string, unknown> = { limit: pageSize(q.limit) + 1 };
  const text = q.text !== undefined && q.text !== null && q.text !== '' ? q.text : null;
  const terms = text === null || !searchIndex ? null : searchTerms(text);
  // with the search index leading, no other index may be looked up (as for the second equality filter)
  let indexed = terms !== null;
  for (const [key, column, kind] of EQUALITY) {
    const value = q[key];
    if (value === undefined || value === null) continue;
    const id = kind === 'name' ? find(String(value)) : value;
    if (id === undefined) return null;
    where.push(`${indexed ? '+' : ''}j.${column} = @${key}`);
    params[key] = id;
    indexed = true;
  }
  const byTime = timeIndex && !indexed && hasTimeRange(q);
  if (q.before !== undefined && q.before !== null) {
    where.push(BEFORE);
    params.before = q.before;
  }
  if (q.from !== undefined && q.from !== null) {
    where.push(`${byTime ? '' : '+'}j.started_at >= @from`);
    params.from = q.from;
  }
  if (q.to !== undefined && q.to !== null) {
    where.push(`${byTime ? '' : '+'}j.started_at <= @to`);
    params.to = q.to;
  }
  if (text !== null) {
    // the tool is a name id: the ids of the names holding the text, found once per query in the small names table
    where.push("(j.tool IN (SELECT id FROM names WHERE name LIKE @text ESCAPE '\\') OR j.arguments LIKE @text ESCAPE '\\' OR j.detail LIKE @text ESCAPE '\\')");
    params.text = likeSubstring(text);
  }
  const columns = q.summary ? SUMMARY_COLUMNS : 'j.*';
  if (terms !== null) {
    params.terms = terms;
    // the index's seq where the journal's is named: the index leads, newest first
    const filter = ` AND ${where.map((w) => (w === BEFORE ? 's.rowid < @before' : w)).join(' AND ')}`;
    // calls whose long arguments are indexed in part so far (search-rest.ts) are candidates too, checked the same
    // way: asked apart, so that the index's own walk stays newest first and stops at the page
    const rest = `SELECT ${columns} FROM journal_search_rest r JOIN journal_calls j ON j.seq = r.seq WHERE ${where.join(' AND ')} ORDER BY r.seq DESC LIMIT @limit`;
    return { sql: `SELECT ${columns} FROM journal_search s JOIN journal_calls j ON j.seq = s.rowid WHERE journal_search MATCH @terms${filter} ORDER BY s.rowid DESC LIMIT @limit`, params, rest };
  }
  const filter = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const sql = byTime
    ? `SELECT ${columns} FROM journal_calls j WHERE j.seq IN (SELECT j.seq FROM journal_calls j INDEXED BY journal_started${filter} ORDER BY j.seq DESC LIMIT @limit) ORDER BY j.seq DESC`
    : `SELECT ${columns} FROM journal_calls j${filter} ORDER BY j.seq DESC LIMIT @limit`;
  return { sql, params };
}

/** Events newest first (event_log), optionally of one server; null when that server was never named. */
export function eventsQuery(q: { limit?: number | undefined; before?: number | undefined; server?: string | undefined }, find: (name: string) => number | undefined): BuiltQuery | null {
  const where: string[] = [];
  const params: Record<string, unknown> = { limit: pageSize(q.limit) + 1 };
  if (q.server !== undefined && q.server !== null) {
    const id = find(q.server);
    if (id === undefined) return null;
    where.push('server = @server');
    params.server = id;
  }
  if (q.before !== undefined && q.before !== null) {
    where.push('seq < @before');
    params.before = q.before;
  }
  return { sql: `SELECT * FROM event_log${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT @limit`, params };
}

const CLASSES: readonly string[] = CLASS_ORDER;

function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
}

/** A journal row as the protocol's HistoryItem. Columns a row predates (NULL) are left out, never made up. */
export function historyItem(r: Row): HistoryItem {
  const cls = typeof r.class === 'string' && CLASSES.includes(r.class) ? (r.class as CallRecord['class']) : 'unclassifiable';
  const item: HistoryItem = {
    kind: 'call',
    seq: Number(r.seq),
    id: String(r.id),
    client: String(r.client),
    server: String(r.server),
    tool: String(r.tool),
    arguments: typeof r.arguments === 'string' ? r.arguments : '',
    argsTruncated: r.args_truncated === 1,
    class: cls,
    reasons: parseJson(r.reasons, []) as string[],
    decision: r.decision === 'allow' ? 'allow' : 'deny',
    decidedBy: r.decided_by as CallRecord['decidedBy'],
    detail: typeof r.detail === 'string' ? r.detail : '',
    outcome: r.outcome as CallRecord['outcome'],
    startedAt: Number(r.started_at),
  };
  if (r.summary === 1) item.summary = true;
  if (typeof r.session_id === 'string' && r.session_id) item.sessionId = r.session_id;
  if (typeof r.ticket_id === 'string' && r.ticket_id) item.ticketId = r.ticket_id;
  const argsBytes = num(r.args_bytes);
  if (argsBytes !== undefined) item.argsBytes = argsBytes;
  if (typeof r.args_sha256 === 'string') item.argsSha256 = r.args_sha256;
  if (typeof r.result === 'string') item.result = r.result;
  // a summary row has no result column, but its flag still says whether the result was cut
  if (typeof r.result === 'string' || (r.summary === 1 && typeof r.result_truncated === 'number')) item.resultTruncated = r.result_truncated === 1;
  const resultBytes = num(r.result_bytes);
  if (resultBytes !== undefined) item.resultBytes = resultBytes;
  const times = [
    ['askedAt', r.asked_at],
    ['decidedAt', r.decided_at],
    ['forwardedAt', r.forwarded_at],
    ['finishedAt', r.finished_at],
    ['durationMs', r.duration_ms],
  ] as const;
  for (const [key, v] of times) {
    const n = num(v);
    if (n !== undefined) item[key] = n;
  }
  return item;
}

export function brokerEvent(r: Row): BrokerEvent {
  return {
    seq: Number(r.seq),
    at: Number(r.at),
    type: String(r.kind),
    server: typeof r.server === 'string' ? r.server : null,
    tool: typeof r.tool === 'string' ? r.tool : null,
    detail: parseJson(r.detail),
  };
}
