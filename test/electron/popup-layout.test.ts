/** Where the desktop app's approval popups go: the corner nearest the tray, stacked inside the work area. */
import { describe, expect, test } from 'vitest';
import { capacity, cornerFor, POPUP, slotBounds } from '../../electron/src/popup-layout.js';

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
