/**
 * Telling the person something happened that they did not see happen (the E-Stop shortcut pressed from another
 * app, a shortcut another app holds, the tripwire, what "Undo last" did): a balloon from the tray on Windows, a
 * silent OS notification elsewhere. A notice may say what a click on it does (open the app where to decide).
 */
import { Notification, type Tray } from 'electron';
import type { Log } from './log.js';
import { native } from './ticket-text.js';

/** Notices kept referenced so their click handlers live (a collected notification loses them). */
const KEEP = 8;

export class Notices {
  private current: Tray | null = null;
  /** What a click on the newest balloon does (Windows shows one balloon at a time). */
  private balloonClick: (() => void) | null = null;
  private readonly shown: Notification[] = [];

  constructor(private readonly deps: { log: Log; platform: NodeJS.Platform }) {}

  get tray(): Tray | null {
    return this.current;
  }

  set tray(tray: Tray | null) {
    this.current = tray;
    tray?.on('balloon-click', () => {
      const click = this.balloonClick;
      this.balloonClick = null;
      click?.();
    });
  }

  say(rawTitle: string, rawBody: string, opts: { onClick?: () => void } = {}): void {
    // a notice may name a server from a config file, a tool, a path: none reaches the OS raw
    const title = native(rawTitle);
    const body = native(rawBody);
    this.deps.log.info(`${title}: ${body}`);
    const tray = this.current;
    if (this.deps.platform === 'win32' && tray && !tray.isDestroyed()) {
      this.balloonClick = opts.onClick ?? null;
      tray.displayBalloon({ title, content: body, noSound: true });
      return;
    }
    if (!Notification.isSupported()) return;
    const n = new Notification({ title, body, silent: true });
    const click = opts.onClick;
    if (click) n.on('click', () => click());
    n.show();
    this.shown.push(n);
    if (this.shown.length > KEEP) this.shown.shift();
  }
}
