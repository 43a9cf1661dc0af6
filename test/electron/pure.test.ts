/**
 * The desktop app's pure parts, alone: where popups go, what a window's message must look like, which file a
 * URL may name, what Protect writes as the launcher, which icon the tray shows, what Undo last and the tripwire
 * say, the autostart entry. None of these modules imports Electron.
 */
import { UserMethod, userApi } from '@airlock/proxy-core';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fileFor, isAppUrl } from '../../electron/src/app-url.js';
import { desktopEntry } from '../../electron/src/autostart.js';
import { launcherFor, type LauncherFacts } from '../../electron/src/environment.js';
import { isUiMethod, UI_METHODS } from '../../electron/src/ipc-contract.js';
import { capacity, cornerFor, POPUP, slotBounds } from '../../electron/src/popup-layout.js';
import { approvalStyle, argsText } from '../../electron/src/ticket-text.js';
import { estopCauseLabel, trayIconFile, trayLook, trayTooltip, tripwireNotice } from '../../electron/src/tray-look.js';
import { AppState } from '../../electron/src/state.js';
import type { BrokerEvent, BrokerStatus } from '../../proxy-core/src/protocol/api.js';
import { type UndoCall, undoLastLabel, undoLastWouldTake, undoNotice, type UndoReport } from '../../electron/src/undo-text.js';
import { checkParams, checkSince, checkSubscriptionId } from '../../electron/src/validate.js';

describe('popup layout', () => {
  const mac = { x: 0, y: 25, width: 1440, height: 875 };
  const win = { x: 0, y: 0, width: 1920, height: 1040 };

  test.each([
    ['a macOS menu-bar icon', mac, { x: 1300, y: 0, width: 22, height: 22 }, 'darwin', 'top-right'],
    ['a Windows taskbar icon', win, { x: 1700, y: 1045, width: 24, height: 24 }, 'win32', 'bottom-right'],
    ['a panel on the left', win, { x: 10, y: 1045, width: 24, height: 24 }, 'linux', 'bottom-left'],
    ['no tray position (Linux)', win, null, 'linux', 'top-right'],
    ['no tray position (Windows)', win, { x: 0, y: 0, width: 0, height: 0 }, 'win32', 'bottom-right'],
  ] as const)('%s: the nearest corner', (_what, area, tray, platform, corner) => {
    expect(cornerFor(area, tray, platform)).toBe(corner);
  });

  test('popups stack away from the corner, inside the work area, as many as fit', () => {
    const n = capacity(mac);
    expect(n).toBe(2);
    const top = [0, 1].map((i) => slotBounds(i, mac, 'top-right'));
    expect(top[0]).toEqual({ x: 1440 - 12 - POPUP.width, y: 25 + 12, ...POPUP });
    expect(top[1]!.y).toBe(top[0]!.y + POPUP.height + 10);
    const bottom = [0, 1].map((i) => slotBounds(i, win, 'bottom-right'));
    expect(bottom[0]!.y + POPUP.height).toBe(1040 - 12);
    expect(bottom[1]!.y).toBeLessThan(bottom[0]!.y);
    for (const b of [...top, ...bottom]) {
      expect(b.y).toBeGreaterThanOrEqual(0);
      expect(b.x + b.width).toBeLessThanOrEqual(1920);
    }
    // a screen smaller than a popup still gets one, shrunk to fit
    const tiny = { x: 0, y: 0, width: 300, height: 200 };
    expect(capacity(tiny)).toBe(1);
    expect(slotBounds(0, tiny, 'top-left')).toEqual({ x: 12, y: 12, width: 276, height: 176 });
  });
});

