/**
 * Protect or unprotect servers of one client: pick the entries, edit each file in place (see edit.ts), back it
 * up once, write it atomically unless someone changed it meanwhile, and read it back to check the result.
 */
import { resolve } from 'node:path';
import { dataDir as defaultDataDir, type Env } from '../ipc/paths.js';
import { backupPath, loadRemoteOriginals, saveFirstBackup, saveRemoteOriginals, type RemoteOriginal } from './backup.js';
import { changeRemote } from './remote-edit.js';
import { ConcurrentEditError, writeFileAtomic } from './atomic-write.js';
import { updateKept } from './kept-unprotected.js';
import { CLIENTS, pathFor } from './known-clients.js';
import { encodeConfig, readConfigFile } from './config-file.js';
import { allLocations, discoverClient, readLocation } from './discover.js';
import { protectAllText, protectText, unprotectText } from './edit.js';
import { describeServers } from './entries.js';
import { sameData } from './docpath.js';
import { recognition, type Recognition } from './own-launcher.js';
import { syntaxFor } from './formats/index.js';
import type { Launcher } from './launcher.js';
import { isClientRunning, type ProcessLister } from './running.js';
import type { ClientId, ConfigLocation, DiscoverOptions, Scope, ServerEntry } from './types.js';

/** A refusal meant for the user: one line, nothing was changed in the file it names. */
export class ClientConfigError extends Error {
  override name = 'ClientConfigError';
}

export type Action = 'protect' | 'unprotect';

export interface ChangeRequest extends DiscoverOptions {
  client: ClientId;
  /** Server names, or every server of the client. */
  servers: string[] | 'all';
  /** Only touch this scope's files. */
  scope?: Scope;
  /** Where backups go; default the Airlock data dir. */
  dataDir?: string;
  processLister?: ProcessLister;
  /** Called with warnings (running client app) as they come. */
  warn?: (message: string) => void;
  /**
   * Called right before a file is replaced and right after: the seams where another program may write the same
   * file. Tests use them to play that program.
   */
  hooks?: { beforeWrite?: (path: string) => Promise<void>; afterWrite?: (path: string) => Promise<void> };
}

export interface ProtectRequest extends ChangeRequest {
  /**
   * What the wrapped entries start: given by whoever composes the program (the CLI, the desktop app), never
   * guessed here. Unprotecting needs none: the original command is kept in the entry itself.
   */
  launcher: Launcher;
}

export interface ChangeOutcome {
  server: string;
  scope: Scope;
  path: string;
  result: 'protected' | 'unprotected' | 'unchanged' | 'skipped';
  reason?: string;
}

export interface ChangeReport {
  outcomes: ChangeOutcome[];
  /** Backups made by this run. */
  backups: string[];
}

/** Clients known to rewrite their own config file while running. */
const SELF_WRITING: ClientId[] = ['claude-desktop', 'claude-code'];
const MAX_ATTEMPTS = 3;

/**
 * What MCP SDKs pass a server when the client gives no env of its own (the Python SDK's and the TypeScript SDK's
 * defaults): a wrapper started that way sees none of the user's other variables, AIRLOCK_HOME included.
 */
const SCRUBBED_ENV: Record<'posix' | 'win32', string[]> = {
  posix: ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'],
  win32: ['APPDATA', 'HOMEDRIVE', 'HOMEPATH', 'LOCALAPPDATA', 'PATH', 'PROCESSOR_ARCHITECTURE', 'SYSTEMDRIVE', 'SYSTEMROOT', 'TEMP', 'USERNAME', 'USERPROFILE'],
};

/**
 * The data dir to write into wrapped entries as `--home`, or undefined when a wrapper would find it by itself:
 * it is the default one both for this environment without AIRLOCK_HOME and for the scrubbed environment some
 * clients start servers with (which also drops XDG_DATA_HOME).
 */
export function wrapperHome(opts: { env?: Env; platform?: NodeJS.Platform; dataDir?: string }): string | undefined {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  const dir = opts.dataDir ?? defaultDataDir(env, platform);
  const abs = pathFor(platform).isAbsolute(dir) ? dir : resolve(dir);
  const keep = SCRUBBED_ENV[platform === 'win32' ? 'win32' : 'posix'];
  const scrubbed: Env = Object.fromEntries(keep.filter((k) => env[k] !== undefined).map((k) => [k, env[k]]));
  const found = [defaultDataDir({ ...env, AIRLOCK_HOME: undefined }, platform), defaultDataDir(scrubbed, platform)];
  return found.every((d) => d === abs) ? undefined : abs;
}

