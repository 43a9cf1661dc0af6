/** `airlock daemon`: the broker in the foreground, until SIGINT/SIGTERM; with --ui, also the browser UI's host. */
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { DatabaseRefused } from '../../broker/db/database.js';
import { DatabaseFileError } from '../../broker/db/files.js';
import { AlreadyRunning } from '../../broker/server.js';
import { startBroker } from '../../daemon/start.js';
import { LauncherError, type Launcher } from '../../clients/launcher.js';
import { DEFAULT_UI_PORT, UiHostError } from '../../http/ui-host.js';
import { dataDir } from '../../ipc/paths.js';
import { installedService, ServiceMarkerError } from '../../ipc/system.js';
import { SystemModeError } from '../../daemon/system-mode.js';
import { NotOwnFolderError } from '../../util/own-folder.js';
import { groupId } from '../../service/accounts.js';
import { SERVICE_DEFAULTS } from '../../service/layout.js';
import { parse } from '../args.js';
import { CliError, UsageError } from '../errors.js';
import { rendererDist } from '../install-paths.js';
import { cliLauncher } from '../launcher.js';

/** What auto-protect (and a front end's protect) writes into client configs. A bad AIRLOCK_LAUNCHER only costs those, never the broker. */
function launcherForAutoProtect(): Launcher | undefined {
  try {
    return cliLauncher();
  } catch (err) {
    if (!(err instanceof LauncherError)) throw err;
    process.stderr.write(`airlock: warning: ${err.message}; auto-protect will not wrap servers\n`);
    return undefined;
  }
}

/**
 * The key the app that starts this broker hands it on a pipe (never a file, an argument or the environment: a
 * process of the same user can read those). Its Touch ID and click proofs are MACs under it.
 */
function readAppKey(fdText: string): Buffer {
  if (!/^\d{1,4}$/.test(fdText) || Number(fdText) < 3) throw new UsageError('--app-key-fd takes the number of a pipe the app opened (3 or more)');
  let text: string;
  try {
    text = readFileSync(Number(fdText), 'utf8').trim();
  } catch (err) {
    throw new CliError(`cannot read the app's key from fd ${fdText}: ${(err as Error).message}`);
  }
  if (!/^[0-9a-f]{64}$/.test(text)) throw new CliError(`fd ${fdText} did not hold the app's key (64 hex digits)`);
  return Buffer.from(text, 'hex');
}

type DaemonValues = { system?: boolean; home?: string; 'run-dir'?: string; 'users-group'?: string };

/**
 * --system: the service's folders and group. Without it, a person's broker, refused when the service is
 * installed: no client would use it (ipc/system.ts sends them all to the service), so starting one is a mistake.
 */
