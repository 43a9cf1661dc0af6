/**
 * Grants in the browser, against a real broker and the wrapped fixture server (whose log is what ran): the
 * card offers grants narrowest first, a grant of 10 calls lets the next calls run without a card and shows in
 * Rules with what is left; the keys answer once armed; Approvals denies all at once; the popup at 420 × 560
 * keeps its answer buttons in view whatever the arguments' length. Every page is axe-clean.
 */
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { cleanup, cliJson, connectWrapped, executedCalls, fixture, tempDir, textOf, waitForSessions, waitForTicket, type Wrapped } from '../helpers/airlock.js';
import { auditPage, card, denyHeldCalls, screenshot, startUi, type UiSession, waitArmed } from './page-tools.js';

let home: string;
let ui: UiSession;
let notes: Wrapped;
let log: string;

beforeAll(async () => {
  home = tempDir('al-uigrants-');
  ui = await startUi(home);
  const fx = fixture(home);
  log = fx.log;
  notes = await connectWrapped({ home, server: 'notes', client: 'claude-desktop', command: fx.command, args: fx.args, env: fx.env });
  await waitForSessions(home, 1);
}, 60_000);

afterAll(cleanup);
afterEach(() => denyHeldCalls(home));

const ran = (text: string) => executedCalls(log, 'write_note').filter((e) => (e.arguments as { text?: string }).text === text).length;

async function audit(page: Page): Promise<void> {
  expect(await auditPage(page)).toEqual([]);
}

describe('grants on the card', () => {
  test('Grant… the next 10 calls: the card shows the options narrowest first, the next calls run without a card, Rules shows what is left', async () => {
    const page = await ui.openPage();
    await page.setViewportSize({ width: 1000, height: 900 });
    const first = notes.client.callTool({ name: 'write_note', arguments: { text: 'granted-0' } });
    const c = card(page, 'write_note');
    await c.waitFor();
    expect(await c.innerText()).toContain('from Claude Desktop');
    const grant = c.getByRole('button', { name: 'Grant…' });
    await waitArmed(grant);
    await screenshot(page, 'card');
    await audit(page);
    await grant.click();
    const length = c.getByRole('group', { name: 'For how long' });
    const radios = length.getByRole('radio');
    expect(await radios.count()).toBe(4);
    // narrowest first, and pre-selected
    expect(await radios.first().isChecked()).toBe(true);
    expect(await length.innerText()).toMatch(/the next\s+calls like this[\s\S]*for 15 minutes[\s\S]*until[\s\S]*always/);
    await screenshot(page, 'card-grants');
    await audit(page);
    await c.getByRole('group', { name: 'Which calls' }).getByRole('radio', { name: 'every call of write_note' }).check();
    await c.getByRole('button', { name: 'Allow this call and grant' }).click();
    expect(textOf(await first)).not.toMatch(/denied/i);
    for (let i = 1; i <= 3; i++) expect(textOf(await notes.client.callTool({ name: 'write_note', arguments: { text: `granted-${i}` } }))).not.toMatch(/denied/i);
    for (let i = 0; i <= 3; i++) expect(ran(`granted-${i}`)).toBe(1);
    const rules = await cliJson<{ id: string; calls?: number; callsGranted?: number }[]>(home, ['rules']);
    expect(rules).toEqual([expect.objectContaining({ calls: 7, callsGranted: 10 })]);

    await page.goto(`${ui.origin}/#/rules`);
    const row = page.getByRole('row').filter({ hasText: 'write_note' });
    await row.getByText('7 of 10 calls left').waitFor();
    await screenshot(page, 'rules-grant');
    await audit(page);
    // one click ends it
    await row.getByRole('button', { name: /^Remove/ }).click();
    await row.waitFor({ state: 'detached' });
    expect(await cliJson<unknown[]>(home, ['rules'])).toEqual([]);
    await page.close();
  });

  test('keys answer once the buttons arm: 1 allows once; on Approvals, Deny all answers every held call', async () => {
    const page = await ui.openPage();
    const one = notes.client.callTool({ name: 'write_note', arguments: { text: 'key-1' } });
    const c = card(page, 'write_note');
    await c.waitFor();
    await waitArmed(c.getByRole('button', { name: 'Allow once' }));
    await page.keyboard.press('1');
    expect(textOf(await one)).not.toMatch(/denied/i);
    expect(ran('key-1')).toBe(1);

    const held = ['bulk-1', 'bulk-2', 'bulk-3'].map((text) => notes.client.callTool({ name: 'write_note', arguments: { text } }));
    for (let i = 0; i < 50 && (await cliJson<unknown[]>(home, ['pending'])).length < 3; i++) await waitForTicket(home, 'write_note');
    const denyAll = page.getByRole('button', { name: 'Deny all 3' });
    await denyAll.waitFor();
    await page.getByRole('button', { name: /^Allow all 3 like this/ }).waitFor();
    await screenshot(page, 'approvals-bulk');
    await audit(page);
    await denyAll.click();
    for (const h of held) expect(textOf(await h)).toMatch(/denied/i);
    for (const t of ['bulk-1', 'bulk-2', 'bulk-3']) expect(ran(t)).toBe(0);
    await page.close();
  });
});

