// The one stand-in for the `electron` module (the Electron binary cannot run here). The app's real built main
// entry imports it in place of Electron (see load-with-stand-in.mjs) and runs under plain Node. It does what
// the app relies on Electron for, as Electron does it where that matters to the app's correctness:
//
// - ordering rules: no window, tray, shortcut, protocol handler or session before `ready`; privileged schemes
//   only before it; `app.quit()` runs before-quit → closes windows → will-quit, each preventable;
// - the single-instance lock, across processes (a lock file and a socket under STANDIN_DIR): a second
//   instance gets `false` and the first hears `second-instance`;
// - the renderer side: each window's page is fetched through the app's protocol handler, its preload runs
//   the way a sandboxed preload does (CommonJS, `require('electron')` only), and what it exposes crosses a
//   context bridge that copies values and keeps only the message of an Error; `ipcRenderer.invoke/send` reach
//   `ipcMain` with an event whose sender is the window's webContents and whose frame shows its URL;
// - dialogs stay open until answered, and close when their AbortSignal fires.
// - input reaches a window as Chromium reports it (`input-event`), Touch ID exists only where STANDIN_TOUCH_ID
//   says this is a Mac (its prompt stays up until answered), and the OS's power events (lock-screen, suspend).
//
// Everything the app does to it is recorded and sent to the test (the parent process, over Node's IPC
// channel); the test drives it back with commands, as a person would: click a tray item, press the shortcut,
// answer a dialog, call the page's `window.airlock`, close a popup, quit.
import childProcess from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';

const DIR = process.env.STANDIN_DIR;
if (!DIR) throw new Error('the electron stand-in needs STANDIN_DIR (a folder for its paths and locks)');
mkdirSync(DIR, { recursive: true });
// a packaged app (STANDIN_PACKAGED=1) has its resources folder here
if (process.env.STANDIN_RESOURCES) process.resourcesPath = process.env.STANDIN_RESOURCES;

// ---- recording ----------------------------------------------------------------------------------------------

let seq = 0;
const inFlight = new Set();
const track = (p) => {
  inFlight.add(p);
  void p.finally(() => inFlight.delete(p));
};

/** JSON-safe copy (functions and signals named, not sent). */
const plain = (v) =>
  v === undefined ? undefined : JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'function' ? '[function]' : x instanceof AbortSignal ? '[signal]' : x)));

function record(type, data = {}) {
  const r = { seq: ++seq, type, ...plain(data) };
  if (process.send) track(new Promise((resolve) => process.send({ kind: 'record', record: r }, () => resolve())));
}

/** Exit once every record and every hand-over to a first instance has left. */
async function exitSoon(code) {
  await Promise.allSettled([...inFlight]);
  process.exit(code);
}

const preventable = () => ({
  defaultPrevented: false,
  preventDefault() {
    this.defaultPrevented = true;
  },
});

// ---- a test's look at the app's key pipe ---------------------------------------------------------------------

/**
 * STANDIN_SPY_FD3=1: what the app writes on fd 3 of a child it spawns (the broker's key pipe) is recorded, so a
 * test knows the key and can look for it where it must never be (argv, environment, files).
 */
if (process.env.STANDIN_SPY_FD3 === '1') {
  const realSpawn = childProcess.spawn;
  childProcess.spawn = function spawn(...args) {
    const child = realSpawn.apply(this, args);
    const pipe = child.stdio?.[3];
    if (pipe) {
      const end = pipe.end.bind(pipe);
      pipe.end = (chunk, ...rest) => {
        record('fd3-written', { pid: child.pid, text: chunk === undefined ? '' : String(chunk) });
        return end(chunk, ...rest);
      };
    }
    return child;
  };
  syncBuiltinESMExports();
}

// ---- app ----------------------------------------------------------------------------------------------------

let ready = false;
let quitting = false;
let resolveReady;
const readyPromise = new Promise((r) => (resolveReady = r));
const needReady = (what) => {
  if (!ready) throw new Error(`${what} cannot be used before the app is ready`);
};

class App extends EventEmitter {
  name = 'Airlock';
  isPackaged = process.env.STANDIN_PACKAGED === '1';
  loginItem = false;
  badge = 0;
  dockVisible = process.platform === 'darwin';
  dock =
    process.platform === 'darwin'
      ? {
          hide: () => {
            this.dockVisible = false;
            record('dock', { visible: false });
          },
          show: async () => {
            this.dockVisible = true;
            record('dock', { visible: true });
          },
          setBadge() {},
        }
      : undefined;

