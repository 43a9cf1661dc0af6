/**
 * Telling the person something happened that they did not see happen (the E-Stop shortcut pressed from another
 * app, a shortcut another app holds): a balloon from the tray on Windows, a silent OS notification elsewhere.
 */
import { Notification, type Tray } from 'electron';
import type { Log } from './log.js';

export class Notices {
  tray: Tray | null = null;

  constructor(private readonly deps: { log: Log; platform: NodeJS.Platform }) {}

  say(title: string, body: string): void {
    this.deps.log.info(`${title}: ${body}`);
    if (this.deps.platform === 'win32' && this.tray && !this.tray.isDestroyed()) {
      this.tray.displayBalloon({ title, content: body, noSound: true });
      return;
    }
    if (Notification.isSupported()) new Notification({ title, body, silent: true }).show();
  }
}