describe('session approvals', () => {
  test('2 approves for the session; Rules lists it, and Revoke makes the next call ask again', async () => {
    const page = await ui.openPage();
    const one = notes.client.callTool({ name: 'delete_all', arguments: {} });
    const c = card(page, 'delete_all');
    await c.waitFor();
    await waitArmed(c.getByRole('button', { name: 'For this session' }));
    await page.keyboard.press('2');
    await one;
    await page.goto(`${ui.origin}/#/rules`);
    const section = page.getByRole('region', { name: 'Approved for the session' });
    await section.getByRole('listitem').filter({ hasText: 'delete_all' }).waitFor();
    await audit(page);
    await section.getByRole('button', { name: /^Revoke/ }).click();
    await section.getByText(/^None/).waitFor();
    const again = notes.client.callTool({ name: 'delete_all', arguments: {} });
    const held = await waitForTicket(home, 'delete_all');
    await cliJson(home, ['deny', held.id, '--json']);
    expect(textOf(await again)).toMatch(/denied/i);
    expect(executedCalls(log, 'delete_all')).toHaveLength(1);
    await page.close();
  });
});

describe('a card that stays honest', () => {
  test('the tool’s own description is shown; when the client stopped waiting the card says so, and a repeat of the call gets the answer', async () => {
    const fx = fixture(home);
    const early = await connectWrapped({ home, server: 'early', client: 'cursor', command: fx.command, args: fx.args, env: { ...fx.env, AIRLOCK_HOLD_ANSWER_MS: '300' } });
    await waitForSessions(home, 2);
    const page = await ui.openPage();
    const first = await early.client.callTool({ name: 'write_note', arguments: { text: 'again' } });
    expect(textOf(first)).toMatch(/call again|still waiting|waiting/i);
    const c = page.getByRole('article').filter({ hasText: 'on early' });
    await c.getByText(/Cursor stopped waiting for this answer/).waitFor();
    expect(await c.innerText()).toMatch(/The tool says it: fixture tool write_note/);
    await screenshot(page, 'card-unwaited');
    await audit(page);
    const allow = c.getByRole('button', { name: 'Allow once' });
    await waitArmed(allow);
    await allow.click();
    await c.waitFor({ state: 'detached' });
    expect(textOf(await early.client.callTool({ name: 'write_note', arguments: { text: 'again' } }))).not.toMatch(/denied|waiting/i);
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);
    await page.close();
  });
});

describe('the popup at 420 × 560', () => {
  test('its answer buttons stay in view whatever the arguments’ length, and Esc denies', async () => {
    const long = Array.from({ length: 80 }, (_, i) => `line ${i}: ${'x'.repeat(60)}`).join('\n');
    const call = notes.client.callTool({ name: 'write_note', arguments: { text: long } });
    const ticket = await waitForTicket(home, 'write_note');
    const page = await ui.openPage(`#/ticket/${ticket.id}`);
    await page.setViewportSize({ width: 420, height: 560 });
    const deny = page.getByRole('button', { name: 'Deny' });
    await waitArmed(deny);
    for (const name of ['Deny', 'Allow once', 'For this session', 'Grant…']) {
      const box = (await page.getByRole('button', { name, exact: true }).boundingBox())!;
      expect(box.y + box.height, `${name} is in view`).toBeLessThanOrEqual(560);
      expect(box.x + box.width).toBeLessThanOrEqual(420);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await screenshot(page, 'popup-420x560');
    await audit(page);
    await page.keyboard.press('Escape');
    expect(textOf(await call)).toMatch(/denied/i);
    await page.close();
  });

  test('every page works at 420 px wide: nothing wider than the window', async () => {
    const page = await ui.openPage();
    await page.setViewportSize({ width: 420, height: 560 });
    for (const hash of ['#/approvals', '#/activity', '#/servers', '#/tools', '#/rules', '#/settings']) {
      await page.goto(`${ui.origin}/${hash}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      const wide = await page.evaluate(() => {
        const over = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > 421 && !el.closest('.scroll'));
        return { width: document.documentElement.scrollWidth, over: over.slice(-3).map((el) => `${el.tagName}.${el.className}`) };
      });
      // what sticks out (and is not in a scrolling box of its own) is named, to find it
      expect(wide.width, `${hash} fits 420 px (${wide.over.join(', ')})`).toBeLessThanOrEqual(420);
    }
    await page.close();
  });
});