/** True when the entry was written with exactly this launcher. */
function writtenBy(e: ServerEntry, launcher: Launcher): boolean {
  const w = e.written;
  if (!w) return false;
  const words = [w.command, ...w.args.slice(0, w.args.indexOf('wrap'))];
  const current = [launcher.command, ...launcher.argsPrefix];
  return words.length === current.length && words.every((x, i) => x === current[i]);
}

/** What a run writes into each entry it changes: a wrap with this launcher and --home, or the original back. */
type Edit = { action: 'protect'; launcher: Launcher; home: string | undefined } | { action: 'unprotect' };

/** An entry in the form protect writes, whose original protect or unprotect may put back from the entry alone. */
function restorable(e: ServerEntry): boolean {
  return e.protected || e.otherHome !== undefined || e.lookAlikeStale === true;
}

function wants(edit: Edit, e: ServerEntry): boolean {
  if (edit.action === 'unprotect') return restorable(e);
  if (!e.protected) return true;
  // A protected entry whose launcher is gone would fail to start, and one naming another data dir would look
  // for another broker: protecting it again rewrites the launcher and --home.
  return (e.staleLauncher !== undefined && !writtenBy(e, edit.launcher)) || e.wrappedAs?.home !== edit.home;
}

/** Choose the entries to change; throws ClientConfigError for a name that is missing or cannot be changed. */
function select(edit: Edit, req: ChangeRequest, entries: ServerEntry[], broken: string[]): { todo: ServerEntry[]; outcomes: ChangeOutcome[] } {
  const { action } = edit;
  const outcomes: ChangeOutcome[] = [];
  const todo: ServerEntry[] = [];
  const note = (e: ServerEntry, result: ChangeOutcome['result'], reason?: string) =>
    outcomes.push({ server: e.name, scope: e.location.scope, path: e.location.path, result, reason });
  const consider = (e: ServerEntry) => {
    // an entry wrapped by hand is left alone both ways (see wrappedByHand)
    if (e.unprotectable && (action === 'protect' || restorable(e))) note(e, 'skipped', e.unprotectable);
    else if (!wants(edit, e)) note(e, 'unchanged', action === 'protect' ? 'already protected' : 'not protected');
    else todo.push(e);
  };
  if (req.servers === 'all') {
    entries.forEach(consider);
    return { todo, outcomes };
  }
  const label = CLIENTS[req.client].label;
  const byName = new Map<string, ServerEntry[]>();
  for (const e of entries) byName.set(e.name, [...(byName.get(e.name) ?? []), e]);
  for (const name of req.servers) {
    const matches = byName.get(name) ?? [];
    if (matches.length === 0) {
      const known = [...new Set(entries.map((e) => e.name))];
      const hint = broken.length ? `; also ${broken.join('; ')}` : '';
      throw new ClientConfigError(
        `no server "${name}" in ${label}'s config (${known.length ? `servers: ${known.join(', ')}` : 'it has none'})${hint}`,
      );
    }
    if (action === 'protect' && matches.every((e) => e.unprotectable && !e.protected)) {
      throw new ClientConfigError(`cannot protect "${name}": ${matches[0]!.unprotectable}`);
    }
    matches.forEach(consider);
  }
  return { todo, outcomes };
}

/** The entries named `names` at `location` in freshly parsed text. */
function entriesIn(location: ConfigLocation, text: string, names: string[], r: Recognition): ServerEntry[] {
  const doc = syntaxFor(location.format).parse(text);
  const all = new Map(describeServers(location, doc, r).map((x) => [x.name, x]));
  return names.map((n) => {
    const e = all.get(n);
    if (!e) throw new ClientConfigError(`server "${n}" disappeared from ${location.path} while Airlock was editing it`);
    return e;
  });
}

interface FileJob {
  path: string;
  format: ConfigLocation['format'];
  targets: { location: ConfigLocation; names: string[] }[];
}

