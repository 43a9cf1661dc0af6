/**
 * "Start Airlock when I log in". A protected server refuses every call while Airlock is not running, so once
 * the person has protected something the app turns this on by itself, once, unless they chose already; a
 * choice they make (tray, settings page) is never overridden. macOS and Windows keep it as a login item;
 * Linux has no such API in Electron, so it is an XDG autostart entry.
 */
import { app } from 'electron';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Environment } from './environment.js';
import type { Log } from './log.js';
import { desktopEntry } from './autostart.js';
import { Signal } from './signal.js';

export interface StartAtLogin {
  get(): Promise<boolean>;
  /** `person`: their choice, kept for good; `default`: the app's own, made once after the first protect. */
  set(on: boolean, by: 'person' | 'default'): Promise<void>;
  /** Turn it on after a protect, unless the person chose or it was done before. */
  afterProtect(): Promise<void>;
  readonly changed: Signal<boolean>;
}

interface Prefs {
  startAtLoginChosen?: boolean;
  startAtLoginDefaulted?: boolean;
}

export function setupStartAtLogin(deps: { env: Environment; log: Log }): StartAtLogin {
  const { env, log } = deps;
  const prefsFile = join(env.userData, 'preferences.json');
  const readPrefs = (): Prefs => {
    try {
      const parsed = JSON.parse(readFileSync(prefsFile, 'utf8')) as unknown;
      return typeof parsed === 'object' && parsed !== null ? (parsed as Prefs) : {};
    } catch {
      return {};
    }
  };
  const writePrefs = (p: Prefs) => {
    mkdirSync(env.userData, { recursive: true });
    writeFileSync(prefsFile, JSON.stringify(p, null, 2) + '\n');
  };
  const os = env.platform === 'linux' ? linuxAutostart(env) : loginItem(env);
  const changed = new Signal<boolean>();

  const self: StartAtLogin = {
    changed,
    get: async () => os.get(),
    async set(on, by) {
      os.set(on);
      writePrefs({ ...readPrefs(), ...(by === 'person' ? { startAtLoginChosen: true } : { startAtLoginDefaulted: true }) });
      log.info(`start at login ${on ? 'on' : 'off'} (${by === 'person' ? 'chosen' : 'default after the first protect'})`);
      changed.emit(on);
    },
    async afterProtect() {
      const prefs = readPrefs();
      if (prefs.startAtLoginChosen || prefs.startAtLoginDefaulted) return;
      await self.set(true, 'default');
    },
  };
  return self;
}

interface OsSetting {
  get(): boolean;
  set(on: boolean): void;
}

function loginItem(env: Environment): OsSetting {
  // from a checkout, Electron's binary needs the app folder to know what to run
  const dev = env.packaged ? {} : { path: env.execPath, args: [app.getAppPath()] };
  return {
    get: () => app.getLoginItemSettings(dev).openAtLogin,
    set: (on) => app.setLoginItemSettings({ openAtLogin: on, ...dev }),
  };
}

function linuxAutostart(env: Environment): OsSetting {
  const dir = join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'autostart');
  const file = join(dir, 'airlock.desktop');
  // an AppImage is mounted somewhere new at each start: the file itself is what stays
  const command = env.packaged ? [process.env.APPIMAGE || env.execPath] : [env.execPath, app.getAppPath()];
  return {
    get: () => existsSync(file),
    set: (on) => {
      if (!on) return rmSync(file, { force: true });
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, desktopEntry(command));
    },
  };
}
