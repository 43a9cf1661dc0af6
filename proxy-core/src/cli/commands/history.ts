/**
 * `airlock history`: the journal, newest first, with filters and cursor paging, each call's arguments in a few
 * words and who decided it; `--story SESSION` tells one session's calls in order; `--export jsonl|csv` streams
 * every entry the filters give; `--events` for the events.
 */
import type { HistoryQuery } from '../../protocol/api.js';
import { UNDO_WORDS, undoWord } from '../../protocol/activity.js';
import { EXPORT_FORMATS, type ExportFormat } from '../../protocol/activity-export.js';
import { parse } from '../args.js';
import { call, oneLine, print, printJson, table } from '../control.js';
import { UsageError } from '../errors.js';
import { exportHistory, printStory } from './history-export.js';

const DECISIONS = ['allow', 'deny'] as const;
const OUTCOMES = ['pending', 'ok', 'tool-error', 'rpc-error', 'cancelled', 'unknown', 'not-run'] as const;

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(
    argv.slice(1),
    {
      json: { type: 'boolean' },
      limit: { type: 'string' },
      server: { type: 'string' },
      client: { type: 'string' },
      tool: { type: 'string' },
      decision: { type: 'string' },
      outcome: { type: 'string' },
      search: { type: 'string' },
      before: { type: 'string' },
      session: { type: 'string' },
      export: { type: 'string' },
      story: { type: 'string' },
      events: { type: 'boolean' },
    },
    false,
  );
  const limit = whole(values.limit ?? '50', '--limit', 10_000);
  const before = values.before === undefined ? undefined : whole(values.before, '--before', Number.MAX_SAFE_INTEGER);
  if (values.events) {
    const out = await call('events', { limit, server: values.server, before });
    if (values.json) printJson(out.events);
    else print(table(['SEQ', 'TIME', 'EVENT', 'SERVER', 'TOOL', 'DETAIL'], out.events.map((e) => [String(e.seq), new Date(e.at).toISOString(), e.type, e.server ?? '', e.tool ?? '', oneLine(JSON.stringify(e.detail), 70)])));
    more(out.nextCursor, values.json);
    return 0;
  }
  if (values.story !== undefined) return printStory(values.story, values.json === true);
  const query: HistoryQuery = { limit, server: values.server, client: values.client, tool: values.tool, text: values.search, before, session: values.session };
  if (values.decision !== undefined) query.decision = oneOf(values.decision, DECISIONS, '--decision');
  if (values.outcome !== undefined) query.outcome = oneOf(values.outcome, OUTCOMES, '--outcome');
  if (values.export !== undefined) {
    // every entry the filters give (--limit does not apply; --before starts further down)
    const format = oneOf(values.export, EXPORT_FORMATS, '--export') as ExportFormat;
    const { limit: _page, ...filters } = query;
    return exportHistory(format, filters);
  }
  const out = await call('history', query);
  if (values.json) {
    printJson(out.calls);
    return 0;
  }
  if (out.calls.length === 0) {
    print(before === undefined ? 'The journal is empty.' : 'No older entries.');
    return 0;
  }
  print(
    table(
      ['ID', 'TIME', 'CLIENT', 'SERVER', 'TOOL', 'SUMMARY', 'DECISION', 'WHY', 'OUTCOME', 'MS', 'UNDO'],
      out.calls.map((c) => [
        c.id,
        new Date(c.startedAt).toISOString(),
        c.client,
        c.server,
        c.tool,
        oneLine(c.argSummary ?? '', 40),
        c.decision,
        oneLine(c.why ?? c.decidedBy, 50),
        c.outcome,
        c.durationMs === undefined ? '' : c.durationMs.toFixed(1),
        // `airlock undo ID` takes what says "yes" (or "retry": an undo that left residue); an undo's own entry says so
        c.undo?.undoOf ? `undo of ${c.undo.undoOf}` : c.undo?.state === 'undone' ? 'undone' : c.undo?.available ? (c.undo.state === 'failed' ? 'retry' : 'yes') : UNDO_WORDS[undoWord(c)],
      ]),
    ),
  );
  more(out.nextCursor, false);
  return 0;
}

function more(cursor: number | null, json: boolean | undefined): void {
  if (cursor !== null && !json) print(`\nOlder entries: add --before ${cursor}`);
}

function whole(text: string, flag: string, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0 || n > max) throw new UsageError(`${flag} takes a whole number from 1 to ${max}`);
  return n;
}

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`${flag} takes ${allowed.join(', ')}`);
  return value as T;
}
