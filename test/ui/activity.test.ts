/**
 * Activity as a person reads it, in Chromium against a real `airlock daemon --ui` with the filesystem server
 * wrapped: each row says what the call named, who decided and why, and what undo can do; the presets narrow
 * the list; a session reads as a story; the filter downloads as the same CSV the CLI writes; an undo's entry is
 * marked as one. At 420 px wide too; axe finds nothing. Ground truth is the broker's journal, via the CLI.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { HistoryItem } from '../../proxy-core/src/protocol/api.js';
import { EXPORT_COLUMNS } from '../../proxy-core/src/protocol/activity-export.js';
import { cleanup, cli, cliJson, cliUndo, connectWrapped, FILESYSTEM, finishedCalls, tempDir, waitForSessions, type Wrapped } from '../helpers/airlock.js';
import { auditPage, screenshot, startUi, type UiSession } from './page-tools.js';

let home: string;
let ui: UiSession;
let files: Wrapped;
let root: string;
let session: string;

beforeAll(async () => {
  home = tempDir('al-uiact-');
  ui = await startUi(home);
  root = realpathSync(tempDir('al-uiactfs-'));
  mkdirSync(join(root, 'notes'));
  writeFileSync(join(root, 'notes', 'plan.md'), 'the plan\n');
  for (const tool of ['write_file', 'read_text_file', 'list_directory']) expect((await cli(home, ['rules', 'add', 'allow', '--server', 'files', '--tool', tool])).code).toBe(0);
  files = await connectWrapped({ home, server: 'files', client: 'claude-desktop', command: process.execPath, args: [FILESYSTEM, root] });
  await waitForSessions(home, 1);
  const call = async (name: string, args: Record<string, unknown>) => expect((await files.client.callTool({ name, arguments: args })).isError).toBeFalsy();
  await call('list_directory', { path: join(root, 'notes') });
  await call('read_text_file', { path: join(root, 'notes', 'plan.md') });
  await call('write_file', { path: join(root, 'notes', 'a.md'), content: 'first draft\n' });
  await call('write_file', { path: join(root, 'notes', 'plan.md'), content: 'a new plan\n' });
  const [newest] = await finishedCalls(home, 'write_file', { count: 2, keep: (x) => x.undo?.state === 'ready' });
  // the newest write undone from the CLI: its undo is an entry of its own
  expect((await cliUndo(home, [newest!.id])).report.ok).toBe(true);
  session = newest!.sessionId!;
}, 90_000);

afterAll(cleanup);

describe('Activity', () => {
  test('rows, presets, the story and the export', async () => {
    const page = await ui.openPage('#/activity');
    await page.setViewportSize({ width: 1280, height: 860 });
    const list = page.getByRole('list', { name: 'Calls, newest first' });
    const row = (text: string | RegExp) => list.getByRole('button').filter({ hasText: text });
    await row('list_directory').waitFor();
    // what each call named, who decided, what undo can do
    const read = await row('read_text_file').innerText();
    expect(read).toContain(join(root, 'notes', 'plan.md'));
    expect(read).toMatch(/allowed by your rule /);
    expect(read).toContain('nothing to undo');
    // the client by the name people know it by, not the id its wrapper was started with
    expect(read).toContain('Claude Desktop · files');
    const write = await row(join(root, 'notes', 'a.md')).innerText();
    expect(write).toContain('undoable');
    await row(/^undo/).first().waitFor();
    await list.getByRole('button', { name: /Undone: write_file/ }).waitFor();
    expect(await list.getByRole('button', { name: /Undone: write_file/ }).count()).toBe(1);
    expect(await auditPage(page)).toEqual([]);
    await screenshot(page, 'activity');

    // "This session" narrows to the newest session (no row open): its id becomes the filter
    await page.getByRole('group', { name: 'Presets' }).getByRole('button', { name: 'This session' }).click();
    await page.getByRole('button', { name: 'This session', pressed: true }).waitFor();
    const journal = await cliJson<HistoryItem[]>(home, ['history', '--session', session]);
    await page.getByText(`${journal.length} calls shown`).waitFor();
    await page.getByRole('button', { name: 'Last hour' }).click();
    await page.getByRole('button', { name: 'Last hour', pressed: true }).waitFor();
    expect(await page.getByLabel('From').inputValue()).not.toBe('');

    // the export downloads the same filter in the CLI's format
    await page.getByLabel('Export format').selectOption('csv');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export these calls' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^airlock-activity-.*\.csv$/);
    const csv = readFileSync((await download.path())!, 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe(EXPORT_COLUMNS.join(','));
    expect(lines).toHaveLength(journal.length + 1);
    const cliCsv = await cli(home, ['history', '--export', 'csv', '--session', session]);
    expect(csv.split('\r\n').slice(1)).toEqual(cliCsv.stdout.split('\r\n').slice(1));

    // the session as a story, from a row's detail
    await row('read_text_file').click();
    const detail = page.getByRole('region', { name: /read_text_file on files/ });
    await detail.getByText(/Claude Desktop's files \(started /).first().waitFor();
    await detail.getByRole('button', { name: 'Tell this session as a story' }).click();
    const story = page.getByRole('region', { name: "Claude Desktop's files" });
    await story.getByText(/still connected/).waitFor();
    const sentences = await story.getByRole('listitem').allInnerTexts();
    expect(sentences).toHaveLength(journal.length);
    expect(sentences[0]).toMatch(/Claude Desktop's files listed .*notes \(nothing to undo\) — allowed by your rule /);
    expect(sentences.join('\n')).toMatch(/Claude Desktop's files wrote .*a\.md \(undoable\) — allowed by your rule/);
    // the write undone afterwards says so (the undo itself runs in Airlock's own session, not this one)
    expect(sentences.at(-1)).toMatch(/Claude Desktop's files wrote .*plan\.md \(undone\) — allowed by your rule/);
    await detail.getByRole('button', { name: 'Close details' }).click();
    expect(await auditPage(page)).toEqual([]);
    await screenshot(page, 'activity-story');

    // 420 px wide: nothing runs off the side, the story and the list still read
    await page.setViewportSize({ width: 420, height: 860 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await screenshot(page, 'activity-story-narrow');
    await story.getByRole('button', { name: 'Back to all calls' }).click();
    await row('list_directory').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    expect(await auditPage(page)).toEqual([]);
    await screenshot(page, 'activity-narrow');
    expect(ui.pageErrors).toEqual([]);
    await page.close();
  });
});
