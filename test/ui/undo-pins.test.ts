/**
 * Undo, rollback and pinned tool definitions as a person uses them in the browser: a real `airlock daemon --ui`,
 * the real filesystem server and the fixture server wrapped by `airlock wrap`, driven in Debian's Chromium.
 * Controls are found by role and accessible name; what happened is judged by the files on disk, the fixture's
 * log and the CLI's view of the broker, never by what the page says.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { HistoryItem, PinInfo, Ticket } from '../../proxy-core/src/protocol/api.js';
import {
  cleanup,
  cli,
  cliJson,
  connectWrapped,
  executedCalls,
  FILESYSTEM,
  fixture,
  tempDir,
  textOf,
  untilBroker,
  waitForSessions,
  waitForTicket,
  type Wrapped,
} from '../helpers/airlock.js';
import { auditPage, card, denyHeldCalls, screenshot, startUi, type UiSession, waitArmed } from './page-tools.js';

let home: string;
let ui: UiSession;
let files: Wrapped;
let filesRoot: string;
let rug: Wrapped;
let rugLog: string;

beforeAll(async () => {
  home = tempDir('al-uiundo-');
  ui = await startUi(home);
  filesRoot = realpathSync(tempDir('al-uiundofs-'));
  mkdirSync(join(filesRoot, 'notes'));
  files = await connectWrapped({ home, server: 'files', client: 'cursor', command: process.execPath, args: [FILESYSTEM, filesRoot] });
  // echo is let through by a rule until its definition changes under it (after its first call)
  expect((await cli(home, ['rules', 'add', 'allow', '--server', 'rug', '--tool', 'echo'])).code).toBe(0);
  const fx = fixture(home, ['--rug-pull-after-first-call']);
  rugLog = fx.log;
  rug = await connectWrapped({ home, server: 'rug', client: 'cursor', command: fx.command, args: fx.args, env: fx.env });
  await waitForSessions(home, 2);
}, 60_000);

afterAll(cleanup);
afterEach(() => denyHeldCalls(home));

const openPage = (hash?: string) => ui.openPage(hash);

/** The journal entry of the write of `path`, once what undo can do for it is known. */
function writeEntry(path: string): Promise<HistoryItem> {
  return untilBroker(
    home,
    (e) => e.type === 'call' || e.type === 'undo-known',
    async (c) =>
      (await c.call('history', { tool: 'write_file', limit: 50 })).calls.find(
        (x) => x.client !== 'airlock-undo' && x.arguments.includes(JSON.stringify(path).slice(1, -1)) && x.undo?.state === 'ready',
      ),
    8000,
    `the undoable journal entry of the write of ${path}`,
  );
}

/** Let write_file on files run without asking (once: the tests after the first share it). */
async function allowWrites(): Promise<void> {
  const rules = await cliJson<{ server: string; tool: string; action: string }[]>(home, ['rules', 'list']);
  if (rules.some((r) => r.server === 'files' && r.tool === 'write_file' && r.action === 'allow')) return;
  expect((await cli(home, ['rules', 'add', 'allow', '--server', 'files', '--tool', 'write_file'])).code).toBe(0);
}

const sessionOf = async (server: string): Promise<string> => (await cliJson<{ sessions: { id: string; server: string }[] }>(home, ['status'])).sessions.find((s) => s.server === server)!.id;

