/**
 * The desktop app as a test drives it: its real built main entry (electron/dist/main.js) in a child Node
 * process, with `electron` resolved to the recording stand-in. Everything the app does to "Electron" arrives
 * here as a record; the test waits on records (never on time) and acts through the stand-in's commands, as a
 * person would: click the tray, press the shortcut, answer a dialog, use a page's `window.airlock`, quit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliJson, onCleanup, processAlive, ROOT, tempDir, waitFor } from '../helpers/airlock.js';

export const MAIN = join(ROOT, 'electron', 'dist', 'main.js');
const LOADER = join(ROOT, 'test', 'app', 'load-with-stand-in.mjs');

export interface Rec {
  seq: number;
  type: string;
  [key: string]: unknown;
}

export interface MenuItem {
  id: string | null;
  label: string | null;
  type: string;
  checked: boolean;
  enabled: boolean;
  accelerator: string | null;
}

export interface WindowInfo {
  id: number;
  webContents: number;
  url: string;
  options: { webPreferences?: Record<string, unknown> } & Record<string, unknown>;
  visible: boolean;
  focused: boolean;
  shownInactive: boolean;
  alwaysOnTop: boolean;
  bounds: { x: number; y: number; width: number; height: number };
  destroyed: boolean;
  exposed: string[];
}

export interface Snapshot {
  windows: WindowInfo[];
  trays: { id: number; image: string; title: string; tooltip: string; destroyed: boolean; menu: MenuItem[] | null }[];
  shortcuts: string[];
  ipcHandlers: string[];
  ipcListeners: string[];
  schemes: { scheme: string; privileges: Record<string, boolean> }[];
  protocols: string[];
  openDialogs: number[];
  loginItem: boolean;
  badge: number;
}

export interface AppOptions {
  /** AIRLOCK_HOME */
  home: string;
  /** The stand-in's folder (its app paths and single-instance lock): share it to launch "the same app" twice. */
  standinDir?: string;
  env?: NodeJS.ProcessEnv;
}

export interface App {
  proc: ChildProcess;
  standinDir: string;
  records: Rec[];
  /** The first record (from the start) that matches; waits for it. */
  until(match: (r: Rec) => boolean, what: string, timeoutMs?: number): Promise<Rec>;
  /** The first matching record after `after` (a seq). */
  next(after: number, match: (r: Rec) => boolean, what: string, timeoutMs?: number): Promise<Rec>;
  command<T = unknown>(op: string, args?: Record<string, unknown>): Promise<T>;
  snapshot(): Promise<Snapshot>;
  /** The newest seq seen. */
  last(): number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  log(name: 'main' | 'broker'): string;
}

export function launchApp(o: AppOptions): App {
  const standinDir = o.standinDir ?? tempDir('al-app-');
  const proc = spawn(process.execPath, ['--import', LOADER, MAIN], {
    cwd: ROOT,
    env: { ...process.env, AIRLOCK_HOME: o.home, STANDIN_DIR: standinDir, AIRLOCK_TRAY: 'on', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const records: Rec[] = [];
  const waiters = new Set<() => void>();
  const replies = new Map<number, (m: { ok: boolean; value?: unknown; error?: string }) => void>();
  let output = '';
  let nextId = 1;
  proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  proc.on('message', (m: { kind: string; record?: Rec; id?: number; ok?: boolean; value?: unknown; error?: string }) => {
    if (m.kind === 'record' && m.record) {
      records.push(m.record);
      for (const w of [...waiters]) w();
    } else if (m.kind === 'reply' && m.id !== undefined) {
      replies.get(m.id)?.({ ok: m.ok ?? false, value: m.value, error: m.error });
      replies.delete(m.id);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      for (const w of [...waiters]) w();
      for (const r of replies.values()) r({ ok: false, error: `the app exited (${code ?? signal})` });
      resolve({ code, signal });
    });
  });

  const next = (after: number, match: (r: Rec) => boolean, what: string, timeoutMs = 10_000) =>
    new Promise<Rec>((resolve, reject) => {
      const look = () => {
        const found = records.find((r) => r.seq > after && match(r));
        if (found) return done(null, found);
        if (proc.exitCode !== null || proc.signalCode !== null) done(new Error(`the app exited while waiting for ${what}\n${output}`));
      };
      const recent = () => records.slice(-12).map((r) => JSON.stringify(r).slice(0, 160)).join('\n');
      const timer = setTimeout(() => done(new Error(`timed out waiting for ${what}; the app's last records:\n${recent()}\n${output}`)), timeoutMs);
      const done = (err: Error | null, r?: Rec) => {
        clearTimeout(timer);
        waiters.delete(look);
        if (err) reject(err);
        else resolve(r!);
      };
      waiters.add(look);
      look();
    });

  const command = <T>(op: string, args: Record<string, unknown> = {}) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      replies.set(id, (m) => (m.ok ? resolve(m.value as T) : reject(new Error(`${op}: ${m.error}`))));
      proc.send({ kind: 'command', id, op, args });
    });

  const app: App = {
    proc,
    standinDir,
    records,
    until: (match, what, timeoutMs) => next(0, match, what, timeoutMs),
    next,
    command,
    snapshot: () => command<Snapshot>('snapshot'),
    last: () => records.at(-1)?.seq ?? 0,
    exited,
    output: () => output,
    log: (name) => {
      const file = join(standinDir, 'paths', 'logs', `${name}.log`);
      return existsSync(file) ? readFileSync(file, 'utf8') : '';
    },
  };
  onCleanup(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
    // a broker the app started outlives a killed app (as it would a crashed one): stop it too
    let pid: number | null = null;
    try {
      pid = (await cliJson<{ pid: number }>(o.home, ['status'])).pid;
    } catch {
      // no broker left
    }
    if (pid === null || pid === process.pid || !processAlive(pid)) return;
    process.kill(pid, 'SIGTERM');
    // not a child of ours, so no exit event: its data folder goes next, and a broker still stopping (its last
    // database backup) would write into it while it is removed
    await waitFor(() => !processAlive(pid), 10_000, `the broker (pid ${pid}) to stop`);
  });
  return app;
}

/**
 * What a person does in the app's main window (opened from the tray when it is not open): a click in it, then the
 * page's call. A call that loosens counts only with such a click (electron/src/input-witness.ts).
 */
export async function personCall<T = unknown>(app: App, method: string, params: object): Promise<{ value?: T; rejected?: { code?: string; message: string } }> {
  let main = (await app.snapshot()).windows.find((w) => !w.destroyed && !w.url.includes('#/ticket/') && w.exposed.includes('airlock'));
  if (!main) {
    const mark = app.last();
    await app.command('click', { item: 'open' });
    const created = await app.next(mark, (r) => r.type === 'window-created', 'the main window');
    await app.next(mark, (r) => r.type === 'bridge-exposed' && r.window === created.window, 'its page');
    main = (await app.snapshot()).windows.find((w) => w.id === created.window)!;
  }
  await click(app, main.id);
  return app.command('page', { window: main.id, path: ['airlock', 'call'], args: [method, params] });
}

/** A click on a window, as the OS delivers it (the main process sees it as `input-event`). */
export async function click(app: App, window: number): Promise<void> {
  await app.command('input', { window, type: 'mouseDown' });
  await app.command('input', { window, type: 'mouseUp' });
}

/** The tray's menu item with this id, from a snapshot. */
export function menuItem(s: Snapshot, id: string): MenuItem | undefined {
  return s.trays.find((t) => !t.destroyed)?.menu?.find((i) => i.id === id);
}
