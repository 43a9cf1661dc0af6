/**
 * Approval popups: one small frameless window per ticket, always on top, stacked near the tray, showing the
 * renderer's approval card (`#/ticket/ID`). Shown inactive: the app the person is typing in keeps the
 * keyboard, so a keystroke meant for the editor can never answer a popup; a click (or the notification)
 * brings one forward. Tickets beyond what fits on the screen wait for a free slot.
 */
import { type BrowserWindow, screen } from 'electron';
import type { Environment } from './environment.js';
import { capacity, cornerFor, type Rect, slotBounds } from './popup-layout.js';
import type { Windows } from './windows.js';

export class PopupStack {
  /** Popups on screen, in slot order (0 nearest the tray). */
  private readonly shown: { id: string; win: BrowserWindow }[] = [];
  /** Tickets waiting for a slot, oldest first. */
  private readonly queued: string[] = [];

  constructor(
    private readonly deps: {
      env: Environment;
      windows: Windows;
      /** Where the tray icon is, when the OS says (macOS, Windows). */
      trayBounds: () => Rect | null;
      /** A popup's title, for the window list and screen readers. */
      titleOf: (ticketId: string) => string;
    },
  ) {}

  has(id: string): boolean {
    return this.shown.some((p) => p.id === id);
  }

  /** Show the ticket's popup, inactive; false when no slot is free (it is queued). */
  add(id: string): boolean {
    if (this.has(id)) return true;
    const { workArea } = this.place();
    if (this.shown.length >= capacity(workArea)) {
      if (!this.queued.includes(id)) this.queued.push(id);
      return false;
    }
    this.create(id).showInactive();
    return true;
  }

  /** Bring the ticket's popup forward and give it focus: the person asked for it (tray item, notification). */
  focus(id: string): void {
    let entry = this.shown.find((p) => p.id === id);
    if (!entry) {
      // asked for by name: it takes the slot nearest the tray even when the column is full
      const q = this.queued.indexOf(id);
      if (q !== -1) this.queued.splice(q, 1);
      entry = { id, win: this.create(id, 0) };
    }
    entry.win.show();
    entry.win.focus();
  }

  /** The ticket ended (or its popup was closed): take its popup away and move the others up. */
  remove(id: string): void {
    const q = this.queued.indexOf(id);
    if (q !== -1) this.queued.splice(q, 1);
    const i = this.shown.findIndex((p) => p.id === id);
    if (i === -1) return;
    const [gone] = this.shown.splice(i, 1);
    if (gone && !gone.win.isDestroyed()) gone.win.close();
    this.layout();
    const next = this.queued.shift();
    if (next !== undefined) this.add(next);
  }

  closeAll(): void {
    this.queued.length = 0;
    for (const p of this.shown.splice(0)) if (!p.win.isDestroyed()) p.win.close();
  }

  private create(id: string, slot = this.shown.length): BrowserWindow {
    const { workArea, corner } = this.place();
    const bounds = slotBounds(slot, workArea, corner);
    const win = this.deps.windows.create(
      'popup',
      {
        ...bounds,
        title: this.deps.titleOf(id),
        frame: false,
        resizable: false,
        minimizable: false,
        maximizable: false,
        fullscreenable: false,
        alwaysOnTop: true,
        skipTaskbar: true,
        // macOS: a non-activating panel floats over full-screen apps and does not pull the app forward
        ...(this.deps.env.platform === 'darwin' ? { type: 'panel' } : {}),
      },
      `/ticket/${encodeURIComponent(id)}`,
    );
    win.setAlwaysOnTop(true, 'floating');
    this.shown.splice(slot, 0, { id, win });
    // closed by the person (or the page) before the ticket ended: the tray still lists it
    win.once('closed', () => {
      const i = this.shown.findIndex((p) => p.win === win);
      if (i === -1) return;
      this.shown.splice(i, 1);
      this.layout();
    });
    if (slot < this.shown.length - 1) this.layout();
    return win;
  }

  private layout(): void {
    const { workArea, corner } = this.place();
    this.shown.forEach((p, slot) => {
      if (!p.win.isDestroyed()) p.win.setBounds(slotBounds(slot, workArea, corner));
    });
  }

  private place(): { workArea: Rect; corner: ReturnType<typeof cornerFor> } {
    const tray = this.deps.trayBounds();
    const display = tray && tray.width > 0 ? screen.getDisplayNearestPoint({ x: tray.x, y: tray.y }) : screen.getPrimaryDisplay();
    return { workArea: display.workArea, corner: cornerFor(display.workArea, tray, this.deps.env.platform) };
  }
}
