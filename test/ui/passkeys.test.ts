/**
 * Passkeys in the browser UI, against a broker that asks for presence proofs: Chromium's DevTools virtual
 * authenticator (a CTAP2 platform authenticator with user verification) stands in for a fingerprint reader.
 * The walk-through registers a passkey in one step; a held call approved in the UI runs only after a touch with
 * user verification (judged by the fixture server's own log), and one without verification, or cancelled,
 * changes nothing. The journal says how it was approved.
 */
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cleanup, connectWrapped, executedCalls, finishedCalls, fixture, onCleanup, tempDir, textOf, waitForSessions, waitForTicket, type Wrapped } from '../helpers/airlock.js';
import { auditPage, card, screenshot, startUi, type UiSession, waitArmed } from './page-tools.js';

let home: string;
let ui: UiSession;
let notes: Wrapped;
let notesLog: string;
let broker: BrokerClient;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string;

const AUTHENTICATOR = { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true } as const;

async function addAuthenticator(options: Record<string, unknown> = {}): Promise<string> {
  return (await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { ...AUTHENTICATOR, ...options } })).authenticatorId;
}

/** A write_note call held as a ticket, its card in the page, Allow once armed. */
async function heldCall(text: string) {
  const call = notes.client.callTool({ name: 'write_note', arguments: { text } });
  const ticket = await waitForTicket(home, 'write_note');
  const c = card(page, 'write_note');
  await c.waitFor();
  const allow = c.getByRole('button', { name: 'Allow once' });
  await waitArmed(allow);
  return { call, ticket, card: c, allow };
}

const ran = (text: string) => executedCalls(notesLog, 'write_note').some((e) => (e.arguments as { text?: string }).text === text);

beforeAll(async () => {
  home = tempDir('al-uipk-');
  ui = await startUi(home, {}, { presence: true });
  const fx = fixture(home);
  notesLog = fx.log;
  notes = await connectWrapped({ home, server: 'notes', client: 'cursor', command: fx.command, args: fx.args, env: fx.env });
  await waitForSessions(home, 1);
  broker = await BrokerClient.connect({ dir: home, role: 'cli' });
  onCleanup(() => broker.close());
  // no lease: every loosening below takes its own touch (a lower lease is stricter, so this needs no proof)
  await broker.call('settings.set', { key: 'presence-lease', value: '0' });
  page = await ui.openPage('#/approvals');
  cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  authenticatorId = await addAuthenticator();
}, 60_000);

afterAll(cleanup);

