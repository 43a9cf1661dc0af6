/**
 * The desktop app's side of undo and the tripwire, end to end: the real built main entry under plain Node with
 * the electron stand-in, the real broker it starts, and @modelcontextprotocol/server-filesystem wrapped with an
 * allow rule for write_file. Ground truth is the file on disk and the broker's own event; the app is waited on
 * through its records (the tray's menu, its notices), never on time.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { cleanup, cliJson, connectWrapped, FILESYSTEM, tempDir, untilBroker } from '../helpers/airlock.js';
import { type App, launchApp, type MenuItem, menuItem, personCall, type Rec } from './app.js';

afterEach(cleanup);

const SHORTCUT = 'CommandOrControl+Alt+Shift+K';

const trayReady = (r: Rec) => r.type === 'tray-menu' && (r.items as MenuItem[]).some((i) => i.id === 'none-waiting');
const trayImage = (name: string) => (r: Rec) => r.type === 'tray-image' && String(r.image).endsWith(`/${name}.png`);
/** A tray menu whose Undo last item is as `check` wants it. */
const undoItem = (check: (i: MenuItem) => boolean) => (r: Rec) =>
  r.type === 'tray-menu' && (r.items as MenuItem[]).some((i) => i.id === 'undo-last' && check(i));
const notice = (app: App, after: number, what: string) => app.next(after, (r) => r.type === 'notification-shown', what);
const optionsOf = (r: Rec) => r.options as { title: string; body: string };

/** The app with its broker up, an allow rule for write_file, and the filesystem server wrapped over a temp folder. */
async function setup(settings: [string, string][] = []) {
  const home = tempDir();
  const root = join(home, 'files');
  mkdirSync(root);
  const app = launchApp({ home });
  await app.until(trayReady, 'the tray of a running broker');
  // as a person sets them up: in the app's window (an allow rule loosens: it needs their click there)
  for (const [key, value] of settings) expect((await personCall(app, 'settings.set', { key, value })).value).toEqual({ ok: true });
  expect((await personCall(app, 'rules.add', { action: 'allow', server: 'filesystem', tool: 'write_file' })).value).toMatchObject({ action: 'allow' });
  const w = await connectWrapped({ home, server: 'filesystem', command: process.execPath, args: [FILESYSTEM, root] });
  return { home, root, app, w };
}

test('Undo last in the tray: enabled once a write can be undone, puts the bytes back with a notice; a later edit is a conflict left to the person', async () => {
  const { root, app, w } = await setup();
  expect(menuItem(await app.snapshot(), 'undo-last')).toMatchObject({ label: 'Undo last', enabled: false });

  const target = join(root, 'notes.txt');
  writeFileSync(target, 'the original\nsecond line\n');
  let mark = app.last();
  expect((await w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'overwritten by the model' } })).isError).toBeFalsy();
  expect(readFileSync(target, 'utf8')).toBe('overwritten by the model');
  // the item comes alive once the broker knows the call can be undone, naming it
  const ready = await app.next(mark, undoItem((i) => i.enabled), 'Undo last enabled');
  expect((ready.items as MenuItem[]).find((i) => i.id === 'undo-last')!.label).toBe('Undo last: filesystem · write_file notes.txt');

  mark = app.last();
  await app.command('click', { item: 'undo-last' });
  const done = await notice(app, mark, 'the notice of the undo');
  expect(optionsOf(done)).toMatchObject({ title: 'Undone: filesystem · write_file', body: 'Put back notes.txt as it was before the call.' });
  expect(readFileSync(target, 'utf8')).toBe('the original\nsecond line\n');
  // nothing left to take back (the undo's own entry is a redo, not a change): the item greys out
  await app.next(mark, undoItem((i) => !i.enabled && i.label === 'Undo last'), 'Undo last disabled again');
  expect(menuItem(await app.snapshot(), 'undo-last')).toMatchObject({ label: 'Undo last', enabled: false });

  // a second write, then a person edits the file: Undo last refuses to overwrite the edit, and says why
  mark = app.last();
  expect((await w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'the model again' } })).isError).toBeFalsy();
  await app.next(mark, undoItem((i) => i.enabled), 'Undo last enabled for the second write');
  writeFileSync(target, 'edited by a person afterwards');
  mark = app.last();
  await app.command('click', { item: 'undo-last' });
  const conflict = await notice(app, mark, 'the notice of the conflict');
  expect(optionsOf(conflict)).toMatchObject({
    title: 'Not undone: filesystem · write_file',
    body: 'notes.txt changed after the call, so nothing was overwritten. Open Airlock to decide.',
  });
  expect(readFileSync(target, 'utf8')).toBe('edited by a person afterwards');
  // the call is still the person's to undo (forced, in the app): the item stays
  await app.next(mark, undoItem((i) => i.enabled && i.label === 'Undo last: filesystem · write_file notes.txt'), 'Undo last still enabled');

  // a click on the notice opens Airlock where the calls are
  mark = app.last();
  await app.command('notification', { notification: conflict.notification, event: 'click' });
  // (the window is open already, from setting up the rule: it goes to the page)
  const loaded = await app.next(mark, (r) => r.type === 'window-load', 'the main window going to the calls');
  expect(loaded.url).toBe('airlock://app/index.html#/activity');
  await app.next(mark, (r) => r.type === 'window-focus' && r.window === loaded.window, 'the window brought forward');
});

