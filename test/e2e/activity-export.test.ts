/**
 * `airlock history --export jsonl|csv`, `--session` and `--story` against a daemon, with calls made through a
 * wrapped fixture server: the export holds every entry the filters give, with the arguments in a few words and
 * who decided each call; its CSV is RFC 4180 with formula cells written as text; the story tells the session.
 */
import { afterEach, expect, test } from 'vitest';
import type { HistoryItem } from '../../proxy-core/src/protocol/api.js';
import { EXPORT_COLUMNS } from '../../proxy-core/src/protocol/activity-export.js';
import { readCsv } from '../helpers/csv.js';
import { cleanup, cli, cliJson, connectWrapped, finishedCalls, fixture, startDaemon, tempDir, waitForTicket } from '../helpers/airlock.js';

afterEach(cleanup);


test('export, session filter and story of calls through a wrapped server', async () => {
  const home = tempDir();
  await startDaemon(home);
  expect((await cli(home, ['rules', 'add', 'allow', '--server', 'fixture', '--tool', 'write_note'])).code).toBe(0);
  const fx = fixture(home);
  const w = await connectWrapped({ home, server: 'fixture', client: 'claude-desktop', command: fx.command, args: fx.args, env: fx.env });
  const texts = ['=HYPERLINK("http://x","y")', 'a,b "quoted"\nsecond line', '@import'];
  for (const text of texts) expect((await w.client.callTool({ name: 'write_note', arguments: { text } })).isError).toBeFalsy();
  // one held and denied by the person
  const held = w.client.callTool({ name: 'delete_all', arguments: { text: 'everything' } });
  const ticket = await waitForTicket(home, 'delete_all');
  expect((await cli(home, ['deny', ticket.id])).code).toBe(0);
  await held;
  await finishedCalls(home, 'write_note', { count: 3 });

  // JSON Lines: one record a line, newest first, with the summary and the words of the decision
  const jsonl = await cli(home, ['history', '--export', 'jsonl']);
  expect(jsonl.code).toBe(0);
  const records = jsonl.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(records).toHaveLength(4);
  expect(Object.keys(records[0]!)).toEqual([...EXPORT_COLUMNS]);
  const writes = records.filter((r) => r.tool === 'write_note');
  expect(writes.map((r) => r.summary)).toEqual([...texts].reverse().map((t) => t.replace(/\n/g, ' ')));
  expect(writes[0]).toMatchObject({ client: 'claude-desktop', server: 'fixture', decision: 'allow', decidedBy: 'rule', isUndo: false });
  expect(String(writes[0]!.why)).toMatch(/^allowed by your rule /);
  expect(records.find((r) => r.tool === 'delete_all')).toMatchObject({ decision: 'deny', decidedBy: 'user', summary: 'everything', undo: 'did not run' });
  const session = writes[0]!.session as string;
  expect(session).toBeTruthy();

  // CSV of the same filter narrowed to one tool: a header, RFC 4180 quoting, formulas as text
  const csv = await cli(home, ['history', '--export', 'csv', '--tool', 'write_note']);
  expect(csv.code).toBe(0);
  expect(csv.stdout.endsWith('\r\n')).toBe(true);
  const [header, ...rows] = readCsv(csv.stdout);
  expect(header).toEqual([...EXPORT_COLUMNS]);
  expect(rows).toHaveLength(3);
  const summaries = rows.map((r) => r[header!.indexOf('summary')]);
  expect(summaries).toEqual(["'@import", 'a,b "quoted" second line', `'=HYPERLINK("http://x","y")`]);
  for (const r of rows) for (const cell of r) expect(cell).not.toMatch(/^[=+\-@]/);

  // starting further down (--before) still starts with the header
  const older = await cli(home, ['history', '--export', 'csv', '--before', String(records[1]!.seq)]);
  const olderRows = readCsv(older.stdout);
  expect(olderRows[0]).toEqual([...EXPORT_COLUMNS]);
  expect(olderRows.slice(1).map((r) => r[0])).toEqual(records.slice(2).map((r) => String(r.seq)));

  // a bad format is refused, saying what it takes
  const bad = await cli(home, ['history', '--export', 'xlsx']);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain('--export takes jsonl, csv');

  // the session's calls, and its story in order
  const mine = await cliJson<HistoryItem[]>(home, ['history', '--session', session]);
  expect(mine).toHaveLength(4);
  expect((await cliJson<HistoryItem[]>(home, ['history', '--session', 'no-such-session'])).length).toBe(0);
  const story = await cli(home, ['history', '--story', session]);
  expect(story.code).toBe(0);
  const lines = story.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(new RegExp(`^Claude Desktop's fixture: session ${session}, started \\S+, still connected$`));
  expect(lines.slice(1)).toHaveLength(4);
  expect(lines[1]).toMatch(/Claude Desktop's fixture wrote =HYPERLINK\("http:\/\/x","y"\) \(cannot be undone\) — allowed by your rule /);
  expect(lines[4]).toMatch(/Claude Desktop's fixture tried to delete everything — denied when asked/);
  // the table shows the summary and who decided
  expect((await cli(home, ['history', '--story', 'no-such-session'])).stderr).toContain('no session no-such-session');
  const table = await cli(home, ['history']);
  expect(table.stdout).toMatch(/SUMMARY\s+DECISION\s+WHY/);
  expect(table.stdout).toContain('@import');
});