function groupByFile(todo: ServerEntry[]): FileJob[] {
  const jobs = new Map<string, FileJob>();
  for (const e of todo) {
    const job = jobs.get(e.location.path) ?? { path: e.location.path, format: e.location.format, targets: [] };
    jobs.set(e.location.path, job);
    let target = job.targets.find((t) => t.location.scope === e.location.scope && t.location.serversPath.join('\0') === e.location.serversPath.join('\0'));
    if (!target) job.targets.push((target = { location: e.location, names: [] }));
    target.names.push(e.name);
  }
  return [...jobs.values()];
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Edit one file for every target in it, retrying when another program writes it in between. */
async function changeFile(edit: Edit, job: FileJob, req: ChangeRequest, backups: string[], r: Recognition): Promise<void> {
  const syntax = syntaxFor(job.format);
  const dir = req.dataDir ?? defaultDataDir(req.env ?? process.env, req.platform ?? process.platform);
  for (let attempt = 1; ; attempt++) {
    const file = await readConfigFile(job.path);
    if (!file) throw new ClientConfigError(`${job.path} disappeared while Airlock was editing it`);
    let text = file.text;
    const kept = await loadRemoteOriginals(dir, file.realPath).catch((err: unknown) => {
      throw new ClientConfigError(`cannot read the kept remote entries of ${job.path}: ${describeError(err)} (file left untouched)`);
    });
    const originals: Record<string, RemoteOriginal> = { ...kept };
    const remoteJob = { syntax, client: req.client, originals, r, ...(edit.action === 'protect' ? { protect: { launcher: edit.launcher, home: edit.home } } : {}) };
    try {
      for (const target of job.targets) {
        const fresh: Parameters<typeof protectAllText>[2] = [];
        for (const e of entriesIn(target.location, text, target.names, r)) {
          // a remote server, or one protect rewrote from one: the whole entry changes shape
          if (e.remoteWrapped || ((e.transport === 'http' || e.transport === 'sse') && !e.protected && !e.unprotectable)) {
            text = changeRemote(remoteJob, text, e);
            continue;
          }
          const t = { syntax, entryPath: e.path, shape: e.shape };
          // a look-alike whose launcher runs: wrapped whole, so what it starts now starts behind Airlock
          const whole = e.lookAlike !== undefined && !e.lookAlikeStale;
          const wrap = edit.action === 'protect' ? { entryPath: e.path, shape: e.shape, launcher: edit.launcher, name: e.name, client: req.client, home: edit.home, whole } : null;
          if (!restorable(e)) {
            if (wrap) fresh.push(wrap);
            continue;
          }
          text = unprotectText(text, t);
          if (wrap) text = protectText(text, { ...wrap, syntax });
        }
        // the entries that only need wrapping: all in one pass over the text
        text = protectAllText(text, syntax, fresh);
      }
    } catch (err) {
      if (err instanceof ClientConfigError) throw err;
      throw new ClientConfigError(`${job.path}: ${describeError(err)} (file left untouched)`);
    }
    if (text === file.text) return;
    const remoteChanged = !sameData(kept, originals);
    try {
      const saved = await saveFirstBackup(dir, file.realPath, file.bytes);
      if (saved.created) backups.push(saved.path);
      // originals are added before the file changes and dropped only after, so a failed write loses none
      if (remoteChanged) await saveRemoteOriginals(dir, file.realPath, { ...kept, ...originals });
    } catch (err) {
      throw new ClientConfigError(`cannot back up ${job.path} to ${backupPath(dir, file.realPath)}: ${describeError(err)} (file left untouched)`);
    }
    try {
      await req.hooks?.beforeWrite?.(job.path);
      await writeFileAtomic(file.realPath, encodeConfig(file, text), { mode: file.mode, owner: { uid: file.uid, gid: file.gid }, expect: file.bytes });
      await req.hooks?.afterWrite?.(job.path);
      if (remoteChanged) {
        await saveRemoteOriginals(dir, file.realPath, originals).catch((err: unknown) =>
          req.warn?.(`could not forget the kept remote entries of ${job.path}: ${describeError(err)}`),
        );
      }
      return;
    } catch (err) {
      if (err instanceof ConcurrentEditError && attempt < MAX_ATTEMPTS) continue;
      if (err instanceof ConcurrentEditError) {
        throw new ClientConfigError(`${job.path} kept changing while Airlock was editing it; nothing was written, try again`);
      }
      throw new ClientConfigError(`cannot write ${job.path}: ${describeError(err)}`);
    }
  }
}

/** Re-read the file and check every target now is what we wrote; clients that rewrite their config can undo it. */
async function verify(action: Action, job: FileJob, label: string, r: Recognition): Promise<void> {
  for (const target of job.targets) {
    const report = await readLocation({ ...target.location, serversPath: target.location.serversPath }, r);
    const byName = new Map(report.servers.map((s) => [s.name, s]));
    const bad = target.names.filter((n) => {
      const e = byName.get(n);
      return !e || (action === 'protect' ? !e.protected : restorable(e));
    });
    if (report.error || bad.length) {
      throw new ClientConfigError(
        `${job.path} no longer holds what Airlock wrote (${report.error ?? bad.join(', ')}); was ${label} rewriting it? Quit it and run this again`,
      );
    }
  }
}

/** Protect or unprotect the chosen servers of one client. */
export function changeServers(action: 'protect', req: ProtectRequest): Promise<ChangeReport>;
export function changeServers(action: 'unprotect', req: ChangeRequest): Promise<ChangeReport>;
export async function changeServers(action: Action, req: ChangeRequest | ProtectRequest): Promise<ChangeReport> {
  const launcher = 'launcher' in req && req.launcher ? req.launcher : undefined;
  // typed away, but a JavaScript caller (or a cast) could still leave it out: refuse rather than guess one
  if (action === 'protect' && !launcher) throw new ClientConfigError('protect needs a launcher: the command client configs should start Airlock with');
  const edit: Edit = action === 'protect' && launcher ? { action, launcher, home: wrapperHome(req) } : { action: 'unprotect' };
  const r = recognition(req, launcher);
  const report = await discoverClient(req.client, { ...req, launchers: r.given });
  const locations = report.locations.filter((l) => !req.scope || l.location.scope === req.scope);
  const label = CLIENTS[req.client].label;
  if (!report.found) {
    const looked = (await allLocations(req.client, req)).map((l) => l.path);
    throw new ClientConfigError(`no ${label} config found (looked for ${[...new Set(looked)].join(', ')})`);
  }
  const broken = locations.filter((l) => l.error).map((l) => `${l.location.path} cannot be read: ${l.error}`);
  if (req.servers === 'all' && broken.length) throw new ClientConfigError(`${broken[0]} (nothing was changed)`);
  const entries = locations.flatMap((l) => l.servers);
  const { todo, outcomes } = select(edit, req, entries, broken);
  if (todo.length === 0) return { outcomes, backups: [] };

  if (SELF_WRITING.includes(req.client) && (await isClientRunning(req.client, req.platform, req.processLister))) {
    req.warn?.(`${label} is running and rewrites its own config: Airlock checks the file after writing; restart ${label} to pick up the change`);
  }
  // an unprotect is the person's choice, which auto-protect keeps; a protect takes it back. The choice to keep
  // is recorded before the file is written: a watcher that reads the file in between would take the unwrapped
  // entry for a change to undo, and wrap it again
  const choiceOf = (e: ServerEntry) => ({ client: req.client, path: e.location.path, server: e.name });
  const dir = req.dataDir ?? defaultDataDir(req.env ?? process.env, req.platform ?? process.platform);
  const record = (keep: ServerEntry[], forget: ServerEntry[]) =>
    updateKept(dir, keep.map(choiceOf), forget.map(choiceOf)).catch((err: unknown) =>
      req.warn?.(`could not record the choice for auto-protect in ${dir}: ${describeError(err)}`),
    );
  if (action === 'unprotect') await record(todo, []);
  const backups: string[] = [];
  const jobs = groupByFile(todo);
  let changed = 0;
  try {
    for (const job of jobs) {
      await changeFile(edit, job, req, backups, r);
      await verify(action, job, label, r);
      changed++;
    }
  } catch (err) {
    // the files not unprotected keep their entries protected: no choice stands for them
    if (action === 'unprotect') {
      const unchanged = new Set(jobs.slice(changed).map((j) => j.path));
      await record([], todo.filter((e) => unchanged.has(e.location.path)));
    }
    throw err;
  }
  const done: ChangeOutcome['result'] = action === 'protect' ? 'protected' : 'unprotected';
  for (const e of todo) outcomes.push({ server: e.name, scope: e.location.scope, path: e.location.path, result: done });
  if (action === 'protect') await record([], todo);
  // Report in file order, as `airlock clients` lists them.
  const at = new Map(entries.map((e, i) => [`${e.name}\0${e.location.path}\0${e.location.scope}`, i]));
  const rank = (o: ChangeOutcome) => at.get(`${o.server}\0${o.path}\0${o.scope}`) ?? -1;
  outcomes.sort((a, b) => rank(a) - rank(b));
  return { outcomes, backups };
}

/** Wrap the chosen servers so the client starts them through `req.launcher` `wrap … -- <original command>`. */
export function protectServers(req: ProtectRequest): Promise<ChangeReport> {
  return changeServers('protect', req);
}

/** Restore the chosen servers' original commands. */
export function unprotectServers(req: ChangeRequest): Promise<ChangeReport> {
  return changeServers('unprotect', req);
}