describe('undo from the browser', () => {
  test('a write_file approved from its card (which says it can be undone), then undone from Activity: the bytes are back', async () => {
    const target = join(filesRoot, 'notes', 'plan.md');
    const before = 'step one\nstep two\n\u00e9t\u00e9 \u{1F600}\n';
    writeFileSync(target, before);

    const page = await openPage();
    const call = files.client.callTool({ name: 'write_file', arguments: { path: target, content: 'replaced by the model\n' } });
    const c = card(page, 'write_file');
    await c.waitFor();
    await c.getByText('Can be undone: a snapshot of the file is kept').waitFor();
    const allow = c.getByRole('button', { name: 'Allow once' });
    await waitArmed(allow);
    await screenshot(page, 'card-undoable');
    await allow.click();
    expect(textOf(await call)).not.toMatch(/denied/i);
    expect(readFileSync(target, 'utf8')).toBe('replaced by the model\n');
    const entry = await writeEntry(target);

    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Activity' }).click();
    const list = page.getByRole('list', { name: 'Calls, newest first' });
    await list.getByRole('button').filter({ hasText: 'write_file' }).first().click();
    const detail = page.getByRole('region', { name: /write_file on files/ });
    const undo = detail.getByRole('button', { name: 'Undo… this call' });
    await undo.waitFor();
    expect(await detail.innerText()).toMatch(/Undoable by file snapshot/);
    expect(await detail.innerText()).toContain(target);
    // the session this call ran in can be rolled back from here too
    const short = (await sessionOf('files')).slice(0, 8);
    await detail.getByRole('button', { name: `Roll back session ${short}`, exact: true }).waitFor();
    expect(await auditPage(page)).toEqual([]);
    await screenshot(page, 'activity-undo');

    // a preview first: what will be put back, before anything is done
    await undo.click();
    const preview = detail.getByRole('group', { name: /put this file back as it was before the call/ });
    await preview.waitFor();
    expect(await preview.innerText()).toContain(target);
    expect(readFileSync(target, 'utf8')).toBe('replaced by the model\n');
    await screenshot(page, 'activity-undo-preview');
    await preview.getByRole('button', { name: 'Undo now' }).click();
    const result = detail.getByRole('region', { name: /^Undone:/ });
    await result.waitFor();
    // ground truth: the file holds its bytes from before the call
    expect(readFileSync(target, 'utf8')).toBe(before);
    // the result has the focus (the button it replaced is gone), and names the file put back
    await expect.poll(() => result.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await result.innerText()).toContain(target);
    // the row follows the broker's events: "already undone by" the undo's own journal entry, and marked in the list
    await detail.getByText(/^Already undone by undo-/).waitFor();
    const history = await cliJson<HistoryItem[]>(home, ['history']);
    expect(history.find((h) => h.id === entry.id)!.undo).toMatchObject({ state: 'undone' });
    await list.getByRole('button', { name: /Undone: write_file/ }).waitFor();
    expect(await auditPage(page)).toEqual([]);
    await screenshot(page, 'activity-undone');
    await page.close();
  });

  test('a file changed since its call: the undo says so, and only "Undo anyway" overwrites it', async () => {
    await allowWrites();
    const target = join(filesRoot, 'notes', 'shared.md');
    writeFileSync(target, 'as it was\n');
    expect(textOf(await files.client.callTool({ name: 'write_file', arguments: { path: target, content: 'by the model\n' } }))).not.toMatch(/denied/i);
    await writeEntry(target);
    writeFileSync(target, 'edited by a person afterwards\n');

    const page = await openPage('#/activity');
    const list = page.getByRole('list', { name: 'Calls, newest first' });
    await list.getByRole('button').filter({ hasText: 'write_file' }).first().click();
    const detail = page.getByRole('region', { name: /write_file on files/ });
    await detail.getByRole('button', { name: 'Undo… this call' }).click();
    await detail.getByRole('button', { name: 'Undo now' }).click();
    const conflict = detail.getByRole('region', { name: /^Not undone: the file changed since the call/ });
    await conflict.waitFor();
    expect(await conflict.innerText()).toMatch(/Undo anyway puts back this file as it was before the call, overwriting what it holds now/);
    expect(readFileSync(target, 'utf8')).toBe('edited by a person afterwards\n');
    await screenshot(page, 'activity-undo-conflict');
    await conflict.getByRole('button', { name: 'Undo anyway' }).click();
    await detail.getByRole('region', { name: /^Undone:/ }).waitFor();
    expect(readFileSync(target, 'utf8')).toBe('as it was\n');
    await page.close();
  });

  test('Roll back session asks first (Esc cancels), then undoes the session and reports per call', async () => {
    const created = join(filesRoot, 'notes', 'created-by-the-model.md');
    expect(textOf(await files.client.callTool({ name: 'write_file', arguments: { path: created, content: 'new\n' } }))).not.toMatch(/denied/i);
    await writeEntry(created);
    expect(existsSync(created)).toBe(true);

    const page = await openPage('#/activity');
    const list = page.getByRole('list', { name: 'Calls, newest first' });
    await list.getByRole('button').filter({ hasText: 'write_file' }).first().click();
    const detail = page.getByRole('region', { name: /write_file on files/ });
    const short = (await sessionOf('files')).slice(0, 8);
    const rollback = detail.getByRole('button', { name: `Roll back session ${short}`, exact: true });
    await rollback.click();
    const dialog = page.getByRole('dialog', { name: `Roll back session ${short}?` });
    await dialog.waitFor();
    // the safe answer has the focus; Esc closes the dialog and gives the focus back
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Cancel');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => rollback.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(existsSync(created)).toBe(true);

    await rollback.click();
    await dialog.getByRole('button', { name: 'Roll back', exact: true }).click();
    const report = detail.getByRole('region', { name: new RegExp(`^Rollback of session ${short}:`) });
    await report.waitFor();
    // ground truth: the file the session created is gone
    expect(existsSync(created)).toBe(false);
    const text = await report.innerText();
    expect(text).toMatch(/calls? undone/);
    expect(text).toContain(created);
    // what was undone before is listed as not undoable now, with why
    expect(text).toMatch(/already undone/);
    await expect.poll(() => report.evaluate((el) => el === document.activeElement)).toBe(true);
    await report.scrollIntoViewIfNeeded();
    await screenshot(page, 'activity-rollback');
    await page.close();
  });
});

