/** `airlock service status`: what is installed, whether the broker answers, and whether this user may use it. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { readServiceMarker, type ServiceMarker, SYSTEM_SOCKET } from '../ipc/system.js';
import { serviceManagerRunning } from './execute.js';
import type { ServiceLayout } from './layout.js';

export interface ServiceStatus {
  installed: boolean;
  marker: ServiceMarker | null;
  /** Why the marker was not believed, when it is there but fails the checks. */
  markerProblem?: string;
  unitPath: string;
  unitWritten: boolean;
  /** systemctl is-active's word (active, inactive, failed...), where systemd runs. */
  manager?: string;
  socketPath: string | null;
  socket: 'answering' | 'refused' | 'absent' | 'no access';
  /** Whether this process may connect: a member of the users group (or root). */
  mayUse: boolean;
}

function probe(path: string): Promise<ServiceStatus['socket']> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve('answering');
    });
    s.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'ECONNREFUSED' ? 'refused' : err.code === 'EACCES' || err.code === 'EPERM' ? 'no access' : 'absent'));
  });
}

export async function serviceStatus(layout: ServiceLayout, root: string): Promise<ServiceStatus> {
  let marker: ServiceMarker | null = null;
  let markerProblem: string | undefined;
  try {
    marker = readServiceMarker(root);
  } catch (err) {
    markerProblem = (err as Error).message;
  }
  const unitWritten = existsSync(join(root, layout.unitPath));
  let manager: string | undefined;
  if (root === '/' && layout.platform === 'linux' && serviceManagerRunning('linux')) {
    try {
      manager = execFileSync('systemctl', ['is-active', layout.unitName], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch (err) {
      manager = String((err as { stdout?: string }).stdout ?? '').trim() || 'unknown';
    }
  }
  const socketPath = marker ? join(marker.runDir, SYSTEM_SOCKET) : null;
  const socket = socketPath ? await probe(socketPath) : 'absent';
  const mayUse = marker !== null && (process.getuid?.() === 0 || (process.getgroups?.() ?? []).includes(marker.gid));
  return { installed: marker !== null, marker, ...(markerProblem ? { markerProblem } : {}), unitPath: layout.unitPath, unitWritten, ...(manager ? { manager } : {}), socketPath, socket, mayUse };
}