  whenReady() {
    return readyPromise;
  }
  isReady() {
    return ready;
  }
  getPath(name) {
    const p = join(DIR, 'paths', name);
    mkdirSync(p, { recursive: true });
    return p;
  }
  getAppPath() {
    return process.cwd();
  }
  getName() {
    return this.name;
  }
  getVersion() {
    return '0.1.0';
  }
  setAppUserModelId(id) {
    record('app-user-model-id', { id });
  }
  setBadgeCount(count) {
    if (count !== this.badge) record('badge', { count });
    this.badge = count;
    return true;
  }
  getLoginItemSettings() {
    return { openAtLogin: this.loginItem, executableWillLaunchAtLogin: this.loginItem };
  }
  setLoginItemSettings(settings) {
    this.loginItem = Boolean(settings.openAtLogin);
    record('login-item', { settings });
  }
  focus() {}

  requestSingleInstanceLock(additionalData) {
    const lock = join(DIR, 'single-instance.json');
    const socket = join(DIR, 'single-instance.sock');
    try {
      writeFileSync(lock, JSON.stringify({ pid: process.pid }), { flag: 'wx' });
    } catch {
      let holder = 0;
      try {
        holder = JSON.parse(readFileSync(lock, 'utf8')).pid;
      } catch {
        // unreadable: treat as stale
      }
      if (holder && holder !== process.pid && alive(holder)) {
        // hand the launch over to the first instance, as Electron does, then report that this one lost
        track(
          new Promise((resolve) => {
            const s = createConnection(socket);
            s.once('connect', () => s.end(JSON.stringify({ argv: process.argv, cwd: process.cwd(), data: additionalData ?? null })));
            s.once('close', resolve);
            s.once('error', resolve);
          }),
        );
        record('single-instance-lock', { got: false });
        return false;
      }
      writeFileSync(lock, JSON.stringify({ pid: process.pid }));
    }
    rmSync(socket, { force: true });
    const server = createServer((s) => {
      let text = '';
      s.setEncoding('utf8');
      s.on('data', (d) => (text += d));
      s.on('end', () => {
        const { argv, cwd, data } = JSON.parse(text);
        record('second-instance', { argv });
        this.emit('second-instance', preventable(), argv, cwd, data);
      });
    });
    server.listen(socket);
    server.unref();
    process.once('exit', () => {
      try {
        if (JSON.parse(readFileSync(lock, 'utf8')).pid === process.pid) rmSync(lock);
      } catch {
        // gone already
      }
    });
    record('single-instance-lock', { got: true });
    return true;
  }

  quit() {
    if (quitting) return;
    record('quit-requested');
    const before = preventable();
    this.emit('before-quit', before);
    if (before.defaultPrevented) return record('quit-held', { by: 'before-quit' });
    quitting = true;
    for (const w of BrowserWindow.getAllWindows()) w.close();
    if (BrowserWindow.getAllWindows().length > 0) {
      quitting = false;
      return record('quit-held', { by: 'a window' });
    }
    const will = preventable();
    this.emit('will-quit', will);
    if (will.defaultPrevented) {
      quitting = false;
      return record('quit-held', { by: 'will-quit' });
    }
    this.emit('quit', preventable(), 0);
    record('exit', { code: 0 });
    void exitSoon(0);
  }

