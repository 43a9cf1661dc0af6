/** `airlock history`: the journal, newest first. */
import type { EventItem, HistoryItem } from '../../ipc/protocol.js';
import { parse } from '../args.js';
import { call, oneLine, print, printJson, table } from '../control.js';
import { UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv.slice(1), { json: { type: 'boolean' }, limit: { type: 'string' }, server: { type: 'string' }, events: { type: 'boolean' } }, false);
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit <= 0 || limit > 10_000) throw new UsageError('--limit takes a whole number from 1 to 10000');
  const out = await call<{ calls: HistoryItem[]; events: EventItem[] }>('history', { limit, server: values.server });
  if (values.json) {
    printJson(values.events ? out.events : out.calls);
    return 0;
  }
  if (values.events) {
    print(table(['TIME', 'EVENT', 'SERVER', 'TOOL', 'DETAIL'], out.events.map((e) => [new Date(e.at).toISOString(), e.event, e.server ?? '', e.tool ?? '', oneLine(JSON.stringify(e.detail), 70)])));
    return 0;
  }
  if (out.calls.length === 0) {
    print('The journal is empty.');
    return 0;
  }
  print(
    table(
      ['TIME', 'CLIENT', 'SERVER', 'TOOL', 'DECISION', 'BY', 'OUTCOME', 'MS'],
      out.calls.map((c) => [
        new Date(c.startedAt).toISOString(),
        c.client,
        c.server,
        c.tool,
        c.decision,
        c.decidedBy,
        c.outcome,
        c.durationMs === undefined ? '' : c.durationMs.toFixed(1),
      ]),
    ),
  );
  return 0;
}