function systemMode(values: DaemonValues): { dir: string; mode: { runDir: string; gid: number } } | undefined {
  if (!values.system) {
    if (values.home !== undefined || values['run-dir'] !== undefined || values['users-group'] !== undefined) throw new UsageError('--home, --run-dir and --users-group go with --system (AIRLOCK_HOME sets a person\'s data dir)');
    let marker;
    try {
      marker = installedService();
    } catch (err) {
      if (err instanceof ServiceMarkerError) throw new CliError(err.message);
      throw err;
    }
    if (marker) throw new CliError(`the Airlock service is installed: its broker runs as the user ${marker.user} (data in ${marker.dataDir}); see \`airlock service status\``);
    return undefined;
  }
  for (const key of ['home', 'run-dir'] as const) {
    const v = values[key];
    if (v !== undefined && (v === '' || !isAbsolute(v))) throw new UsageError(`--${key} must be an absolute path (got "${v}")`);
  }
  const group = values['users-group'] ?? SERVICE_DEFAULTS.usersGroup;
  let gid: number | null;
  try {
    gid = groupId(group);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (gid === null) throw new CliError(`there is no group "${group}" for the people who may use the broker (\`airlock service install\` makes it)`);
  return { dir: values.home ?? SERVICE_DEFAULTS.dataDir, mode: { runDir: values['run-dir'] ?? SERVICE_DEFAULTS.runDir, gid } };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(
    argv.slice(1),
    {
      'ticket-timeout': { type: 'string' },
      'restore-backup': { type: 'boolean' },
      'fresh-database': { type: 'boolean' },
      ui: { type: 'boolean' },
      port: { type: 'string' },
      'no-presence': { type: 'boolean' },
      'app-key-fd': { type: 'string' },
      system: { type: 'boolean' },
      home: { type: 'string' },
      'run-dir': { type: 'string' },
      'users-group': { type: 'string' },
      'managed-policy': { type: 'string' },
    },
    false,
  );
  const system = systemMode(values);
  // given: saved as the ticket-timeout setting (5..86400); a shorter one (tests) holds for this run only
  const timeout = values['ticket-timeout'] === undefined ? undefined : Number(values['ticket-timeout']);
  if (timeout !== undefined && (!Number.isFinite(timeout) || timeout <= 0 || timeout > 86_400)) throw new UsageError('--ticket-timeout takes seconds between 1 and 86400');
  if (values['restore-backup'] && values['fresh-database']) throw new UsageError('--restore-backup and --fresh-database exclude each other');
  const database = values['restore-backup'] ? 'restore-backup' : values['fresh-database'] ? 'fresh' : 'check';
  if (values.port !== undefined && !values.ui) throw new UsageError('--port goes with --ui');
  const port = values.port === undefined ? DEFAULT_UI_PORT : Number(values.port);
  if (!/^\d{1,5}$/.test(values.port ?? '0') || port > 65_535) throw new UsageError('--port takes a port number from 0 (any free port) to 65535');
  // the built renderer, at the repo root: the library is told, never guesses
  const ui = values.ui ? { port, staticDir: rendererDist() } : undefined;
  const dir = system?.dir ?? dataDir();
  const presence = { required: values['no-presence'] !== true, ...(values['app-key-fd'] !== undefined ? { appKey: readAppKey(values['app-key-fd']) } : {}) };
  if (!presence.required) process.stderr.write('airlock: warning: presence proofs are off (--no-presence): any process of yours can approve calls and loosen rules\n');
  let running;
  try {
    running = await startBroker({
      dir,
      ...(timeout !== undefined ? { ticketTimeoutSeconds: timeout } : {}),
      database,
      // the system broker's HOME is not a person's: the config files it would watch and write are people's, and
      // theirs to protect with their own CLI
      ...(system ? { system: system.mode, watchConfigs: false } : { launcher: launcherForAutoProtect() }),
      ...(ui ? { ui } : {}),
      presence,
      // read only while the system's team policy file does not exist, and only when root owns it (broker/managed/)
      ...(values['managed-policy'] !== undefined ? { managed: { path: values['managed-policy'] } } : {}),
    });
  } catch (err) {
    if (err instanceof AlreadyRunning || err instanceof DatabaseRefused || err instanceof DatabaseFileError || err instanceof UiHostError || err instanceof SystemModeError || err instanceof NotOwnFolderError) throw new CliError(err.message);
    if ((err as NodeJS.ErrnoException).code === 'EACCES' || (err as NodeJS.ErrnoException).code === 'EPERM') throw new CliError(`cannot set up the broker's files: ${(err as Error).message}`);
    throw err;
  }
  const r = running.recovered;
  if (r?.action === 'restored') {
    process.stderr.write(`airlock: restored the database from the backup of ${r.backupFrom}${r.keptAs ? `; the previous file is kept as ${r.keptAs}` : ''}\n`);
  } else if (r?.action === 'fresh') {
    const kept = [r.keptAs && `the previous database is kept as ${r.keptAs}`, r.previousBackupKeptAs && `its last backup as ${r.previousBackupKeptAs}`].filter(Boolean);
    process.stderr.write(`airlock: started with an empty database${kept.length ? `; ${kept.join(', ')}` : ''}\n`);
  }
  // one write: whoever waits for "broker running" (the app, scripts) finds the UI's URL with it. The link is
  // single-use and short-lived, so one that stays in a terminal's scrollback or a log opens nothing later
  const uiLine = running.ui ? `airlock: UI at ${running.ui.url}\nairlock: the link signs in one browser, once, within 2 minutes; \`airlock ui\` prints a fresh one\n` : '';
  process.stderr.write(`airlock: broker running (pid ${process.pid}), data in ${dir}, socket ${running.socketPath}\n${uiLine}`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await running.stop();
  process.stderr.write('airlock: broker stopped\n');
  return 0;
}