  exit(code = 0) {
    record('exit', { code });
    void exitSoon(code);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

export const app = new App();

// ready once the main entry's module graph has run, as Electron delays `ready` for an ESM entry
setTimeout(() => {
  ready = true;
  record('ready');
  app.emit('ready', preventable(), {});
  resolveReady();
}, 0);

// ---- protocol and session -----------------------------------------------------------------------------------

const protocolHandlers = new Map();
const privileged = [];

export const protocol = {
  registerSchemesAsPrivileged(schemes) {
    if (ready) throw new Error('protocol.registerSchemesAsPrivileged should be called before the app is ready');
    privileged.push(...schemes);
    record('schemes-privileged', { schemes });
  },
  handle(scheme, handler) {
    needReady('protocol.handle');
    if (protocolHandlers.has(scheme)) throw new Error(`Failed to register protocol: ${scheme}`);
    protocolHandlers.set(scheme, handler);
    record('protocol-handled', { scheme });
  },
  unhandle(scheme) {
    protocolHandlers.delete(scheme);
  },
  isProtocolHandled: (scheme) => protocolHandlers.has(scheme),
};

const defaultSession = {
  permissionRequestHandler: null,
  permissionCheckHandler: null,
  setPermissionRequestHandler(handler) {
    this.permissionRequestHandler = handler;
  },
  setPermissionCheckHandler(handler) {
    this.permissionCheckHandler = handler;
  },
  protocol,
};

export const session = {
  get defaultSession() {
    needReady('session.defaultSession');
    return defaultSession;
  },
};

/** Fetch a URL through the app's protocol handler, as Chromium would for a page or one of its files. */
async function fetchThroughProtocol(url, method = 'GET') {
  const handler = protocolHandlers.get(new URL(url).protocol.slice(0, -1));
  if (!handler) return { status: null };
  const res = await handler(new Request(url, { method }));
  return { status: res.status, headers: Object.fromEntries(res.headers.entries()), body: method === 'HEAD' ? '' : (await res.text()).slice(0, 4000) };
}

// ---- IPC ----------------------------------------------------------------------------------------------------

const ipcHandlers = new Map();

class IpcMain extends EventEmitter {
  handle(channel, handler) {
    if (ipcHandlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    ipcHandlers.set(channel, handler);
    record('ipc-handle', { channel });
  }
  handleOnce(channel, handler) {
    this.handle(channel, (...a) => {
      ipcHandlers.delete(channel);
      return handler(...a);
    });
  }
  removeHandler(channel) {
    ipcHandlers.delete(channel);
  }
}

export const ipcMain = new IpcMain();

/** What ipcMain's listeners receive: the sender's webContents and the frame the message came from. */
function ipcEvent(sender, frameUrl, subframe = false) {
  const frame = { url: frameUrl, parent: subframe ? { url: frameUrl, parent: null } : null, processId: 1, routingId: subframe ? 2 : 1 };
  return { sender, senderFrame: frame, processId: 1, frameId: frame.routingId, returnValue: undefined, ...preventable() };
}

async function invokeHandler(channel, event, args) {
  const handler = ipcHandlers.get(channel);
  if (!handler) throw new Error(`No handler registered for '${channel}'`);
  try {
    return structuredClone(await handler(event, ...structuredClone(args)));
  } catch (err) {
    // what Electron does to an error thrown in a handler: the renderer sees this message only
    throw new Error(`Error invoking remote method '${channel}': ${err}`);
  }
}

// ---- windows and their pages --------------------------------------------------------------------------------

let nextContents = 1;
let nextWindow = 1;
const allWindows = new Map();

class WebContents extends EventEmitter {
  constructor(owner) {
    super();
    this.id = nextContents++;
    this.owner = owner;
    this.url = '';
    this.destroyed = false;
    this.windowOpenHandler = null;
    /** The page's side of IPC: what `ipcRenderer.on` listens to. */
    this.page = new EventEmitter();
  }
  getURL() {
    return this.url;
  }
  isDestroyed() {
    return this.destroyed;
  }
  send(channel, ...args) {
    if (this.destroyed) throw new Error('Object has been destroyed');
    const copy = structuredClone(args);
    setImmediate(() => this.page.emit(channel, { sender: null }, ...copy));
  }
  setWindowOpenHandler(handler) {
    this.windowOpenHandler = handler;
  }
  focus() {}
  openDevTools() {
    record('devtools', { webContents: this.id });
  }
}

export class BrowserWindow extends EventEmitter {
  static getAllWindows() {
    return [...allWindows.values()].filter((w) => !w.destroyed);
  }
  static fromWebContents(contents) {
    return BrowserWindow.getAllWindows().find((w) => w.webContents === contents) ?? null;
  }

  constructor(options = {}) {
    super();
    needReady('BrowserWindow');
    this.id = nextWindow++;
    this.options = options;
    this.destroyed = false;
    this.visible = false;
    this.focused = false;
    this.shownInactive = false;
    this.alwaysOnTop = Boolean(options.alwaysOnTop);
    this.bounds = { x: options.x ?? 0, y: options.y ?? 0, width: options.width ?? 800, height: options.height ?? 600 };
    this.world = null;
    this.webContents = new WebContents(this);
    allWindows.set(this.id, this);
    app.emit('web-contents-created', preventable(), this.webContents);
    app.emit('browser-window-created', preventable(), this);
    record('window-created', { window: this.id, webContents: this.webContents.id, options });
  }

  async loadURL(url) {
    if (this.destroyed) throw new Error('Object has been destroyed');
    const before = this.webContents.url;
    this.webContents.url = url;
    record('window-load', { window: this.id, url });
    // same document, another hash: an in-page navigation, no new page and no new preload
    if (before && before.split('#')[0] === url.split('#')[0]) return this.webContents.emit('did-navigate-in-page', preventable(), url, true);
    const { status } = await fetchThroughProtocol(url);
    // a new document commits, then its preload runs
    this.webContents.emit('did-navigate', preventable(), url, status ?? 0, '');
    if (this.options.webPreferences?.preload) runPreload(this);
    record('window-loaded', { window: this.id, url, status });
    this.webContents.emit('did-finish-load');
  }
  show() {
    this.visible = true;
    this.focused = true;
    record('window-show', { window: this.id });
    this.emit('show');
  }
  showInactive() {
    this.visible = true;
    this.shownInactive = true;
    record('window-show-inactive', { window: this.id });
    this.emit('show');
  }
  focus() {
    this.focused = true;
    record('window-focus', { window: this.id });
    this.emit('focus');
  }
  hide() {
    this.visible = false;
    this.emit('hide');
  }
  close() {
    if (this.destroyed) return;
    const e = preventable();
    this.emit('close', e);
    if (!e.defaultPrevented) this.destroy();
  }
  destroy() {
    if (this.destroyed) return;
    this.destroyed = true;
    this.visible = false;
    this.webContents.destroyed = true;
    this.webContents.emit('destroyed');
    record('window-closed', { window: this.id });
    this.emit('closed');
    // Electron's default with no listener is to quit; never during a quit
    if (!quitting && BrowserWindow.getAllWindows().length === 0) {
      if (app.listenerCount('window-all-closed') > 0) app.emit('window-all-closed');
      else app.quit();
    }
  }
  isDestroyed() {
    return this.destroyed;
  }
  isVisible() {
    return this.visible;
  }
  isFocused() {
    return this.focused;
  }
  isMinimized() {
    return false;
  }
  restore() {}
  setBounds(bounds) {
    this.bounds = { ...this.bounds, ...bounds };
    record('window-bounds', { window: this.id, bounds: this.bounds });
  }
  getBounds() {
    return { ...this.bounds };
  }
  setAlwaysOnTop(flag, level) {
    this.alwaysOnTop = flag;
    this.alwaysOnTopLevel = level;
  }
  setVisibleOnAllWorkspaces() {}
  setTitle(title) {
    this.options = { ...this.options, title };
  }
  getTitle() {
    return this.options.title ?? '';
  }
  setMenuBarVisibility() {}
  removeMenu() {}
  moveTop() {}
}

/**
 * Run a window's preload as Electron runs a sandboxed one: CommonJS, `require('electron')` and nothing else,
 * and what it exposes reachable from the page only through the context bridge.
 */
function runPreload(win) {
  const prefs = win.options.webPreferences;
  if (prefs.sandbox !== true || prefs.contextIsolation === false) throw new Error('the stand-in runs sandboxed, context-isolated preloads only');
  const world = {};
  const contents = win.webContents;
  const ipcRenderer = {
    invoke: (channel, ...args) => invokeHandler(channel, ipcEvent(contents, contents.url), args),
    send: (channel, ...args) => {
      const copy = structuredClone(args);
      setImmediate(() => ipcMain.emit(channel, ipcEvent(contents, contents.url), ...copy));
    },
    on: (channel, listener) => (contents.page.on(channel, listener), ipcRenderer),
    once: (channel, listener) => (contents.page.once(channel, listener), ipcRenderer),
    removeListener: (channel, listener) => (contents.page.removeListener(channel, listener), ipcRenderer),
    off: (channel, listener) => (contents.page.off(channel, listener), ipcRenderer),
  };
  const contextBridge = {
    exposeInMainWorld(key, api) {
      world[key] = bridge(api);
      record('bridge-exposed', { window: win.id, key, shape: shapeOf(api) });
    },
  };
  const sandboxRequire = (name) => {
    if (name === 'electron') return { contextBridge, ipcRenderer };
    throw new Error(`module not found: ${name} (a sandboxed preload may require only electron)`);
  };
  const module = { exports: {} };
  const code = readFileSync(prefs.preload, 'utf8');
  new Function('require', 'module', 'exports', 'process', code)(sandboxRequire, module, module.exports, { platform: process.platform, env: {} });
  win.world = world;
}

/** A value as it arrives on the other side of the context bridge: copied, functions proxied, Errors cut to their message. */
function bridge(v) {
  if (typeof v === 'function') return (...args) => bridge(v(...args.map(bridge)));
  if (v instanceof Promise) return v.then(bridge, (err) => Promise.reject(err instanceof Error ? new Error(err.message) : bridge(err)));
  if (v instanceof Error) return new Error(v.message);
  if (Array.isArray(v)) return v.map(bridge);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, bridge(x)]));
  return v;
}