test('the tripwire engages E-Stop with a notice that names it; Undo last still puts files back under E-Stop; a person’s E-Stop says otherwise', async () => {
  const { home, root, app, w } = await setup([['tripwire-calls', '2']]);

  // three allowed changing calls within 10 s: more than two
  let mark = app.last();
  for (const n of [1, 2, 3]) {
    // the third may be stopped by the E-Stop it trips: its answer is not the point
    await w.client.callTool({ name: 'write_file', arguments: { path: join(root, `${n}.txt`), content: `file ${n}` } }).catch(() => undefined);
  }
  const tripped = await app.next(mark, (r) => r.type === 'notification-shown' && optionsOf(r).title.startsWith('E-Stop turned itself on'), 'the tripwire notice');
  await app.next(mark, trayImage('estop'), 'the E-Stop icon');

  // the broker's own word for it
  const on = await untilBroker(
    home,
    (e) => e.type === 'estop-on',
    async (c) => (await c.call('events', { limit: 50 })).events.find((e) => e.type === 'estop-on'),
    8000,
    'the estop-on event',
  );
  expect(on.detail).toEqual({ by: 'tripwire', reason: '3 changing calls in 10 s' });
  expect((await cliJson<{ estop: boolean }>(home, ['status'])).estop).toBe(true);
  expect(optionsOf(tripped).title).toBe('E-Stop turned itself on: 3 changing calls in 10 s');
  expect(optionsOf(tripped).body).toContain('tripwire');
  let s = await app.snapshot();
  expect(s.trays[0]!.tooltip).toBe('Airlock: E-Stop turned itself on (3 changing calls in 10 s). Every tool call is refused.');
  expect(menuItem(s, 'estop')?.checked).toBe(true);
  expect(menuItem(s, 'estop-cause')).toMatchObject({ label: 'Turned on by the tripwire: 3 changing calls in 10 s', enabled: false });

  // E-Stop refuses tool calls, not Airlock's own file restores: the newest created file is taken back
  await app.until(undoItem((i) => i.enabled), 'Undo last enabled');
  mark = app.last();
  await app.command('click', { item: 'undo-last' });
  const undone = await notice(app, mark, 'the notice of the undo');
  expect(optionsOf(undone).title).toBe('Undone: filesystem · write_file');
  const removed = /^Removed (\d)\.txt, which the call created\.$/.exec(optionsOf(undone).body);
  expect(removed, optionsOf(undone).body).not.toBeNull();
  expect(existsSync(join(root, `${removed![1]}.txt`))).toBe(false);

  // released from the tray: the reason goes with it
  mark = app.last();
  await app.command('click', { item: 'estop' });
  await app.next(mark, trayImage('idle'), 'the idle icon');
  expect(menuItem(await app.snapshot(), 'estop-cause')).toBeUndefined();

  // a person's E-Stop (the shortcut) is said as theirs, with no tripwire in it
  mark = app.last();
  await app.command('shortcut', { accelerator: SHORTCUT });
  await app.next(mark, trayImage('estop'), 'the E-Stop icon again');
  const person = await notice(app, mark, "the person's E-Stop notice");
  expect(optionsOf(person).title).toBe('E-Stop is on');
  expect(optionsOf(person).body).not.toContain('tripwire');
  s = await app.snapshot();
  expect(s.trays[0]!.tooltip).toBe('Airlock: E-Stop is on. Every tool call is refused.');
  expect(menuItem(s, 'estop-cause')).toBeUndefined();
  expect(app.records.filter((r) => r.seq > mark && r.type === 'notification-shown')).toHaveLength(1);
});