describe('always allow what can be undone', () => {
  test('"Every call that Airlock can undo": the next call with a snapshot runs unasked; one it cannot undo still asks', async () => {
    const page = await openPage();
    const first = join(filesRoot, 'made-1');
    const call = files.client.callTool({ name: 'create_directory', arguments: { path: first } });
    const c = card(page, 'create_directory');
    await c.waitFor();
    const always = c.getByRole('button', { name: 'Grant…' });
    await waitArmed(always);
    await always.click();
    const chooser = c.getByRole('group', { name: 'Which calls' });
    await c.getByRole('group', { name: 'For how long' }).getByRole('radio', { name: /^always/ }).check();
    await chooser.getByRole('radio', { name: /^every call of create_directory that Airlock can undo/ }).check();
    await chooser.scrollIntoViewIfNeeded();
    await screenshot(page, 'card-always-undoable');
    await c.getByRole('button', { name: 'Allow this call and grant' }).click();
    expect(textOf(await call)).not.toMatch(/denied/i);
    expect(existsSync(first)).toBe(true);
    const rule = (await cliJson<{ id: string; server: string; tool: string; undoable?: boolean }[]>(home, ['rules'])).find((r) => r.tool === 'create_directory');
    expect(rule).toMatchObject({ server: 'files', undoable: true });
    try {
      // an absolute path is snapshotted: it runs without asking
      const second = join(filesRoot, 'made-2');
      expect(textOf(await files.client.callTool({ name: 'create_directory', arguments: { path: second } }))).not.toMatch(/denied/i);
      expect(existsSync(second)).toBe(true);
      // a relative one cannot be: it asks, and nothing is made
      const held = files.client.callTool({ name: 'create_directory', arguments: { path: 'made-3' } });
      const ticket = await waitForTicket(home, 'create_directory');
      expect((ticket as unknown as { undoable?: unknown }).undoable ?? null).toBeNull();
      expect((await cli(home, ['deny', ticket.id])).code).toBe(0);
      expect(textOf(await held)).toMatch(/denied/i);
    } finally {
      expect((await cli(home, ['rules', 'remove', rule!.id])).code).toBe(0);
    }
    await page.close();
  });
});

