/**
 * The desktop app end to end, driven as a person would: its real built main entry under plain Node with the
 * electron stand-in, the real broker it starts (or attaches to), a real wrapped fixture server, and the CLI
 * and the fixture's own log as ground truth. No Electron binary runs (see electron-stand-in.mjs).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, expect, test } from 'vitest';
import {
  cleanup,
  cli,
  cliJson,
  connectWrapped,
  executedCalls,
  fixture,
  FIXTURE_SERVER,
  onCleanup,
  startDaemon,
  tempDir,
  textOf,
  waitForTicket,
} from '../helpers/airlock.js';
import { type App, click, launchApp, menuItem, personCall, type Rec, type WindowInfo } from './app.js';
import { mockPackagedApp } from './mock-app.js';

afterEach(cleanup);

const SHORTCUT = 'CommandOrControl+Alt+Shift+K';
const trayImage = (name: string) => (r: Rec) => r.type === 'tray-image' && String(r.image).endsWith(`/${name}.png`);
const estopIs = async (home: string) => (await cliJson<{ estop: boolean }>(home, ['status'])).estop;

/** The popup the next ticket opens, and that ticket's id (from the page's route). */
async function nextPopup(app: App, after: number): Promise<{ window: WindowInfo; ticketId: string }> {
  const created = await app.next(after, (r) => r.type === 'window-created', 'a popup');
  const loaded = await app.next(after, (r) => r.type === 'window-loaded' && r.window === created.window, 'the popup page');
  const window = (await app.snapshot()).windows.find((w) => w.id === created.window)!;
  const match = /#\/ticket\/(.+)$/.exec(String(loaded.url));
  expect(match, String(loaded.url)).not.toBeNull();
  return { window, ticketId: decodeURIComponent(match![1]!) };
}