describe("a window's messages", () => {
  test('the UI may call every front-end method but the stream plumbing and asking a wrapper', () => {
    for (const m of UI_METHODS) expect(Object.hasOwn(userApi, m), m).toBe(true);
    expect(UI_METHODS.size).toBe(Object.keys(userApi).length - 3);
    for (const m of ['approve', 'deny', 'estop', 'status', 'pending', 'settings.get', 'clients.protect']) expect(isUiMethod(m), m).toBe(true);
    for (const m of [UserMethod.subscribe, UserMethod.unsubscribe, UserMethod.wrapperRequest, 'call.ask', 'session.open', 'constructor', '__proto__', 7, null]) {
      expect(isUiMethod(m), String(m)).toBe(false);
    }
  });

  test.each([
    [undefined, true],
    [{}, true],
    [{ id: 'x', remember: 'once', args: [{ arg: 'path', kind: 'path', glob: '/tmp/**' }] }, true],
    [Object.create(null) as object, true],
    [[], false],
    ['approve', false],
    [null, false],
    [{ at: new Date(0) }, false],
    [{ n: Number.NaN }, false],
    [{ m: new Map() }, false],
    [{ big: 'x'.repeat(300 * 1024) }, false],
    [JSON.parse('{"a":'.repeat(40) + '1' + '}'.repeat(40)) as object, false],
  ])('params %#', (params, ok) => {
    expect(checkParams(params).ok).toBe(ok);
  });

  test('since and subscription ids', () => {
    expect(checkSince(0)).toEqual({ ok: true, value: 0 });
    for (const bad of [-1, 1.5, '3', Number.MAX_SAFE_INTEGER + 2, null]) expect(checkSince(bad).ok, String(bad)).toBe(false);
    expect(checkSubscriptionId('s1').ok).toBe(true);
    for (const bad of ['', 'a b', 'x'.repeat(65), '../x', 3]) expect(checkSubscriptionId(bad).ok, String(bad)).toBe(false);
  });
});

describe("the app's protocol", () => {
  const dist = join('/app', 'renderer', 'dist');
  test.each([
    ['airlock://app/index.html', join(dist, 'index.html')],
    ['airlock://app/', join(dist, 'index.html')],
    ['airlock://app/assets/index-abc.js', join(dist, 'assets', 'index-abc.js')],
    ['airlock://app/assets/a%20b.css', join(dist, 'assets', 'a b.css')],
    ['airlock://app/../../etc/passwd', join(dist, 'etc', 'passwd')],
    ['airlock://app/%2e%2e/%2e%2e/etc/passwd', join(dist, 'etc', 'passwd')],
    ['airlock://app/..%2f..%2fetc%2fpasswd', null],
    ['airlock://app/..%5c..%5cwindows', null],
    ['airlock://app/index.html%00.png', null],
    ['airlock://app/%E0%A4%A', null],
    ['airlock://evil/index.html', null],
    ['file:///etc/passwd', null],
    ['https://app/index.html', null],
  ])('%s', (url, file) => {
    expect(fileFor(dist, url)).toBe(file);
  });

  test('own pages are on the app origin only', () => {
    expect(isAppUrl('airlock://app/index.html#/ticket/x')).toBe(true);
    for (const url of ['airlock://apps/index.html', 'https://app/', 'file:///index.html', '', null, 'not a url']) expect(isAppUrl(url), String(url)).toBe(false);
  });
});

describe('what Protect writes as the launcher', () => {
  const facts: LauncherFacts = {
    platform: 'darwin',
    packaged: true,
    electron: true,
    execPath: '/Applications/Airlock.app/Contents/MacOS/Airlock',
    resourcesPath: '/Applications/Airlock.app/Contents/Resources',
    cli: '/Applications/Airlock.app/Contents/Resources/app.asar/electron/dist/cli.js',
    env: { PATH: '/usr/bin:/bin' },
  };

  test('packaged: the launcher in the resources, never the app binary', () => {
    expect(launcherFor(facts)).toEqual(['/Applications/Airlock.app/Contents/Resources/bin/airlock']);
    expect(launcherFor({ ...facts, platform: 'win32', resourcesPath: 'C:\\Airlock\\resources' })).toEqual([join('C:\\Airlock\\resources', 'bin', 'airlock.cmd')]);
  });

  test('a launcher the person set wins', () => {
    expect(launcherFor({ ...facts, env: { AIRLOCK_LAUNCHER: '["/opt/x"]' } })).toBeNull();
  });

  test('from a checkout: Node (this one under a test harness, else from PATH) and the checkout CLI', () => {
    expect(launcherFor({ ...facts, packaged: false, electron: false, execPath: '/usr/bin/node', cli: '/repo/electron/dist/cli.js' })).toEqual(['/usr/bin/node', '/repo/electron/dist/cli.js']);
    const dir = join(process.execPath, '..');
    expect(launcherFor({ ...facts, platform: 'linux', packaged: false, cli: '/repo/cli.js', env: { PATH: `/nowhere:${dir}` } })).toEqual([join(dir, 'node'), '/repo/cli.js']);
    // Electron's binary in a client config would start the app, not the wrapper: no launcher rather than that
    expect(launcherFor({ ...facts, platform: 'linux', packaged: false, env: { PATH: '/nowhere' } })).toBeNull();
  });
});

