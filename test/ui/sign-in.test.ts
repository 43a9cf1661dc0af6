/**
 * Signing in as a person does, in Chromium: the key leaves the address at once, a reload keeps the tab signed
 * in, a tab opened without a link (the cookie only) can change nothing and says how to sign in, and the live
 * stream (opened with one-time tickets) still shows what the CLI does. The broker's state via the CLI is the
 * ground truth.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanup, cli, cliJson, tempDir } from '../helpers/airlock.js';
import { startUi, type UiSession } from './page-tools.js';

let home: string;
let ui: UiSession;

beforeAll(async () => {
  home = tempDir('al-uisign-');
  ui = await startUi(home);
}, 60_000);
afterAll(cleanup);

const estop = async () => (await cliJson<{ estop: boolean }>(home, ['status'])).estop;
const BANNER = 'E-Stop is on: every call is refused';

describe('signing in', () => {
  test('the key leaves the address; a reload stays signed in and live', async () => {
    const page = await ui.openPage('#/rules');
    await page.getByRole('heading', { name: 'Rules', exact: true }).waitFor();
    expect(page.url()).not.toContain('airlock-key');
    // the address the tab shows and keeps in its history holds the route only
    expect(await page.evaluate(() => location.hash)).toBe('#/rules');
    await page.reload();
    await page.getByRole('heading', { name: 'Rules', exact: true }).waitFor();
    await page.getByRole('button', { name: 'E-Stop', exact: true }).click();
    await page.getByText(BANNER).waitFor();
    expect(await estop()).toBe(true);
    // the stream after the reload: the CLI's change shows without a reload
    expect((await cli(home, ['estop', 'off'])).code).toBe(0);
    await page.getByText(BANNER).waitFor({ state: 'detached' });
    await page.close();
  });

  test('a tab with the cookie but no key changes nothing and says how to sign in', async () => {
    const signedIn = await ui.openPage('#/approvals');
    const context = signedIn.context();
    const bare = await context.newPage();
    await bare.goto(`${ui.origin}/#/rules`);
    await bare.getByText(/airlock ui/).first().waitFor();
    // the cookie is there, the key is not: the page's own fetch is refused
    const status = await bare.evaluate(async () => (await fetch('/api/call/estop', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"on":true}' })).status);
    expect(status).toBe(401);
    expect(await estop()).toBe(false);
    await bare.close();
    await signedIn.close();
  });
});