describe('passkeys in the browser UI', () => {
  test('the UI is served at localhost, where WebAuthn works', () => {
    expect(new URL(page.url()).hostname).toBe('localhost');
  });

  test('at 127.0.0.1 the card says passkeys need localhost, and links there', async () => {
    const at = await ui.openPage('#/approvals');
    const ip = new URL(at.url());
    ip.hostname = '127.0.0.1';
    // the same session's key is kept per origin: sign in at the IP address itself
    const link = new URL((await broker.call('ui.link', {})).url);
    link.hostname = '127.0.0.1';
    await at.goto(link.href);
    await at.waitForFunction(() => !location.hash.includes('airlock-key'));
    const setup = at.getByRole('region', { name: 'Protect approvals with a passkey' });
    await setup.waitFor();
    const there = setup.getByRole('link', { name: /^http:\/\/localhost:\d+\/$/ });
    expect(await there.getAttribute('href')).toBe(`http://localhost:${ip.port}/`);
    expect(await setup.getByRole('button', { name: 'Create a passkey' }).count()).toBe(0);
    expect(await auditPage(at)).toEqual([]);
    await screenshot(at, 'passkey-at-ip');
    await at.close();
  });

  test('the walk-through registers a passkey with one button and the browser dialog', async () => {
    const setup = page.getByRole('region', { name: 'Protect approvals with a passkey' });
    await setup.waitFor();
    expect(await auditPage(page)).toEqual([]);
    await screenshot(page, 'passkey-setup');
    // another window, open meanwhile: it is told that a passkey now approves
    const watcher = await ui.openPage('#/approvals');
    await watcher.getByRole('region', { name: 'Protect approvals with a passkey' }).waitFor();
    // WebAuthn answers a focused page only
    await page.bringToFront();
    await setup.getByRole('button', { name: 'Create a passkey' }).click();
    await page.getByRole('status').filter({ hasText: /registered: approvals now ask for it/ }).waitFor();
    await setup.waitFor({ state: 'detached' });
    const keys = await broker.call('passkey.list', {});
    const told = watcher.getByRole('status').filter({ hasText: `A passkey “${keys[0]!.name}” was just registered as the first one` });
    await told.waitFor();
    expect(await told.getByRole('link', { name: 'Settings' }).getAttribute('href')).toBe('#/settings');
    expect(await auditPage(watcher)).toEqual([]);
    await screenshot(watcher, 'passkey-told');
    await watcher.close();
    // the window that made it says it made it, not that one appeared
    expect(await page.getByRole('status').filter({ hasText: 'was just registered' }).count()).toBe(0);
    expect(keys).toHaveLength(1);
    expect(keys[0]!.name).toMatch(/ on Linux$/);
    // the authenticator holds it as a discoverable credential for the relying party localhost
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ rpId: 'localhost', isResidentCredential: true });
    expect(Buffer.from(credentials[0]!.credentialId, 'base64').toString('base64url')).toBe(keys[0]!.id);
    const { events } = await broker.call('events', { limit: 50 });
    expect(events.filter((e) => e.type === 'passkey-registered').map((e) => e.detail)).toMatchObject([{ name: keys[0]!.name, first: true }]);
    expect((await broker.call('presence.status', {})).passkeys).toBe(1);
  });

  test('while the dialog is up the page shows what is being allowed; a cancelled touch changes nothing', async () => {
    // an authenticator that waits for a touch which never comes: the dialog stays up until it is cancelled
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
    authenticatorId = await addAuthenticator({ automaticPresenceSimulation: false });
    for (const c of credentials) await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: c });
    const held = await heldCall('cancelled touch');
    await held.allow.click();
    const dialog = page.getByRole('dialog', { name: 'Confirm with your passkey' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(`Allow the held call ${held.ticket.id}: notes → write_note`);
    expect(await auditPage(page)).toEqual([]);
    await screenshot(page, 'passkey-asking');
    // the person changes their mind
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await held.card.getByRole('alert').filter({ hasText: /passkey was not used.*nothing was changed/i }).waitFor();
    await screenshot(page, 'passkey-cancelled');
    expect((await broker.call('pending', {})).map((t) => t.id)).toContain(held.ticket.id);
    expect(ran('cancelled touch')).toBe(false);
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
    authenticatorId = await addAuthenticator();
    for (const c of credentials) await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: c });
    await broker.call('deny', { id: held.ticket.id });
    expect(textOf(await held.call)).toMatch(/denied/i);
  }, 30_000);

  test('a touch without user verification is refused: the call does not run', async () => {
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    const held = await heldCall('unverified touch');
    await held.allow.click();
    const alert = held.card.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/nothing was changed/i);
    // which side said no: the browser (NotAllowedError) or the broker (the assertion's UV flag)
    process.stderr.write(`passkey without user verification: ${await alert.textContent()}\n`);
    await screenshot(page, 'passkey-unverified');
    expect((await broker.call('pending', {})).map((t) => t.id)).toContain(held.ticket.id);
    expect(ran('unverified touch')).toBe(false);
    await broker.call('deny', { id: held.ticket.id });
    expect(textOf(await held.call)).toMatch(/denied/i);
    expect(ran('unverified touch')).toBe(false);
  }, 30_000);

  test('a touch with user verification approves: the fixture runs the call, and the journal says how', async () => {
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
    const held = await heldCall('verified touch');
    let touchedAt = 0;
    cdp.once('WebAuthn.credentialAsserted', () => (touchedAt = performance.now()));
    const clickedAt = performance.now();
    await held.allow.click();
    const [entry] = await finishedCalls(home, 'write_note', { keep: (x) => JSON.stringify(x.arguments).includes('verified touch') && !JSON.stringify(x.arguments).includes('unverified') });
    const ranAt = performance.now();
    expect(textOf(await held.call)).not.toMatch(/denied|refused/i);
    expect(ran('verified touch')).toBe(true);
    const name = (await broker.call('passkey.list', {}))[0]!.name;
    expect(entry!.detail).toBe(`approved by you, with a passkey (${name}) from the browser`);
    await held.card.waitFor({ state: 'detached' });
    expect(touchedAt).toBeGreaterThan(0);
    // the figure: from the authenticator's answer (and from the click) to the call having run
    process.stderr.write(`passkey approval: touch -> call ran ${(ranAt - touchedAt).toFixed(0)} ms; click -> call ran ${(ranAt - clickedAt).toFixed(0)} ms\n`);
  }, 30_000);

  test('Settings adds a second passkey (another authenticator) with a touch of the first', async () => {
    await page.goto(`${ui.origin}/#/settings`);
    const panel = page.getByRole('region', { name: 'Passkeys' });
    const [first] = await broker.call('passkey.list', {});
    await panel.getByRole('row').filter({ hasText: first!.name }).waitFor();
    // a security key beside the built-in one: the new passkey is made there (the first is excluded), and the
    // registration is proved by the first passkey's touch
    const key = await addAuthenticator({ transport: 'usb' });
    let touched = false;
    cdp.once('WebAuthn.credentialAsserted', () => (touched = true));
    await panel.getByRole('button', { name: 'Add a passkey' }).click();
    await panel.getByRole('status').filter({ hasText: `Passkey “${first!.name} (2)” registered.` }).waitFor();
    expect(touched).toBe(true);
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId: key })).credentials).toHaveLength(1);
    const { events } = await broker.call('events', { limit: 50 });
    expect(events.filter((e) => e.type === 'passkey-registered').sort((a, b) => a.seq - b.seq).map((e) => e.detail)).toMatchObject([{ first: true }, { name: `${first!.name} (2)`, first: false, via: { proof: 'webauthn', label: first!.name } }]);
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: key });
  }, 30_000);

  test('Settings lists the passkey and its last use; removing it takes a touch, and the walk-through comes back', async () => {
    await page.goto(`${ui.origin}/#/settings`);
    const panel = page.getByRole('region', { name: 'Passkeys' });
    // the security key is gone: its passkey is removed first, with a touch of the built-in one
    const [name, other] = (await broker.call('passkey.list', {})).map((k) => k.name) as [string, string];
    const otherRow = panel.getByRole('row').filter({ hasText: other });
    await otherRow.getByRole('button', { name: `Remove passkey ${other}` }).click();
    await panel.getByRole('status').filter({ hasText: `Passkey “${other}” removed.` }).waitFor();
    const row = panel.getByRole('row').filter({ hasText: name });
    await row.waitFor();
    expect(await row.textContent()).not.toContain('never');
    expect(await panel.getByRole('button', { name: 'Add a passkey' }).count()).toBe(1);
    expect(await auditPage(page)).toEqual([]);
    await panel.scrollIntoViewIfNeeded();
    await screenshot(page, 'passkey-settings');
    let touched = false;
    cdp.once('WebAuthn.credentialAsserted', () => (touched = true));
    await row.getByRole('button', { name: `Remove passkey ${name}` }).click();
    await panel.getByRole('status').filter({ hasText: `Passkey “${name}” removed.` }).waitFor();
    expect(touched).toBe(true);
    expect(await broker.call('passkey.list', {})).toEqual([]);
    const { events } = await broker.call('events', { limit: 50 });
    expect(events.filter((e) => e.type === 'passkey-removed').sort((a, b) => a.seq - b.seq).map((e) => e.detail)).toMatchObject([{ name: other }, { name, via: { proof: 'webauthn', label: name } }]);
    await page.getByRole('region', { name: 'Protect approvals with a passkey' }).waitFor();
    expect(ui.pageErrors.filter((e) => !/403|Forbidden/.test(e))).toEqual([]);
  }, 30_000);
});
