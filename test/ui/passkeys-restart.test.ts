/**
 * A broker restarted with `--no-presence` after a passkey was registered: the page says proofs were in use
 * before this start, and offers to confirm it with the passkey. The confirmation takes a real touch (Chromium's
 * DevTools virtual authenticator, the same one the passkey was made with), and the louder warning goes.
 */
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, expect, test } from 'vitest';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cleanup, onCleanup, tempDir } from '../helpers/airlock.js';
import { startUiAirlock } from '../helpers/e2e.js';
import { auditPage, screenshot, startUi } from './page-tools.js';

afterAll(cleanup);

const AUTHENTICATOR = { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true } as const;

/** Sign `page` in to the broker of `home` (a fresh link from it) and open the approvals. */
async function signIn(page: Page, home: string, origin: string): Promise<void> {
  const broker = await BrokerClient.connect({ dir: home, role: 'cli' });
  try {
    await page.goto((await broker.call('ui.link', {})).url);
  } finally {
    broker.close();
  }
  await page.waitForFunction(() => !location.hash.includes('airlock-key'));
  await page.goto(`${origin}/#/approvals`);
}

test('a restart without proofs after a passkey was registered is said until the passkey confirms it', async () => {
  const home = tempDir('al-uipk-restart-');
  const ui = await startUi(home, {}, { presence: true });
  const page = await ui.openPage('#/approvals');
  const cdp: CDPSession = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  await cdp.send('WebAuthn.addVirtualAuthenticator', { options: AUTHENTICATOR });
  await page.bringToFront();
  await page.getByRole('region', { name: 'Protect approvals with a passkey' }).getByRole('button', { name: 'Create a passkey' }).click();
  await page.getByRole('status').filter({ hasText: /registered: approvals now ask for it/ }).waitFor();
  await ui.daemon.stop();

  // the same data dir, now without proofs: something (or someone) restarted it this way
  const again = await startUiAirlock({ home });
  onCleanup(() => again.daemon.stop());
  await signIn(page, home, again.origin);
  const warning = page.getByRole('status').filter({ hasText: /^Presence proofs are off/ });
  await warning.waitFor();
  await expect.poll(() => warning.textContent()).toMatch(/Proofs were in use before this start/);
  const confirm = warning.getByRole('button', { name: 'It was me: confirm with my passkey' });
  expect(await auditPage(page)).toEqual([]);
  await screenshot(page, 'passkey-restart');
  await confirm.click();
  // the touch confirmed it: the warning stays (proofs are still off) but no longer says something else did it
  await expect.poll(() => warning.textContent(), { timeout: 15_000 }).not.toMatch(/Proofs were in use before this start/);
  expect(await warning.textContent()).toMatch(/^Presence proofs are off/);
  const broker = await BrokerClient.connect({ dir: home, role: 'cli' });
  onCleanup(() => broker.close());
  const { events } = await broker.call('events', { limit: 100 });
  expect(events.filter((e) => e.type === 'presence-confirmed').map((e) => e.detail)).toMatchObject([{ via: { proof: 'webauthn', channel: 'ui' } }]);
}, 120_000);