/** The exposed API's shape: names and kinds, to see that nothing but named methods crossed. */
function shapeOf(v) {
  if (typeof v === 'function') return 'function';
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shapeOf(x)]));
  return typeof v;
}

// ---- tray, menus, images ------------------------------------------------------------------------------------

let nextTray = 1;
const trays = [];
const imagePath = (image) => (typeof image === 'string' ? image : (image?.path ?? null));

export const nativeImage = {
  createFromPath: (path) => ({ path, isEmpty: () => !existsSync(path), isTemplateImage: () => /Template(@\dx)?\.png$/.test(path) }),
  createEmpty: () => ({ path: null, isEmpty: () => true }),
};

class MenuItem {
  constructor(options) {
    Object.assign(this, options);
    this.type = options.type ?? (options.submenu ? 'submenu' : 'normal');
    this.checked = Boolean(options.checked);
    this.enabled = options.enabled !== false;
    this.visible = options.visible !== false;
  }
}

export class Menu {
  constructor() {
    this.items = [];
  }
  static buildFromTemplate(template) {
    const menu = new Menu();
    menu.items = template.map(
      (o) => new MenuItem({ ...o, ...(o.submenu ? { submenu: o.submenu instanceof Menu ? o.submenu : Menu.buildFromTemplate(o.submenu) } : {}) }),
    );
    return menu;
  }
  getMenuItemById(id) {
    for (const item of this.items) {
      if (item.id === id) return item;
      const inner = item.submenu?.getMenuItemById(id);
      if (inner) return inner;
    }
    return null;
  }
}