test('tray, E-Stop from the tray and the shortcut, one popup per call answered through the page, quit asks while servers run', async () => {
  const home = tempDir();
  const xdg = tempDir('al-xdg-');
  const app = launchApp({ home, env: { XDG_CONFIG_HOME: xdg } });

  // the tray, with its E-Stop item, once the broker the app started is up
  await app.until((r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === 'none-waiting'), 'the tray of a running broker');
  let s = await app.snapshot();
  expect(menuItem(s, 'estop')).toMatchObject({ type: 'checkbox', checked: false, enabled: true, accelerator: SHORTCUT });
  expect(s.trays[0]!.image).toMatch(/build\/icons\/tray\/idle\.png$/);
  expect(s.shortcuts).toEqual([SHORTCUT]);
  expect(s.schemes).toEqual([{ scheme: 'airlock', privileges: expect.objectContaining({ standard: true, secure: true }) }]);
  expect(app.log('broker')).toMatch(/broker running/);

  // the shortcut engages E-Stop from anywhere, at once, and the app says it happened
  let mark = app.last();
  await app.command('shortcut', { accelerator: SHORTCUT });
  await app.next(mark, trayImage('estop'), 'the E-Stop icon');
  expect(await estopIs(home)).toBe(true);
  const notice = await app.next(mark, (r) => r.type === 'notification-shown', 'the notice');
  expect(notice.options).toMatchObject({ title: 'E-Stop is on' });
  expect(menuItem(await app.snapshot(), 'estop')?.checked).toBe(true);

  // the tray's item turns it off again
  mark = app.last();
  await app.command('click', { item: 'estop' });
  await app.next(mark, trayImage('idle'), 'the idle icon');
  expect(await estopIs(home)).toBe(false);
  mark = app.last();
  await app.command('click', { item: 'estop' });
  await app.next(mark, trayImage('estop'), 'E-Stop from the tray');
  expect(await estopIs(home)).toBe(true);
  mark = app.last();
  await app.command('click', { item: 'estop' });
  await app.next(mark, trayImage('idle'), 'E-Stop off from the tray');

  // a wrapped server's call that asks: a popup of its own, shown without taking the keyboard
  const fx = fixture(home);
  const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
  mark = app.last();
  const first = w.client.callTool({ name: 'write_note', arguments: { text: 'from the popup' } });
  const { window: popup, ticketId } = await nextPopup(app, mark);
  expect((await waitForTicket(home, 'write_note')).id).toBe(ticketId);
  expect(popup.url).toBe(`airlock://app/index.html#/ticket/${encodeURIComponent(ticketId)}`);
  expect(popup.options).toMatchObject({ frame: false, alwaysOnTop: true, skipTaskbar: true, resizable: false });
  expect(popup.options.webPreferences).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false, webviewTag: false });
  expect(String(popup.options.webPreferences!.preload)).toMatch(/electron\/dist\/preload\.cjs$/);
  expect(popup).toMatchObject({ visible: true, shownInactive: true, focused: false, alwaysOnTop: true });
  expect(app.records.filter((r) => r.window === popup.id && (r.type === 'window-show' || r.type === 'window-focus'))).toEqual([]);
  // near the tray's corner (top right, where the stand-in's tray has no place of its own), on screen
  expect(popup.bounds.x + popup.bounds.width).toBeLessThanOrEqual(1920);
  expect(popup.bounds.y).toBeGreaterThanOrEqual(25);
  // the page came through the app's protocol, and its preload exposed the UI's API and nothing else
  expect(app.records.find((r) => r.type === 'window-loaded' && r.window === popup.id)).toMatchObject({ status: 200 });
  expect(app.records.find((r) => r.type === 'bridge-exposed' && r.window === popup.id)).toMatchObject({
    key: 'airlock',
    shape: { call: 'function', subscribe: 'function', host: { kind: 'string', startAtLogin: { get: 'function', set: 'function' } } },
  });
  // the tray: the pending icon and count, and the call in its menu (which brings the popup forward)
  await app.until(trayImage('pending'), 'the pending icon');
  s = await app.snapshot();
  // Linux: no title beside a tray icon (macOS only), a launcher badge and the tooltip say the count
  expect(s.badge).toBe(1);
  expect(s.trays[0]!.tooltip).toBe('Airlock: 1 call waits for you');
  expect(menuItem(s, `ticket:${ticketId}`)?.label).toContain('write_note');

  // Allow, through the page's window.airlock, after a click in the popup: the call runs
  mark = app.last();
  await click(app, popup.id);
  const approved = await app.command<{ value: { ok: boolean; ticket: { id: string } } }>('page', { window: popup.id, path: ['airlock', 'call'], args: ['approve', { id: ticketId }] });
  expect(approved.value).toMatchObject({ ok: true, ticket: { id: ticketId } });
  expect(textOf(await first)).toContain('from the popup');
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);
  await app.next(mark, (r) => r.type === 'window-closed' && r.window === popup.id, 'the answered popup closing');
  await app.next(mark, trayImage('idle'), 'the idle icon again');

  // Deny, through the page: refused with the reason, never run
  mark = app.last();
  const second = w.client.callTool({ name: 'write_note', arguments: { text: 'denied' } });
  const p2 = await nextPopup(app, mark);
  await app.command('page', { window: p2.window.id, path: ['airlock', 'call'], args: ['deny', { id: p2.ticketId, reason: 'not now' }] });
  const refused = await second;
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toContain('not now');
  await app.next(mark, (r) => r.type === 'window-closed' && r.window === p2.window.id, 'the denied popup closing');

  // a ticket that ends elsewhere (the CLI) takes its popup away
  mark = app.last();
  const third = w.client.callTool({ name: 'write_note', arguments: { text: 'denied from the CLI' } });
  const p3 = await nextPopup(app, mark);
  expect((await cli(home, ['deny', p3.ticketId])).code).toBe(0);
  await app.next(mark, (r) => r.type === 'window-closed' && r.window === p3.window.id, 'the popup of a ticket denied from the CLI closing');
  expect((await third).isError).toBe(true);
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);

  // Open Airlock: the main window, brought forward (the person asked for it)
  mark = app.last();
  await app.command('click', { item: 'open' });
  const created = await app.next(mark, (r) => r.type === 'window-created', 'the main window');
  await app.next(mark, (r) => r.type === 'window-focus' && r.window === created.window, 'the main window focused');
  await app.next(mark, (r) => r.type === 'window-loaded' && r.window === created.window, 'its page');
  const main = (await app.snapshot()).windows.find((x) => x.id === created.window)!;
  expect(main).toMatchObject({ url: 'airlock://app/index.html#/approvals', visible: true, shownInactive: false });
  expect(main.options.webPreferences).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false });

  // the broker's error code reaches the page (an Error's own properties would not cross the context bridge)
  const late = await personCall(app, 'approve', { id: p3.ticketId });
  expect(late.rejected).toMatchObject({ code: 'not-pending' });

  // the page's event stream resumes after `since`, in order, then goes on live
  const recent = await cliJson<{ seq: number }[]>(home, ['history', '--events', '--limit', '3']);
  const since = recent.at(-1)!.seq;
  mark = app.last();
  const sub = await app.command<number>('pageSubscribe', { window: main.id, since });
  await app.next(mark, (r) => r.type === 'page-stream-state' && r.subscription === sub && (r.state as { state: string }).state === 'live', 'the stream live');
  expect((await cli(home, ['estop', 'on'])).code).toBe(0);
  await app.next(mark, (r) => r.type === 'page-event' && (r.event as { type: string }).type === 'estop-on', 'a live event on the page');
  const seen = app.records.filter((r) => r.type === 'page-event' && r.subscription === sub).map((r) => (r.event as { seq: number }).seq);
  expect(seen[0]).toBe(since + 1);
  expect(seen).toEqual([...new Set(seen)].sort((a, b) => a - b));
  await app.command('pageUnsubscribe', { subscription: sub });
  expect((await personCall(app, 'estop', { on: false })).value).toEqual({ estop: false });

  // start at login through the page's host API (Linux: an XDG autostart entry), and the tray follows
  const autostart = join(xdg, 'autostart', 'airlock.desktop');
  expect(await app.command('page', { window: main.id, path: ['airlock', 'host', 'startAtLogin', 'get'] })).toEqual({ value: false });
  mark = app.last();
  await app.command('page', { window: main.id, path: ['airlock', 'host', 'startAtLogin', 'set'], args: [true] });
  expect(readFileSync(autostart, 'utf8')).toMatch(/^Exec=".+" ".+"$/m);
  await app.next(mark, (r) => r.type === 'tray-menu' && (r.items as { id: string; checked: boolean }[]).some((i) => i.id === 'start-at-login' && i.checked), 'the tray item checked');
  await app.command('click', { item: 'start-at-login' });
  expect(existsSync(autostart)).toBe(false);

  // what a page may not do: talk from elsewhere, call outside the allowlist, send what is not plain JSON
  const refusedCall = (value: unknown) => (value as { value: { ok: boolean; error: { code: string } } }).value;
  const tries: [Record<string, unknown>, string][] = [
    [{ from: 'foreign', channel: 'airlock:call', args: ['estop', { on: true }] }, 'forbidden'],
    [{ from: main.id, frameUrl: 'https://evil.example/', channel: 'airlock:call', args: ['estop', { on: true }] }, 'forbidden'],
    [{ from: main.id, subframe: true, channel: 'airlock:call', args: ['estop', { on: true }] }, 'forbidden'],
    [{ from: main.id, channel: 'airlock:call', args: ['wrapper.request', { sessionId: 'x', method: 'wrapper.status' }] }, 'unknown-method'],
    [{ from: main.id, channel: 'airlock:call', args: ['events.subscribe', { since: 0 }] }, 'unknown-method'],
    [{ from: main.id, channel: 'airlock:call', args: ['call.ask', {}] }, 'unknown-method'],
    [{ from: main.id, channel: 'airlock:call', args: ['estop', [true]] }, 'bad-request'],
    [{ from: main.id, channel: 'airlock:call', args: ['deny', { id: 'x', reason: 'x'.repeat(300 * 1024) }] }, 'bad-request'],
  ];
  for (const [args, code] of tries) expect(refusedCall(await app.command('invoke', args)).error.code, JSON.stringify(args).slice(0, 120)).toBe(code);
  expect(await app.command('invoke', { from: 'foreign', channel: 'airlock:start-at-login:set', args: [true] })).toMatchObject({ threw: expect.stringContaining('may not') });
  expect(await app.command('invoke', { from: main.id, channel: 'airlock:start-at-login:set', args: ['yes'] })).toMatchObject({ threw: expect.stringContaining('true or false') });
  expect(await estopIs(home)).toBe(false);
  expect(existsSync(autostart)).toBe(false);

  // nowhere to go: navigation, new windows and permissions refused
  expect(await app.command('navigate', { window: main.id, url: 'https://example.com/' })).toEqual({ prevented: true });
  expect(await app.command('windowOpen', { window: main.id, url: 'https://example.com/' })).toEqual({ action: 'deny' });
  expect(await app.command('permission', { window: main.id, permission: 'media' })).toEqual({ granted: false, handler: true });
  expect(await app.command('permissionCheck', { window: main.id, permission: 'clipboard-read' })).toEqual({ granted: false });

  // the protocol serves the renderer with the CSP, and nothing outside it
  const page = await app.command<{ status: number; headers: Record<string, string> }>('fetch', { url: 'airlock://app/index.html' });
  expect(page.status).toBe(200);
  expect(page.headers['content-security-policy']).toContain("script-src 'self'");
  for (const url of ['airlock://app/%2e%2e/%2e%2e/package.json', 'airlock://app/..%2f..%2fpackage.json', 'airlock://app/nope.js', 'airlock://other/index.html']) {
    expect((await app.command<{ status: number }>('fetch', { url })).status, url).toBe(404);
  }
  expect((await app.command<{ status: number }>('fetch', { url: 'airlock://app/index.html', method: 'POST' })).status).toBe(405);

  // quitting while a wrapped server runs says what happens and asks; Cancel keeps everything running
  mark = app.last();
  await app.command('quit');
  const asked = await app.next(mark, (r) => r.type === 'dialog-shown', 'the quit question');
  expect(asked.options).toMatchObject({ buttons: ['Quit', 'Cancel'], cancelId: 1, defaultId: 1 });
  expect(String((asked.options as { detail: string }).detail)).toMatch(/fixture \(test-client\) refuses every tool call/);
  await app.command('answerDialog', { dialog: asked.dialog, response: 1 });
  expect((await cli(home, ['status'])).code).toBe(0);
  expect((await app.snapshot()).trays[0]!.destroyed).toBe(false);

  // Quit: the app stops the broker it started, cleanly, and exits
  mark = app.last();
  await app.command('quit');
  const again = await app.next(mark, (r) => r.type === 'dialog-shown', 'the quit question again');
  await app.command('answerDialog', { dialog: again.dialog, response: 0 });
  expect(await app.exited).toEqual({ code: 0, signal: null });
  expect(app.log('broker')).toMatch(/airlock: broker stopped/);
  expect((await cli(home, ['status'])).code).not.toBe(0);
  // the server's calls are refused until Airlock runs again
  const meanwhile = await w.client.callTool({ name: 'write_note', arguments: { text: 'no broker' } });
  expect(meanwhile.isError).toBe(true);
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);
});