describe('the tray and other words', () => {
  const ready = { state: 'ready', owned: true } as const;
  test.each([
    [ready, false, 0, 'idle'],
    [ready, false, 3, 'pending'],
    [ready, true, 3, 'estop'],
    [{ state: 'problem', reason: 'gone' } as const, true, 3, 'problem'],
    [{ state: 'starting' } as const, false, 0, 'idle'],
  ] as const)('%j, E-Stop %s, %i waiting: %s', (health, estop, pending, look) => {
    expect(trayLook(health, estop, pending)).toBe(look);
  });

  test('template images on macOS, colour elsewhere', () => {
    expect(trayIconFile('/i', 'estop', 'darwin')).toBe(join('/i', 'estopTemplate.png'));
    expect(trayIconFile('/i', 'estop', 'win32')).toBe(join('/i', 'estop.png'));
  });

  test('approval style: anything but dialog or notification is the popup', () => {
    expect([null, undefined, '', 'popup', 'Dialog', 'toast', 'dialog', 'notification'].map(approvalStyle)).toEqual([
      'popup',
      'popup',
      'popup',
      'popup',
      'popup',
      'popup',
      'dialog',
      'notification',
    ]);
  });

  test('arguments for a message box: JSON, cut with the full size said', () => {
    const t = { arguments: { text: 'x'.repeat(50) }, argsTruncated: false, argsBytes: 61 } as Parameters<typeof argsText>[0];
    expect(argsText(t, 1000)).toBe(JSON.stringify({ text: 'x'.repeat(50) }, null, 2));
    expect(argsText(t, 10)).toBe('{\n  "text"… (61 bytes in all)');
  });

  test('the autostart entry quotes what the Desktop Entry spec asks', () => {
    const entry = desktopEntry(['/opt/My Apps/Airlock "beta"/airlock', '/home/me/100%/$HOME/a\\b']);
    expect(entry).toContain('Exec="/opt/My Apps/Airlock \\\\"beta\\\\"/airlock" "/home/me/100%%/\\\\$HOME/a\\\\\\\\b"\n');
    expect(entry.startsWith('[Desktop Entry]\nType=Application\n')).toBe(true);
  });
});