const describeMenu = (menu) =>
  menu.items.map((i) => ({
    id: i.id ?? null,
    label: i.label ?? null,
    type: i.type,
    checked: i.checked,
    enabled: i.enabled,
    accelerator: i.accelerator ?? null,
    ...(i.submenu ? { submenu: describeMenu(i.submenu) } : {}),
  }));

export class Tray extends EventEmitter {
  constructor(image) {
    super();
    needReady('Tray');
    this.id = nextTray++;
    this.image = imagePath(image);
    this.destroyed = false;
    this.menu = null;
    this.title = '';
    this.tooltip = '';
    trays.push(this);
    record('tray-created', { tray: this.id, image: this.image, exists: this.image ? existsSync(this.image) : false });
  }
  setImage(image) {
    this.image = imagePath(image);
    record('tray-image', { tray: this.id, image: this.image, exists: this.image ? existsSync(this.image) : false });
  }
  setPressedImage() {}
  setToolTip(text) {
    if (text !== this.tooltip) record('tray-tooltip', { tray: this.id, text });
    this.tooltip = text;
  }
  setTitle(title) {
    if (title !== this.title) record('tray-title', { tray: this.id, title });
    this.title = title;
  }
  setContextMenu(menu) {
    this.menu = menu;
    const items = menu ? describeMenu(menu) : null;
    const text = JSON.stringify(items);
    if (text !== this.menuText) record('tray-menu', { tray: this.id, items });
    this.menuText = text;
  }
  getBounds() {
    return { x: 0, y: 0, width: 0, height: 0 };
  }
  displayBalloon(options) {
    record('tray-balloon', { tray: this.id, options });
  }
  popUpContextMenu() {}
  destroy() {
    this.destroyed = true;
    record('tray-destroyed', { tray: this.id });
  }
  isDestroyed() {
    return this.destroyed;
  }
}