test('a second launch focuses the first; without a tray the app is a small window; an attached broker outlives the app', async () => {
  const home = tempDir();
  const daemon = await startDaemon(home);
  const first = launchApp({ home, env: { AIRLOCK_TRAY: 'off' } });
  const win = await first.until((r) => r.type === 'window-created', 'the small window');
  await first.until((r) => r.type === 'window-show' && r.window === win.window, 'the small window shown');
  await first.until((r) => r.type === 'window-loaded' && r.window === win.window, 'its page');
  let s = await first.snapshot();
  expect(s.trays).toEqual([]);
  expect(s.windows[0]).toMatchObject({ url: 'airlock://app/index.html#/approvals', bounds: { width: 480 } });
  // attached to the broker that was already running, not a second one
  const status = await first.command<{ value: { pid: number } }>('page', { window: win.window, path: ['airlock', 'call'], args: ['status', {}] });
  expect(status.value.pid).toBe(daemon.proc.pid);

  const mark = first.last();
  const second = launchApp({ home, standinDir: first.standinDir, env: { AIRLOCK_TRAY: 'off' } });
  expect(await second.exited).toEqual({ code: 0, signal: null });
  expect(second.records.find((r) => r.type === 'single-instance-lock')).toMatchObject({ got: false });
  expect(second.records.filter((r) => r.type === 'window-created' || r.type === 'tray-created' || r.type === 'shortcut-registered')).toEqual([]);
  await first.next(mark, (r) => r.type === 'second-instance', 'the first instance hearing of the second');
  await first.next(mark, (r) => r.type === 'window-focus' && r.window === win.window, 'the first instance focusing its window');
  s = await first.snapshot();
  expect(s.windows.filter((x) => !x.destroyed)).toHaveLength(1);

  // closing the only window quits (no tray to come back to); the broker it attached to keeps running
  await first.command('closeWindow', { window: win.window });
  expect(await first.exited).toEqual({ code: 0, signal: null });
  expect(first.records.some((r) => r.type === 'dialog-shown')).toBe(false);
  expect(daemon.proc.exitCode).toBeNull();
  expect((await cli(home, ['status'])).code).toBe(0);
});