describe('Undo last and the tripwire, in words', () => {
  const call: UndoCall = { id: 'c1', server: 'files', tool: 'write_file', undo: { available: true, kind: 'snapshot', state: 'ready', paths: ['/home/me/notes.txt'] } };
  const report = (r: Partial<UndoReport>): UndoReport => ({ callId: 'c1', ok: true, kind: 'snapshot', summary: '', restored: [], conflicts: [], residue: [], ...r });

  test('the item names what it would undo; an undo entry (a redo) is not the last change', () => {
    expect(undoLastLabel(null, false)).toBe('Undo last');
    expect(undoLastLabel(call, true)).toBe('Undoing…');
    expect(undoLastLabel(call, false)).toBe('Undo last: files · write_file notes.txt');
    expect(undoLastLabel({ ...call, undo: { ...call.undo!, paths: ['/a', '/b'] } }, false)).toBe('Undo last: files · write_file (2 files)');
    expect(undoLastWouldTake(call)).toBe(true);
    expect(undoLastWouldTake({ undo: { ...call.undo!, undoOf: 'c0' } })).toBe(false);
    for (const state of ['failed', 'undone', 'unchanged', 'prepared'] as const) expect(undoLastWouldTake({ undo: { ...call.undo!, state } }), state).toBe(false);
    expect(undoLastWouldTake({})).toBe(false);
  });

  test('what was put back, removed, called; a conflict and residue send the person to the app', () => {
    expect(undoNotice(report({ restored: [{ path: '/d/a.txt', action: 'restored' }, { path: '/d/b.txt', action: 'removed' }] }), call)).toEqual({
      title: 'Undone: files · write_file',
      body: 'Put back a.txt as it was before the call; removed b.txt, which the call created.',
      needsYou: false,
    });
    expect(undoNotice(report({ restored: [{ path: '/d/a.txt', action: 'already-as-before' }] }), null).body).toBe(
      'Nothing needed putting back: the files were already as before the call.',
    );
    const memory: UndoCall = { id: 'c2', server: 'memory', tool: 'create_entities', undo: { available: false, kind: 'inverse', state: 'undone', inverse: 'delete_entities' } };
    expect(undoNotice(report({ callId: 'c2', kind: 'inverse' }), memory).body).toBe('Airlock called delete_entities on memory to take the call back.');

    const conflict = undoNotice(report({ ok: false, conflicts: [{ path: '/d/a.txt', expected: 'x', found: 'absent' }, { path: '/d/b.txt', expected: 'x', found: 'absent' }] }), call);
    expect(conflict).toEqual({ title: 'Not undone: files · write_file', body: 'a.txt and b.txt were deleted after the call, so nothing was overwritten. Open Airlock to decide.', needsYou: true });

    const residue = undoNotice(report({ ok: false, residue: ['/d/b.txt: permission denied'], restored: [{ path: '/d/a.txt', action: 'restored' }] }), call);
    expect(residue).toEqual({ title: 'Undo did not finish: files · write_file', body: '/d/b.txt: permission denied. Put back: a.txt. Open Airlock for the details.', needsYou: true });

    expect(undoNotice(report({ callId: '', ok: false, kind: null, summary: 'no call can be undone' }), null)).toEqual({ title: 'Nothing to undo', body: 'No call can be undone.', needsYou: false });
  });

  test("the tripwire's E-Stop is told apart from a person's", () => {
    const cause = { by: 'tripwire', reason: '31 changing calls in 10 s' } as const;
    expect(tripwireNotice(cause).title).toBe('E-Stop turned itself on: 31 changing calls in 10 s');
    expect(estopCauseLabel(cause)).toBe('Turned on by the tripwire: 31 changing calls in 10 s');
    expect(estopCauseLabel({ by: 'user' })).toBeNull();
    const ready = { state: 'ready', owned: true } as const;
    expect(trayTooltip(ready, true, 0, cause)).toBe('Airlock: E-Stop turned itself on (31 changing calls in 10 s). Every tool call is refused.');
    expect(trayTooltip(ready, true, 0, { by: 'user' })).toBe('Airlock: E-Stop is on. Every tool call is refused.');
    expect(tripwireNotice(cause).body).toMatch(/refused before it reached its server/);
  });

  test('a full disk shows as a problem, over E-Stop and waiting calls, and says calls are refused', () => {
    const ready = { state: 'ready', owned: true } as const;
    expect(trayLook(ready, false, 2, true)).toBe('problem');
    expect(trayLook(ready, true, 0, true)).toBe('problem');
    expect(trayLook(ready, false, 2, false)).toBe('pending');
    expect(trayTooltip(ready, true, 3, null, true)).toMatch(/disk is full.*every tool call is refused/);
    const state = new AppState();
    state.load({ estop: false, diskFull: { since: 5, error: 'SQLITE_FULL' } } as unknown as BrokerStatus, []);
    expect(state.diskFull).toEqual({ since: 5, error: 'SQLITE_FULL' });
    state.apply({ seq: 2, at: 9, type: 'disk-ok', server: null, tool: null, detail: {} } as BrokerEvent);
    expect(state.diskFull).toBeNull();
    state.apply({ seq: 3, at: 10, type: 'disk-full', server: null, tool: null, detail: { error: 'ENOSPC' } } as BrokerEvent);
    expect(state.diskFull).toEqual({ since: 10, error: 'ENOSPC' });
  });
});
