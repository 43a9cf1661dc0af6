/**
 * Where approval popups go: stacked in the screen corner nearest the tray (top right under the macOS menu bar,
 * bottom right over the Windows taskbar…), the first one closest to the tray. Pure, so it is tested without a
 * screen.
 */

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Size {
  width: number;
  height: number;
}

export type Corner = 'top-left' | 'top-right' | 'bottom-left' | 'bottom-right';

export const POPUP: Size = { width: 420, height: 340 };
const MARGIN = 12;
const GAP = 10;

/** The work-area corner nearest the tray; where the tray's place is unknown (Linux), the platform's usual one. */
export function cornerFor(workArea: Rect, tray: Rect | null, platform: NodeJS.Platform): Corner {
  if (tray && tray.width > 0 && tray.height > 0) {
    const cx = tray.x + tray.width / 2;
    const cy = tray.y + tray.height / 2;
    const top = cy < workArea.y + workArea.height / 2;
    const left = cx < workArea.x + workArea.width / 2;
    return `${top ? 'top' : 'bottom'}-${left ? 'left' : 'right'}`;
  }
  return platform === 'win32' ? 'bottom-right' : 'top-right';
}

/** How many popups fit in one column of the work area (at least one). */
export function capacity(workArea: Rect, size: Size = POPUP): number {
  return Math.max(1, Math.floor((workArea.height - 2 * MARGIN + GAP) / (size.height + GAP)));
}

/** The bounds of the popup in `slot` (0 nearest the corner). */
export function slotBounds(slot: number, workArea: Rect, corner: Corner, size: Size = POPUP): Rect {
  const width = Math.min(size.width, workArea.width - 2 * MARGIN);
  const height = Math.min(size.height, workArea.height - 2 * MARGIN);
  const x = corner.endsWith('left') ? workArea.x + MARGIN : workArea.x + workArea.width - MARGIN - width;
  const offset = slot * (height + GAP);
  const y = corner.startsWith('top') ? workArea.y + MARGIN + offset : workArea.y + workArea.height - MARGIN - height - offset;
  return { x: Math.round(x), y: Math.round(y), width: Math.round(width), height: Math.round(height) };
}