test('Protect from the window writes the packaged launcher, which then works; the first protect turns start at login on; popups that do not fit wait with a nudge', async () => {
  const home = tempDir();
  const userHome = tempDir('al-home-');
  const xdg = join(userHome, '.config');
  const packaged = mockPackagedApp();
  const log = join(home, 'notes.log');
  mkdirSync(join(userHome, '.cursor'));
  const config = join(userHome, '.cursor', 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { notes: { command: process.execPath, args: [FIXTURE_SERVER], env: { FIXTURE_LOG: log } } } }, null, 2) + '\n');
  // another app holds the E-Stop chord here
  const app = launchApp({ home, env: { HOME: userHome, XDG_CONFIG_HOME: xdg, STANDIN_PACKAGED: '1', STANDIN_RESOURCES: packaged.resources, STANDIN_TAKEN_SHORTCUTS: SHORTCUT } });
  await app.until((r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === 'none-waiting'), 'the tray of a running broker');
  // the tray says the shortcut is taken; E-Stop is still one click away
  const taken = await app.snapshot();
  expect(taken.shortcuts).toEqual([]);
  expect(menuItem(taken, 'shortcut-problem')?.label).toBe(`E-Stop shortcut: ${SHORTCUT} is taken by another app`);
  expect(menuItem(taken, 'estop')).toMatchObject({ enabled: true, accelerator: null });

  // Protect servers…: the window on the servers page, where the page protects Cursor's server
  let mark = app.last();
  await app.command('click', { item: 'protect' });
  const created = await app.next(mark, (r) => r.type === 'window-created', 'the window');
  const loaded = await app.next(mark, (r) => r.type === 'window-loaded' && r.window === created.window, 'the servers page');
  expect(loaded.url).toBe('airlock://app/index.html#/servers');
  const page = (method: string, params: object) => app.command<{ value?: unknown; rejected?: unknown }>('page', { window: created.window, path: ['airlock', 'call'], args: [method, params] });
  const listed = (await page('clients.list', {})).value as { client: string; locations: { servers: { name: string; protected: boolean }[] }[] }[];
  expect(listed.find((c) => c.client === 'cursor')?.locations[0]?.servers).toEqual([expect.objectContaining({ name: 'notes', protected: false })]);
  const report = await page('clients.protect', { client: 'cursor', servers: ['notes'] });
  expect(report.value).toMatchObject({ outcomes: [{ server: 'notes', result: 'protected' }] });

  // the entry starts the launcher in the app's resources, never the app's binary or a checkout path
  const entry = (JSON.parse(readFileSync(config, 'utf8')) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> }).mcpServers.notes!;
  expect(entry.command).toBe(packaged.launcher);
  expect(entry.args).toEqual(['wrap', '--name', 'notes', '--client', 'cursor', '--home', home, process.execPath, FIXTURE_SERVER]);
  // and the first protect turned start at login on, by itself
  await app.until((r) => r.type === 'tray-menu' && (r.items as { id: string; checked: boolean }[]).some((i) => i.id === 'start-at-login' && i.checked), 'start at login on');
  expect(readFileSync(join(xdg, 'autostart', 'airlock.desktop'), 'utf8')).toContain(`Exec="${process.execPath}"`);

  // the client starts what Protect wrote, with a GUI client's bare environment: its calls come to the app
  const transport = new StdioClientTransport({ command: entry.command, args: entry.args, env: { PATH: '/usr/bin:/bin', HOME: userHome, ...entry.env }, stderr: 'pipe' });
  const client = new Client({ name: 'cursor-like', version: '1.0.0' });
  await client.connect(transport);
  onCleanup(() => client.close());

  // three calls at once: two popups stacked near the tray, the third waits for a slot with a notification
  mark = app.last();
  const calls = [1, 2, 3].map((n) => client.callTool({ name: 'write_note', arguments: { text: `note ${n}` } }));
  const nudge = await app.next(mark, (r) => r.type === 'notification-shown', 'a nudge for the call that does not fit');
  expect(String((nudge.options as { title: string }).title)).toContain('write_note');
  let popups = (await app.snapshot()).windows.filter((w) => !w.destroyed && w.url.includes('#/ticket/'));
  expect(popups).toHaveLength(2);
  expect(popups.every((p) => p.shownInactive && !p.focused)).toBe(true);
  const [a, b] = [...popups].sort((x, y) => x.bounds.y - y.bounds.y);
  expect(a!.bounds.x).toBe(b!.bounds.x);
  expect(b!.bounds.y).toBeGreaterThanOrEqual(a!.bounds.y + a!.bounds.height);

  // clicking the notification brings the waiting call's popup forward, focused: the person asked for it
  mark = app.last();
  await app.command('notification', { notification: nudge.notification, event: 'click' });
  const third = await app.next(mark, (r) => r.type === 'window-created', "the waiting call's popup");
  await app.next(mark, (r) => r.type === 'window-focus' && r.window === third.window, 'it focused');
  popups = (await app.snapshot()).windows.filter((w) => !w.destroyed && w.url.includes('#/ticket/'));
  expect(popups).toHaveLength(3);

  // answered elsewhere (the main window): every popup and the nudge go away; the calls ran
  mark = app.last();
  for (const t of await cliJson<{ id: string }[]>(home, ['pending'])) expect((await personCall(app, 'approve', { id: t.id })).value).toMatchObject({ ok: true });
  await Promise.all(calls);
  expect(executedCalls(log, 'write_note')).toHaveLength(3);
  await app.next(mark, (r) => r.type === 'notification-closed' && r.notification === nudge.notification, 'the nudge closing');
  for (const p of popups) await app.next(mark, (r) => r.type === 'window-closed' && r.window === p.id, 'each popup closing');

  // a popup the person closed unanswered stays in the tray, whose item opens it again
  mark = app.last();
  const fourth = client.callTool({ name: 'write_note', arguments: { text: 'later' } });
  const { window: dismissed, ticketId } = await nextPopup(app, mark);
  await app.command('closeWindow', { window: dismissed.id });
  await app.next(mark, (r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === `ticket:${ticketId}`), 'the call in the tray');
  mark = app.last();
  await app.command('click', { item: `ticket:${ticketId}` });
  const reopened = await nextPopup(app, mark);
  expect(reopened.ticketId).toBe(ticketId);
  await app.next(mark, (r) => r.type === 'window-focus' && r.window === reopened.window.id, 'the reopened popup focused');
  await click(app, reopened.window.id);
  await app.command('page', { window: reopened.window.id, path: ['airlock', 'call'], args: ['approve', { id: ticketId }] });
  await fourth;
  expect(executedCalls(log, 'write_note')).toHaveLength(4);

  // the broker dies: the tray says so (and offers to start it), and the app starts a new one by itself
  const { pid } = await cliJson<{ pid: number }>(home, ['status']);
  mark = app.last();
  process.kill(pid, 'SIGKILL');
  await app.next(mark, trayImage('problem'), 'the problem icon');
  await app.next(mark, (r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === 'retry'), 'a tray menu with "Start Airlock again"');
  await app.next(mark, trayImage('idle'), 'the idle icon once a new broker runs');
  expect((await cliJson<{ pid: number }>(home, ['status'])).pid).not.toBe(pid);
});