describe('undo last', () => {
  test('Undo last in the Activity header undoes the newest call that can be, and shows which', async () => {
    await allowWrites();
    const target = join(filesRoot, 'notes', 'last.md');
    writeFileSync(target, 'kept\n');
    expect(textOf(await files.client.callTool({ name: 'write_file', arguments: { path: target, content: 'the newest change\n' } }))).not.toMatch(/denied/i);
    await writeEntry(target);
    const page = await openPage('#/activity');
    await page.getByRole('list', { name: 'Calls, newest first' }).getByRole('button').first().waitFor();
    await page.getByRole('button', { name: 'Undo last', exact: true }).click();
    const result = page.getByRole('region', { name: /^Undone \(write_file\):/ });
    await result.waitFor();
    expect(readFileSync(target, 'utf8')).toBe('kept\n');
    await page.getByRole('button', { name: 'Show the call' }).click();
    await page.getByRole('region', { name: /write_file on files/ }).getByText(/^Already undone by undo-/).waitFor();
    await page.close();
  });
});

describe('pinned tool definitions in the browser', () => {
  test('a tool whose definition changed after its first call: the card shows the change; Accept new definition pins it and the call still waits', async () => {
    expect(textOf(await rug.client.callTool({ name: 'echo', arguments: { text: 'one' } }))).not.toMatch(/denied/i);
    const page = await openPage();
    const call = rug.client.callTool({ name: 'echo', arguments: { text: 'two' } });
    const c = card(page, 'echo');
    await c.waitFor();
    const warning = c.getByRole('region', { name: 'The definition of echo changed since you first saw it' });
    await warning.waitFor();
    expect(await warning.innerText()).toMatch(/Changed: description and input schema/);
    const diff = warning.getByRole('group', { name: 'Changes to the definition of echo' });
    expect(await diff.innerText()).toContain('fixture tool echo');
    expect(await diff.innerText()).toMatch(/you must read ~\/\.ssh\/id_rsa/);
    expect(await auditPage(page)).toEqual([]);
    const accept = warning.getByRole('button', { name: 'Accept new definition' });
    await waitArmed(accept);
    await warning.scrollIntoViewIfNeeded();
    await screenshot(page, 'card-pin-change');

    // the Tools page shows the same change on echo, with its own way to accept it
    const tools = await openPage('#/tools/rug');
    const echo = tools.getByRole('article').filter({ has: tools.getByRole('heading', { name: 'echo', exact: true }) });
    const toolWarning = echo.getByRole('region', { name: 'The definition of echo changed since you first saw it' });
    await toolWarning.getByRole('button', { name: 'Accept new definition of echo' }).waitFor();
    expect(await toolWarning.getByRole('group', { name: 'Changes to the definition of echo' }).innerText()).toMatch(/id_rsa/);
    await echo.getByText('Definition pinned').waitFor({ state: 'detached' });

    const ticket = (await waitForTicket(home, 'echo')) as unknown as Ticket;
    await accept.click();
    await warning.getByText(/You accepted the new definition of echo/).waitFor();
    // the focus stays in the card, on what replaced the button
    const acceptedNote = warning.getByText(/You accepted the new definition of echo/);
    await expect.poll(() => acceptedNote.evaluate((el) => el === document.activeElement)).toBe(true);
    // the Tools page follows the broker's event: echo is pinned again
    await echo.getByText('Definition pinned').waitFor();
    await tools.close();
    const pins = await cliJson<PinInfo[]>(home, ['pins', 'list', 'rug']);
    expect(pins.find((p) => p.tool === 'echo')).toMatchObject({ status: 'pinned', fingerprint: ticket.pinChange!.current });
    // accepting answered nothing: the call still waits, and has not run
    expect((await cliJson<{ id: string }[]>(home, ['pending'])).map((t) => t.id)).toContain(ticket.id);
    expect(executedCalls(rugLog, 'echo').map((e) => e.arguments)).toEqual([{ text: 'one' }]);
    await screenshot(page, 'card-pin-accepted');

    const allow = c.getByRole('button', { name: 'Allow once' });
    await waitArmed(allow);
    await allow.click();
    expect(textOf(await call)).not.toMatch(/denied/i);
    expect(executedCalls(rugLog, 'echo').map((e) => e.arguments)).toEqual([{ text: 'one' }, { text: 'two' }]);
    await page.close();
  });

});

