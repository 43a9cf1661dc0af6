/** The tray and other words: which icon the tray shows, the approval style, arguments for a message box, the autostart entry. */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { desktopEntry } from '../../electron/src/autostart.js';
import { approvalStyle, argsText } from '../../electron/src/ticket-text.js';
import { trayIconFile, trayLook } from '../../electron/src/tray-look.js';

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