/**
 * Methods Electron defines on some platforms only are absent elsewhere, as in Electron: calling one where it
 * does not exist is a TypeError there too.
 */
function onlyOn(target, name, platforms) {
  if (!platforms.includes(process.platform)) delete target[name];
}
onlyOn(Tray.prototype, 'setTitle', ['darwin']);
onlyOn(Tray.prototype, 'setPressedImage', ['darwin']);
onlyOn(Tray.prototype, 'getBounds', ['darwin', 'win32']);
onlyOn(Tray.prototype, 'popUpContextMenu', ['darwin', 'win32']);
onlyOn(Tray.prototype, 'displayBalloon', ['win32']);
onlyOn(App.prototype, 'setBadgeCount', ['darwin', 'linux']);
onlyOn(App.prototype, 'setAppUserModelId', ['win32']);
onlyOn(App.prototype, 'getLoginItemSettings', ['darwin', 'win32']);
onlyOn(App.prototype, 'setLoginItemSettings', ['darwin', 'win32']);

// ---- shortcuts, dialogs, notifications, screen, power -------------------------------------------------------

const shortcuts = new Map();
/** Accelerators "another app" holds: register() refuses them, as Electron does for a taken chord. */
const taken = new Set((process.env.STANDIN_TAKEN_SHORTCUTS ?? '').split(',').filter(Boolean));

export const globalShortcut = {
  register(accelerator, callback) {
    needReady('globalShortcut');
    if (taken.has(accelerator) || shortcuts.has(accelerator)) {
      record('shortcut-refused', { accelerator });
      return false;
    }
    shortcuts.set(accelerator, callback);
    record('shortcut-registered', { accelerator });
    return true;
  },
  unregister(accelerator) {
    if (shortcuts.delete(accelerator)) record('shortcut-unregistered', { accelerator });
  },
  unregisterAll() {
    shortcuts.clear();
    record('shortcut-unregistered', { accelerator: '*' });
  },
  isRegistered: (accelerator) => shortcuts.has(accelerator),
};

let nextDialog = 1;
const openDialogs = new Map();

export const dialog = {
  showMessageBox(windowOrOptions, maybeOptions) {
    const options = maybeOptions ?? windowOrOptions;
    const id = nextDialog++;
    record('dialog-shown', { dialog: id, options });
    return new Promise((resolve) => {
      openDialogs.set(id, (response) => {
        openDialogs.delete(id);
        resolve({ response, checkboxChecked: false });
      });
      options.signal?.addEventListener('abort', () => {
        if (!openDialogs.has(id)) return;
        record('dialog-aborted', { dialog: id });
        openDialogs.get(id)(options.cancelId ?? 0);
      });
    });
  },
  showMessageBoxSync() {
    throw new Error('the stand-in has no synchronous dialogs (they would block the main process)');
  },
  showErrorBox(title, content) {
    record('error-box', { title, content });
  },
};

let nextNotification = 1;
const notifications = new Map();

export class Notification extends EventEmitter {
  static isSupported() {
    return true;
  }
  constructor(options = {}) {
    super();
    this.id = nextNotification++;
    this.options = options;
    notifications.set(this.id, this);
  }
  show() {
    record('notification-shown', { notification: this.id, options: this.options });
  }
  close() {
    record('notification-closed', { notification: this.id });
    this.emit('close', preventable());
  }
}

const display = { id: 1, bounds: { x: 0, y: 0, width: 1920, height: 1080 }, workArea: { x: 0, y: 25, width: 1920, height: 1055 }, scaleFactor: 1 };
export const screen = {
  getPrimaryDisplay: () => display,
  getDisplayNearestPoint: () => display,
  getAllDisplays: () => [display],
};

class PowerMonitor extends EventEmitter {
  getSystemIdleState() {
    return process.env.STANDIN_IDLE_STATE ?? 'active';
  }
  getSystemIdleTime() {
    return 0;
  }
}
export const powerMonitor = new PowerMonitor();

/**
 * Touch ID, as on a Mac: `canPromptTouchID` and `promptTouchID` exist on macOS only (Electron defines them
 * nowhere else), so they are here only when STANDIN_TOUCH_ID says this "Mac" has a sensor (1) or not (0). A
 * prompt stays up until the test answers it (the person's finger, or Cancel).
 */
