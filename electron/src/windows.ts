/**
 * Every window the app opens is made here, with the same locked-down web preferences, and remembered: the IPC
 * layer answers only windows on this list showing one of the app's own pages. Also the main window (the full
 * UI), and on macOS the Dock icon, which is shown only while that window is open (a tray app has no Dock
 * presence otherwise).
 */
import { app, BrowserWindow, type BrowserWindowConstructorOptions, type IpcMainEvent, type IpcMainInvokeEvent, type WebPreferences } from 'electron';
import type { Environment } from './environment.js';
import { type Log, messageOf } from './log.js';
import { appUrl, isAppUrl } from './app-url.js';
import type { InputWitness } from './input-witness.js';

export type WindowKind = 'main' | 'popup';

/** Explicit, even where Electron's default agrees: a default that changes must not loosen the app. */
export function securePreferences(preload: string): WebPreferences {
  return {
    preload,
    sandbox: true,
    contextIsolation: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
  };
}

const BACKGROUND = '#1f2430';

export class Windows {
  private readonly own = new Map<number, { win: BrowserWindow; kind: WindowKind }>();
  private main: BrowserWindow | null = null;

  constructor(private readonly deps: { env: Environment; log: Log; witness: InputWitness }) {}

  /** A new window of ours showing `route`; not shown (the caller decides how: a popup must not take focus). */
  create(kind: WindowKind, options: BrowserWindowConstructorOptions, route: string): BrowserWindow {
    const win = new BrowserWindow({
      backgroundColor: BACKGROUND,
      ...options,
      show: false,
      webPreferences: securePreferences(this.deps.env.preload),
    });
    const id = win.webContents.id;
    // from its first moment: a click counts only when the main process saw it reach this window
    this.deps.witness.watch(win);
    this.own.set(id, { win, kind });
    win.once('closed', () => this.own.delete(id));
    win.loadURL(appUrl(route)).catch((err: unknown) => this.deps.log.warn(`a ${kind} window did not load ${route}: ${messageOf(err)}`));
    return win;
  }

  /** The window an IPC message came from, when it is one of ours and its sending frame shows one of our pages. */
  senderOf(event: IpcMainEvent | IpcMainInvokeEvent): BrowserWindow | null {
    const entry = this.own.get(event.sender.id);
    if (!entry || entry.win.isDestroyed() || entry.win.webContents !== event.sender) return null;
    const frame = event.senderFrame;
    // the top frame only: a page of ours embeds nothing, so a message from a subframe is not from the UI
    if (!frame || frame.parent !== null || !isAppUrl(frame.url)) return null;
    return entry.win;
  }

  /** Open the main window on `route`, or bring it forward there (a person asked for it: it may take focus). */
  openMain(route = '/approvals', opts: { small?: boolean } = {}): BrowserWindow {
    const existing = this.main;
    if (existing && !existing.isDestroyed()) {
      // another route of the same page: an in-page navigation, the page keeps its state and streams
      if (existing.webContents.getURL() !== appUrl(route)) existing.loadURL(appUrl(route)).catch(() => undefined);
      if (existing.isMinimized()) existing.restore();
      existing.show();
      existing.focus();
      return existing;
    }
    const win = this.create(
      'main',
      opts.small
        ? { width: 480, height: 640, minWidth: 380, minHeight: 420, title: 'Airlock', autoHideMenuBar: true }
        : { width: 1040, height: 720, minWidth: 640, minHeight: 480, title: 'Airlock', autoHideMenuBar: true },
      route,
    );
    this.main = win;
    if (this.deps.env.platform === 'darwin') void app.dock?.show();
    win.once('closed', () => {
      if (this.main === win) this.main = null;
      if (this.deps.env.platform === 'darwin') app.dock?.hide();
    });
    win.show();
    win.focus();
    return win;
  }

  get mainWindow(): BrowserWindow | null {
    return this.main && !this.main.isDestroyed() ? this.main : null;
  }

  all(): BrowserWindow[] {
    return [...this.own.values()].map((e) => e.win).filter((w) => !w.isDestroyed());
  }
}
