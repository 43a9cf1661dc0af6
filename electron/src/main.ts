/**
 * Airlock's desktop app: the composition root. It takes the single-instance lock before anything else, finds
 * the facts about where it runs, then wires each feature (`setupX(deps)`) around one state and one line to
 * the broker, and only then starts the broker: every listener is in place before the first event arrives.
 */
import { dataDir } from '@airlock/proxy-core';
import { app, dialog, type Tray } from 'electron';
import { join } from 'node:path';
import { setupApprovals } from './approvals.js';
import { BrokerLink } from './broker.js';
import { setupTripwireNotice } from './estop.js';
import { appFiles, type Environment, launcherFor } from './environment.js';
import { setupIpc } from './ipc.js';
import { fileLog, messageOf } from './log.js';
import { setupStartAtLogin } from './login-item.js';
import { InputWitness } from './input-witness.js';
import { Notices } from './notices.js';
import { Proofs } from './proofs.js';
import { setupPlatform, trayAvailable } from './platform.js';
import { registerScheme, setupProtocol } from './protocol.js';
import { setupQuit } from './quit.js';
import { setupSecurity } from './security.js';
import { setupShortcut } from './shortcut.js';
import { AppState } from './state.js';
import { Streams } from './streams.js';
import { setupTray } from './tray.js';
import { setupUndoLast } from './undo.js';
import { Windows } from './windows.js';

function environment(): Environment {
  const files = appFiles();
  return {
    platform: process.platform,
    packaged: app.isPackaged,
    dataDir: dataDir(process.env),
    execPath: process.execPath,
    ...files,
    userData: app.getPath('userData'),
    logs: app.getPath('logs'),
    launcher: launcherFor({
      platform: process.platform,
      packaged: app.isPackaged,
      electron: Boolean(process.versions.electron),
      execPath: process.execPath,
      resourcesPath: process.resourcesPath,
      cli: files.cli,
      env: process.env,
    }),
  };
}

async function main(): Promise<void> {
  const env = environment();
  const log = fileLog(join(env.logs, 'main.log'));
  log.info(`starting (data in ${env.dataDir})`);
  setupPlatform(env.platform);
  // a tray app lives on with no window open
  app.on('window-all-closed', () => undefined);
  await app.whenReady();

  setupSecurity({ log });
  setupProtocol({ env });
  let tray: Tray | null = null;
  const state = new AppState();
  const broker = new BrokerLink({ env, state, log });
  const witness = new InputWitness();
  const windows = new Windows({ env, log, witness });
  const proofs = new Proofs({ broker, state, witness, log });
  // a second launch (Windows, Linux), or opening the app again from the Finder or the Dock (macOS): the window
  const openWindow = () => windows.openMain('/approvals', { small: tray === null });
  app.on('second-instance', openWindow);
  app.on('activate', openWindow);
  const notices = new Notices({ log, platform: env.platform });
  const streams = new Streams({ broker, log });
  const startAtLogin = setupStartAtLogin({ env, log });
  const shortcut = setupShortcut({ broker, proofs, state, notices, log });
  // the tray's place on screen is known on macOS and Windows only (Tray.getBounds exists nowhere else)
  const trayBounds = () => (tray && !tray.isDestroyed() && (env.platform === 'darwin' || env.platform === 'win32') ? tray.getBounds() : null);
  const approvals = setupApprovals({ env, state, broker, proofs, windows, log, trayBounds });
  setupIpc({ broker, proofs, windows, streams, startAtLogin, log });
  setupTripwireNotice({ state, notices, openActivity: () => windows.openMain('/activity') });

  const quit = setupQuit({
    broker,
    log,
    teardown: () => {
      shortcut.dispose();
      proofs.dispose();
      streams.closeAll();
      approvals.closeAll();
      tray?.destroy();
    },
  });
  if (await trayAvailable(env.platform, process.env)) {
    // Undo last is an item of the tray's menu: without a tray, nothing to keep current
    const undoLast = setupUndoLast({ broker, proofs, state, notices, windows, log });
    tray = setupTray({ env, state, broker, proofs, windows, approvals, shortcut, startAtLogin, notices, undoLast, log });
  } else {
    // no tray on this desktop: a small window is the app's face, and closing it is quitting (with the question)
    log.info('no system tray here: showing a small window instead');
    windows.openMain('/approvals', { small: true }).on('close', (event) => {
      if (quit.confirmed) return;
      event.preventDefault();
      app.quit();
    });
  }

  state.serverProtected.on(() => void startAtLogin.afterProtect());
  broker.connected.on(() => {
    void shortcut.refresh();
    void approvals.refreshStyle();
  });
  await broker.start();
}

registerScheme();
// one app per person: a second launch hands over to the first (which opens its window) and leaves
if (app.requestSingleInstanceLock()) {
  main().catch((err: unknown) => {
    // nothing to show the person but this: a tray app that failed to start would otherwise just not be there
    dialog.showErrorBox('Airlock could not start', messageOf(err));
    app.exit(1);
  });
} else {
  app.quit();
}