let nextPrompt = 1;
const touchPrompts = new Map();
export const systemPreferences = {};
if (process.env.STANDIN_TOUCH_ID !== undefined) {
  systemPreferences.canPromptTouchID = () => process.env.STANDIN_TOUCH_ID === '1';
  systemPreferences.promptTouchID = (reason) => {
    if (process.env.STANDIN_TOUCH_ID !== '1') return Promise.reject(new Error('Touch ID is not available'));
    const id = nextPrompt++;
    record('touch-id-prompt', { prompt: id, reason });
    return new Promise((resolve, reject) => {
      touchPrompts.set(id, (ok) => {
        touchPrompts.delete(id);
        if (ok) resolve();
        else reject(new Error('User cancelled the Touch ID prompt'));
      });
    });
  };
}

// ---- the test's commands ------------------------------------------------------------------------------------

const windowById = (id) => {
  const w = allWindows.get(id);
  if (!w) throw new Error(`no window ${id}`);
  return w;
};
const subscriptions = new Map();
let nextSubscription = 1;

/** The sender of a raw IPC message: a window's webContents, or one that belongs to no window of the app. */
const senderFor = (from) => (from === 'foreign' ? new WebContents(null) : windowById(from).webContents);

const commands = {
  snapshot: () => ({
    windows: [...allWindows.values()].map((w) => ({
      id: w.id,
      webContents: w.webContents.id,
      url: w.webContents.url,
      options: plain(w.options),
      visible: w.visible,
      focused: w.focused,
      shownInactive: w.shownInactive,
      alwaysOnTop: w.alwaysOnTop,
      bounds: w.bounds,
      destroyed: w.destroyed,
      exposed: w.world ? Object.keys(w.world) : [],
    })),
    trays: trays.map((t) => ({ id: t.id, image: t.image, title: t.title, tooltip: t.tooltip, destroyed: t.destroyed, menu: t.menu ? describeMenu(t.menu) : null })),
    shortcuts: [...shortcuts.keys()],
    ipcHandlers: [...ipcHandlers.keys()],
    ipcListeners: ipcMain.eventNames(),
    schemes: privileged,
    protocols: [...protocolHandlers.keys()],
    openDialogs: [...openDialogs.keys()],
    loginItem: app.loginItem,
    badge: app.badge,
    dockVisible: app.dockVisible,
  }),
  click: ({ item }) => {
    const tray = trays.find((t) => !t.destroyed && t.menu);
    const found = tray?.menu.getMenuItemById(item);
    if (!found) throw new Error(`no tray menu item ${item}`);
    if (!found.enabled) throw new Error(`tray menu item ${item} is disabled`);
    // Electron flips a checkbox before calling its click handler
    if (found.type === 'checkbox') found.checked = !found.checked;
    found.click?.(found, undefined, { triggeredByAccelerator: false });
    return true;
  },
  shortcut: ({ accelerator }) => {
    const callback = shortcuts.get(accelerator);
    if (!callback) throw new Error(`${accelerator} is not registered`);
    callback();
    return true;
  },
  /** What the page does: `window.airlock.<path>(...args)`; a rejection comes back as { rejected }. */
  page: async ({ window, path, args = [] }) => {
    const w = windowById(window);
    let target = w.world;
    for (const key of path.slice(0, -1)) target = target?.[key];
    const fn = target?.[path.at(-1)];
    if (typeof fn !== 'function') throw new Error(`window.${path.join('.')} is not a function in window ${window}`);
    try {
      return { value: await fn(...args) };
    } catch (err) {
      return { rejected: err instanceof Error ? { isError: true, message: err.message, code: err.code } : err };
    }
  },
  pageSubscribe: ({ window, since }) => {
    const id = nextSubscription++;
    const stop = windowById(window).world.airlock.subscribe(since, {
      event: (event) => record('page-event', { window, subscription: id, event }),
      state: (state) => record('page-stream-state', { window, subscription: id, state }),
    });
    subscriptions.set(id, stop);
    return id;
  },
  pageUnsubscribe: ({ subscription }) => {
    subscriptions.get(subscription)?.();
    subscriptions.delete(subscription);
    return true;
  },
  /** An IPC message straight to a handler, from any sender and frame: how a foreign or hijacked page would try. */
  invoke: async ({ from, channel, args = [], frameUrl, subframe = false }) => {
    const sender = senderFor(from);
    try {
      return { value: await invokeHandler(channel, ipcEvent(sender, frameUrl ?? (sender.url || 'airlock://app/index.html'), subframe), args) };
    } catch (err) {
      return { threw: err.message };
    }
  },
  send: ({ from, channel, args = [], frameUrl }) => {
    const sender = senderFor(from);
    ipcMain.emit(channel, ipcEvent(sender, frameUrl ?? (sender.url || 'airlock://app/index.html')), ...structuredClone(args));
    return true;
  },
  fetch: ({ url, method }) => fetchThroughProtocol(url, method),
  navigate: ({ window, url }) => {
    const e = preventable();
    windowById(window).webContents.emit('will-navigate', e, url);
    return { prevented: e.defaultPrevented };
  },
  windowOpen: ({ window, url }) => {
    const handler = windowById(window).webContents.windowOpenHandler;
    return handler ? plain(handler({ url, frameName: '', features: '', disposition: 'new-window', referrer: { url: '', policy: 'default' } })) : { action: 'allow' };
  },
  permission: ({ window, permission }) =>
    new Promise((resolve) => {
      const handler = defaultSession.permissionRequestHandler;
      if (!handler) return resolve({ granted: true, handler: false });
      handler(windowById(window).webContents, permission, (granted) => resolve({ granted, handler: true }), {});
    }),
  permissionCheck: ({ window, permission }) => {
    const handler = defaultSession.permissionCheckHandler;
    return { granted: handler ? handler(windowById(window).webContents, permission, 'airlock://app', {}) : true };
  },
  /**
   * Input the OS delivers to a window (what Chromium reports as `input-event`): a click (mouseDown, mouseUp) or a
   * key. A click on a window gives it focus, as window managers do.
   */
  input: ({ window, type, keyCode }) => {
    const w = windowById(window);
    if (w.destroyed) throw new Error(`window ${window} is closed`);
    if (type === 'mouseDown' && !w.focused) {
      w.focused = true;
      w.emit('focus');
    }
    record('input', { window, type, ...(keyCode ? { keyCode } : {}) });
    w.webContents.emit('input-event', preventable(), { type, modifiers: [], ...(keyCode ? { keyCode } : {}) });
    return true;
  },
  /** The OS's power events: lock-screen, unlock-screen, suspend, resume, shutdown. */
  power: ({ event }) => {
    record('power', { event });
    powerMonitor.emit(event, preventable());
    return true;
  },
  answerTouchID: ({ prompt, ok }) => {
    const answer = touchPrompts.get(prompt);
    if (!answer) throw new Error(`no Touch ID prompt ${prompt}`);
    answer(Boolean(ok));
    return true;
  },
  answerDialog: ({ dialog: id, response }) => {
    const answer = openDialogs.get(id);
    if (!answer) throw new Error(`no open dialog ${id}`);
    answer(response);
    return true;
  },
  notification: ({ notification, event, index = 0 }) => {
    const n = notifications.get(notification);
    if (!n) throw new Error(`no notification ${notification}`);
    if (event === 'action') n.emit('action', { actionIndex: index, selectionIndex: -1 }, index, -1);
    else n.emit(event, preventable());
    return true;
  },
  closeWindow: ({ window }) => {
    windowById(window).close();
    return true;
  },
  quit: () => {
    app.quit();
    return true;
  },
};

if (process.send) {
  process.on('message', (msg) => {
    if (!msg || msg.kind !== 'command') return;
    void (async () => {
      let reply;
      try {
        const command = commands[msg.op];
        if (!command) throw new Error(`unknown command ${msg.op}`);
        reply = { kind: 'reply', id: msg.id, ok: true, value: plain(await command(msg.args ?? {})) ?? null };
      } catch (err) {
        reply = { kind: 'reply', id: msg.id, ok: false, error: err instanceof Error ? err.message : String(err) };
      }
      process.send(reply);
    })();
  });
}

export default {
  app,
  BrowserWindow,
  dialog,
  globalShortcut,
  ipcMain,
  Menu,
  nativeImage,
  Notification,
  powerMonitor,
  protocol,
  screen,
  session,
  systemPreferences,
  Tray,
};