describe('declared inverses on the Tools page', () => {
  test('declared from the form, shown on the tool, and removed: the broker holds what the page says', async () => {
    const page = await openPage('#/tools/rug');
    const panel = page.getByRole('region', { name: 'Undo by inverse' });
    await panel.getByText('No inverse is declared for rug.').waitFor();
    const form = panel.getByRole('form', { name: 'Declare an inverse for rug' });
    await form.getByLabel('Tool', { exact: true }).fill('write_note');
    await form.getByLabel('Inverse', { exact: true }).fill('delete_all');
    await form.getByLabel(/^Mapping/).fill('text = text');
    await form.getByRole('button', { name: 'Declare inverse' }).click();
    await panel.getByRole('status').filter({ hasText: 'Declared: write_note=delete_all:text=text.' }).waitFor();
    type Declared = { server: string; tool: string; inverse: string; from: string; map?: Record<string, string> };
    const declared = (await cliJson<Declared[]>(home, ['inverses', 'list'])).filter((d) => d.server === 'rug');
    expect(declared).toMatchObject([{ tool: 'write_note', inverse: 'delete_all', from: 'args', map: { text: 'text' } }]);
    // the list and the tool follow the broker's event
    const row = panel.getByRole('row').filter({ hasText: 'write_note' });
    await row.waitFor();
    const note = page.getByRole('article').filter({ has: page.getByRole('heading', { name: 'write_note', exact: true }) });
    await note.getByText(/by calling delete_all with text = text from the call’s arguments/).waitFor();
    expect(await auditPage(page)).toEqual([]);
    await panel.scrollIntoViewIfNeeded();
    await screenshot(page, 'tools-inverses');
    await row.getByRole('button', { name: 'Remove the inverse of write_note' }).click();
    await panel.getByText('No inverse is declared for rug.').waitFor();
    expect((await cliJson<Declared[]>(home, ['inverses', 'list'])).filter((d) => d.server === 'rug')).toEqual([]);
    await page.close();
  });
});

describe('the E-Stop banner', () => {
  test('an E-Stop the tripwire engaged says so and why, live and in a window opened afterwards', async () => {
    await allowWrites();
    expect((await cli(home, ['settings', 'tripwire-calls', '1'])).code).toBe(0);
    const page = await openPage('#/activity');
    await page.getByRole('heading', { name: 'Activity' }).waitFor();
    for (const name of ['trip-1.md', 'trip-2.md']) {
      await files.client.callTool({ name: 'write_file', arguments: { path: join(filesRoot, 'notes', name), content: 'x\n' } });
    }
    // the calls of the tests before may still be in the tripwire's window: the count is at least 2
    const why = /^E-Stop turned itself on: \d+ changing calls in 10 s/;
    await page.getByText(why).waitFor();
    expect((await cliJson<{ estop: boolean }>(home, ['status'])).estop).toBe(true);
    // a window opened now learns the cause from the journal's last estop-on (status says only that it is on)
    const later = await openPage('#/rules');
    await later.getByText(why).waitFor();
    expect(await auditPage(later)).toEqual([]);
    await screenshot(later, 'estop-tripwire');
    await later.getByRole('button', { name: 'Release E-Stop' }).click();
    await later.getByText(why).waitFor({ state: 'detached' });
    await page.getByText(why).waitFor({ state: 'detached' });
    expect((await cli(home, ['settings', 'tripwire-calls', '30'])).code).toBe(0);
    await later.close();
    await page.close();
  });

  test('no page error and no CSP violation on the way', () => {
    expect(ui.pageErrors).toEqual([]);
  });
});
