/**
 * Where the Airlock service lives on each system, and under which names. Paths here are the target system's;
 * a staged root (`--root`, for tests and packaging) only changes where the files are written (execute.ts).
 */
import { join } from 'node:path';
import { SYSTEM_PLACES } from '../ipc/paths.js';
import { MARKER_PATH } from '../ipc/system.js';

export const SERVICE_DEFAULTS = {
  user: SYSTEM_PLACES.user,
  usersGroup: SYSTEM_PLACES.usersGroup,
  dataDir: SYSTEM_PLACES.dataDir,
  runDir: SYSTEM_PLACES.runDir,
} as const;

export interface ServiceLayout {
  platform: 'linux' | 'darwin';
  /** The service's own user, and its primary group of the same name. */
  user: string;
  /** Whose members may use the broker. */
  usersGroup: string;
  dataDir: string;
  runDir: string;
  markerPath: string;
  /** The systemd unit, or the LaunchDaemon plist. */
  unitPath: string;
  /** systemd's unit name, or launchd's label. */
  unitName: string;
  /** macOS: launchd has no RuntimeDirectory and cannot write logs to the journal. */
  logPath?: string;
}

const MAC_BASE = '/Library/Application Support/Airlock';

export function serviceLayout(platform: NodeJS.Platform, user?: string): ServiceLayout {
  const marker = join('/', MARKER_PATH);
  if (platform === 'linux') {
    return {
      platform,
      user: user ?? SERVICE_DEFAULTS.user,
      usersGroup: SERVICE_DEFAULTS.usersGroup,
      dataDir: SERVICE_DEFAULTS.dataDir,
      runDir: SERVICE_DEFAULTS.runDir,
      markerPath: marker,
      unitPath: '/etc/systemd/system/airlock.service',
      unitName: 'airlock.service',
    };
  }
  if (platform === 'darwin') {
    // /var/run is emptied at boot and only root may make folders there, so the run folder is a kept one
    return {
      platform,
      user: user ?? '_airlock',
      usersGroup: SERVICE_DEFAULTS.usersGroup,
      dataDir: `${MAC_BASE}/data`,
      runDir: `${MAC_BASE}/run`,
      markerPath: marker,
      unitPath: '/Library/LaunchDaemons/com.airlock.broker.plist',
      unitName: 'com.airlock.broker',
      logPath: '/Library/Logs/Airlock/broker.log',
    };
  }
  throw new Error(`airlock service is for Linux (systemd) and macOS (launchd); on ${platform} see the README's "Hardened mode"`);
}

/** The command the service runs: the broker in system mode, with every path spelled out. */
export function daemonArgv(layout: ServiceLayout, node: string, cli: string): string[] {
  return [node, cli, 'daemon', '--system', '--home', layout.dataDir, '--run-dir', layout.runDir, '--users-group', layout.usersGroup];
}