test('approval-style: the OS message box, or a notification only', async () => {
  const home = tempDir();
  const app = launchApp({ home });
  await app.until((r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === 'none-waiting'), 'the tray of a running broker');
  const fx = fixture(home);
  const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });

  // dialog: the same buttons as the card, the arguments in the detail; Deny refuses
  expect((await personCall(app, 'settings.set', { key: 'approval-style', value: 'dialog' })).value).toEqual({ ok: true });
  let mark = app.last();
  const first = w.client.callTool({ name: 'write_note', arguments: { text: 'asked in a message box' } });
  const box = await app.next(mark, (r) => r.type === 'dialog-shown', 'the message box');
  expect(box.options).toMatchObject({ buttons: ['Allow once', 'Allow for this session', 'Always allow', 'Deny'], defaultId: 3, cancelId: 3 });
  expect(String((box.options as { detail: string }).detail)).toContain('asked in a message box');
  await app.command('answerDialog', { dialog: box.dialog, response: 3 });
  expect((await first).isError).toBe(true);
  // a ticket that ends elsewhere closes its message box
  mark = app.last();
  const second = w.client.callTool({ name: 'write_note', arguments: { text: 'answered from the CLI' } });
  const box2 = await app.next(mark, (r) => r.type === 'dialog-shown', 'the second message box');
  expect((await cli(home, ['deny', (await waitForTicket(home, 'write_note')).id])).code).toBe(0);
  await app.next(mark, (r) => r.type === 'dialog-aborted' && r.dialog === box2.dialog, 'the message box closing');
  expect((await second).isError).toBe(true);
  expect(app.records.filter((r) => r.seq > mark && r.type === 'window-created')).toEqual([]);

  // notification only: no window until the person clicks it; then the popup, focused
  expect((await personCall(app, 'settings.set', { key: 'approval-style', value: 'notification' })).value).toEqual({ ok: true });
  mark = app.last();
  const third = w.client.callTool({ name: 'write_note', arguments: { text: 'from the notification' } });
  const note = await app.next(mark, (r) => r.type === 'notification-shown', 'the notification');
  expect(app.records.filter((r) => r.seq > mark && r.type === 'window-created')).toEqual([]);
  await app.command('notification', { notification: note.notification, event: 'click' });
  const popup = await nextPopup(app, mark);
  await click(app, popup.window.id);
  await app.command('page', { window: popup.window.id, path: ['airlock', 'call'], args: ['approve', { id: popup.ticketId }] });
  expect(textOf(await third)).toContain('from the notification');
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);
});

