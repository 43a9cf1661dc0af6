/**
 * What differs by OS before anything is shown. macOS: a menu-bar app, no Dock icon until a window opens.
 * Windows: an AppUserModelID, without which toasts neither show the app's name nor come back to it when
 * clicked. Linux: whether a tray exists at all (GNOME has none without an extension; then the app falls back
 * to a small window).
 */
import { app } from 'electron';
import { execFile } from 'node:child_process';
import { APP_ID } from './environment.js';

export function setupPlatform(platform: NodeJS.Platform): void {
  if (platform === 'darwin') app.dock?.hide();
  if (platform === 'win32') app.setAppUserModelId(APP_ID);
}

/**
 * Whether a tray icon will be seen. AIRLOCK_TRAY=on|off decides when set. On Linux, Electron shows the icon
 * through a StatusNotifier host on the session bus, or falls back to the old XEmbed tray, which X11 desktops
 * other than GNOME still have.
 */
export async function trayAvailable(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): Promise<boolean> {
  if (env.AIRLOCK_TRAY === 'on') return true;
  if (env.AIRLOCK_TRAY === 'off') return false;
  if (platform !== 'linux') return true;
  if (await statusNotifierHost()) return true;
  return env.XDG_SESSION_TYPE === 'x11' && !/gnome/i.test(env.XDG_CURRENT_DESKTOP ?? '');
}

function statusNotifierHost(): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      'gdbus',
      ['call', '--session', '--dest', 'org.freedesktop.DBus', '--object-path', '/org/freedesktop/DBus', '--method', 'org.freedesktop.DBus.NameHasOwner', 'org.kde.StatusNotifierWatcher'],
      { timeout: 2000 },
      (err, stdout) => resolve(!err && /true/.test(stdout)),
    );
  });
}
