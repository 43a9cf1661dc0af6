/**
 * The tray icon and its menu: the app's face. The icon says idle / N waiting / E-Stop / broker problem; the
 * menu lists the waiting calls (each opens its popup), E-Stop (and why, when the tripwire engaged it), Undo
 * last, the window, Protect, start at login and Quit.
 * Everything is redrawn from the state when it changes.
 */
import { app, Menu, type MenuItemConstructorOptions, nativeImage, Tray } from 'electron';
import type { Approvals } from './approvals.js';
import type { BrokerLink } from './broker.js';
import type { Environment } from './environment.js';
import { type EstopDeps, setEstop } from './estop.js';
import type { StartAtLogin } from './login-item.js';
import type { Notices } from './notices.js';
import { leaseLine, NO_APP_PROOFS, withPresence } from './presence-text.js';
import type { Shortcut } from './shortcut.js';
import type { AppState } from './state.js';
import { native } from './ticket-text.js';
import { estopCauseLabel, trayIconFile, trayLook, trayTooltip } from './tray-look.js';
import type { UndoLast } from './undo.js';
import { undoLastLabel } from './undo-text.js';
import type { Windows } from './windows.js';

export interface TrayDeps extends EstopDeps {
  env: Environment;
  state: AppState;
  broker: BrokerLink;
  windows: Windows;
  approvals: Approvals;
  shortcut: Shortcut;
  startAtLogin: StartAtLogin;
  notices: Notices;
  undoLast: UndoLast;
}

/** Waiting calls listed in the menu; the rest are one click away in the window. */
const MENU_TICKETS = 10;

export function setupTray(deps: TrayDeps): Tray {
  const { env, state, windows } = deps;
  const tray = new Tray(nativeImage.createFromPath(trayIconFile(env.trayIcons, 'idle', env.platform)));
  deps.notices.tray = tray;
  let look = 'idle';
  let startAtLogin = false;

  const render = () => {
    const pending = state.tickets.length;
    const now = trayLook(state.health, state.estop, pending, state.diskFull !== null);
    if (now !== look) {
      look = now;
      tray.setImage(nativeImage.createFromPath(trayIconFile(env.trayIcons, now, env.platform)));
    }
    const base = trayTooltip(state.health, state.estop, pending, state.estopCause, state.diskFull !== null);
    tray.setToolTip(native(withPresence(base, deps.proofs.warning)));
    // the count: next to the icon in the macOS menu bar; a badge where the OS has one (macOS Dock, Unity launcher)
    if (env.platform === 'darwin') tray.setTitle(pending > 0 ? String(pending) : '');
    if (env.platform !== 'win32') app.setBadgeCount(pending);
    // labels carry servers', clients' and tools' names: none reaches the menu raw
    tray.setContextMenu(Menu.buildFromTemplate(menu(deps, startAtLogin).map((i) => (i.label === undefined ? i : { ...i, label: native(i.label) }))));
  };

  state.changed.on(render);
  deps.shortcut.changed.on(render);
  deps.undoLast.changed.on(render);
  deps.proofs.changed.on(render);
  deps.startAtLogin.changed.on((on) => {
    startAtLogin = on;
    render();
  });
  void deps.startAtLogin.get().then((on) => {
    startAtLogin = on;
    render();
  });
  // Windows: a click on a tray icon opens the app; on macOS and Linux a click opens the menu
  if (env.platform === 'win32') tray.on('click', () => windows.openMain());
  render();
  return tray;
}

function menu(deps: TrayDeps, startAtLogin: boolean): MenuItemConstructorOptions[] {
  const { state, broker, windows, approvals, shortcut, undoLast, proofs } = deps;
  const items: MenuItemConstructorOptions[] = [];
  const health = state.health;
  if (health.state === 'problem') {
    items.push({ id: 'problem', label: `Airlock is not running: ${health.reason}`.slice(0, 120), enabled: false });
    items.push({ id: 'retry', label: 'Start Airlock again', click: () => void broker.start() });
  } else if (health.state === 'starting') {
    items.push({ id: 'starting', label: 'Starting…', enabled: false });
  }
  const tickets = state.tickets;
  if (health.state === 'ready') {
    if (tickets.length === 0) items.push({ id: 'none-waiting', label: 'Nothing waits for you', enabled: false });
    for (const t of tickets.slice(0, MENU_TICKETS)) {
      items.push({ id: `ticket:${t.id}`, label: `${t.client}: ${t.server} · ${t.tool}…`, click: () => approvals.open(t.id) });
    }
    if (tickets.length > MENU_TICKETS) {
      items.push({ id: 'more-waiting', label: `${tickets.length - MENU_TICKETS} more…`, click: () => windows.openMain('/approvals') });
    }
  }
  // presence: the broker's standing warning, where approving here cannot work, and how long a proof holds
  if (proofs.warning) items.push({ id: 'presence-warning', label: `WARNING: ${proofs.warning}`, enabled: false });
  if (health.state === 'ready' && proofs.unavailable) items.push({ id: 'presence-unavailable', label: `Approving here is not available: ${NO_APP_PROOFS}`, enabled: false });
  const until = proofs.leaseUntil;
  const lease = until === null ? null : leaseLine(until, Date.now());
  if (lease) items.push({ id: 'presence-lease', label: lease, enabled: false });
  items.push({ type: 'separator' });
  items.push({
    id: 'estop',
    label: 'E-Stop: refuse every tool call',
    type: 'checkbox',
    checked: state.estop,
    // shown beside the item; the global shortcut itself is registered apart
    ...(shortcut.accelerator ? { accelerator: shortcut.accelerator, registerAccelerator: false } : {}),
    click: () => void setEstop(deps, { on: !state.estop, quietly: true, via: 'the tray' }),
  });
  const cause = state.estop ? estopCauseLabel(state.estopCause) : null;
  if (cause) items.push({ id: 'estop-cause', label: cause, enabled: false });
  if (state.diskFull) items.push({ id: 'disk-full', label: 'The disk is full: every call is refused until there is room', enabled: false });
  if (shortcut.problem) items.push({ id: 'shortcut-problem', label: `E-Stop shortcut: ${shortcut.problem}`, enabled: false });
  // the newest change Airlock can take back (files put back from their snapshot, or the declared inverse called)
  items.push({
    id: 'undo-last',
    label: undoLastLabel(undoLast.target, undoLast.busy),
    enabled: health.state === 'ready' && undoLast.target !== null && !undoLast.busy,
    click: () => void undoLast.run(),
  });
  items.push({ type: 'separator' });
  items.push({ id: 'open', label: 'Open Airlock', click: () => windows.openMain('/approvals') });
  items.push({ id: 'protect', label: 'Protect servers…', click: () => windows.openMain('/servers') });
  items.push({
    id: 'start-at-login',
    label: 'Start at login',
    type: 'checkbox',
    checked: startAtLogin,
    click: (item) => void deps.startAtLogin.set(item.checked, 'person'),
  });
  items.push({ type: 'separator' });
  items.push({ id: 'quit', label: 'Quit Airlock', click: () => app.quit() });
  return items;
}