test('a tool named to read backwards is spelled out in the tray, the message box, the notification and the popup\'s title', async () => {
  const home = tempDir();
  const app = launchApp({ home });
  await app.until((r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === 'none-waiting'), 'the tray of a running broker');
  const fx = fixture(home, ['--catalog', 'terminal']);
  const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
  const RAW = /[\u202a-\u202e\u2066-\u2069\u200b\u009b]/u;
  const tool = 'wipe\u202Eelif_daer';

  expect((await personCall(app, 'settings.set', { key: 'approval-style', value: 'dialog' })).value).toEqual({ ok: true });
  let mark = app.last();
  const first = w.client.callTool({ name: tool, arguments: { text: 'photo\u202Egnp.exe' } });
  const box = await app.next(mark, (r) => r.type === 'dialog-shown', 'the message box');
  const options = box.options as { message: string; detail: string };
  expect(options.message).toContain('wipe\\u{202E}elif_daer');
  expect(options.detail).toContain('photo\\u{202E}gnp.exe');
  const tray = await app.next(mark, (r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id.startsWith('ticket:')), 'the call in the tray');
  const item = (tray.items as { id: string; label: string }[]).find((i) => i.id.startsWith('ticket:'))!;
  expect(item.label).toContain('wipe\\u{202E}elif_daer');
  await app.command('answerDialog', { dialog: box.dialog, response: 3 });
  expect((await first).isError).toBe(true);

  expect((await personCall(app, 'settings.set', { key: 'approval-style', value: 'notification' })).value).toEqual({ ok: true });
  mark = app.last();
  const second = w.client.callTool({ name: tool, arguments: { text: 'again\u200B' } });
  const note = await app.next(mark, (r) => r.type === 'notification-shown', 'the notification');
  const shown = note.options as { title: string; body: string };
  expect(shown.title).toContain('wipe\\u{202E}elif_daer');
  expect(shown.body).toContain('again\\u{200B}');
  // a click on it opens the popup, whose window title names the tool too
  await app.command('notification', { notification: note.notification, event: 'click' });
  const popup = await app.next(mark, (r) => r.type === 'window-created', 'the popup');
  expect((popup.options as { title: string }).title).toContain('wipe\\u{202E}elif_daer');
  expect((await cli(home, ['deny', (await waitForTicket(home, tool)).id])).code).toBe(0);
  expect((await second).isError).toBe(true);
  // nothing the app handed the OS to draw carried one raw (the page gets them raw: the card escapes them itself)
  const drawn = app.records.filter((r) => ['tray-menu', 'tray-tooltip', 'dialog-shown', 'notification-shown', 'window-created'].includes(String(r.type)));
  expect(drawn.filter((r) => RAW.test(JSON.stringify(r))).map((r) => r.type)).toEqual([]);
});

test('estop-shortcut: other keys, or none', async () => {
  const home = tempDir();
  const app = launchApp({ home });
  await app.until((r) => r.type === 'tray-menu' && (r.items as { id: string }[]).some((i) => i.id === 'none-waiting'), 'the tray of a running broker');
  expect((await app.snapshot()).shortcuts).toEqual([SHORTCUT]);
  let mark = app.last();
  expect((await personCall(app, 'settings.set', { key: 'estop-shortcut', value: 'CommandOrControl+Alt+Shift+J' })).value).toEqual({ ok: true });
  await app.next(mark, (r) => r.type === 'shortcut-registered' && r.accelerator === 'CommandOrControl+Alt+Shift+J', 'the new shortcut');
  expect((await app.snapshot()).shortcuts).toEqual(['CommandOrControl+Alt+Shift+J']);
  await app.command('shortcut', { accelerator: 'CommandOrControl+Alt+Shift+J' });
  await app.next(mark, trayImage('estop'), 'E-Stop from the new keys');
  expect(await estopIs(home)).toBe(true);
  mark = app.last();
  expect((await personCall(app, 'settings.set', { key: 'estop-shortcut', value: 'off' })).value).toEqual({ ok: true });
  await app.next(mark, (r) => r.type === 'shortcut-unregistered', 'no shortcut');
  expect((await app.snapshot()).shortcuts).toEqual([]);
});
