/**
 * Who is on the other end of a Unix socket: the kernel's record of the process that connected (SO_PEERCRED on
 * Linux, LOCAL_PEERPID and getpeereid on macOS, through the native addon), plus what /proc says of it. A same-user
 * process can write anything on the socket, but not change these. They answer "which process", not "which
 * person": a presence proof built on them (polkit's unix-process subject) asks the system about that process.
 *
 * The pid is the one at connect time. Call peerOf as soon as a connection is accepted, so the start time read
 * here is that process's own; the start time is what lets polkit refuse a pid that was reused since.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { nativeAddon } from '../util/native.js';

export interface Peer {
  pid: number;
  uid: number;
  gid: number;
  /** The peer's executable (readlink /proc/PID/exe); null when unreadable (another user's process, not Linux). */
  exe: string | null;
  /** The peer has a controlling terminal (/proc/PID/stat tty_nr != 0). False when unknown. */
  tty: boolean;
  /** /proc/PID/stat field 22 (clock ticks since boot), as polkit's unix-process subject takes it; null when unknown. */
  startTime: string | null;
}

/** The fields of /proc/PID/stat that Airlock reads. */
export interface ProcStat {
  ttyNr: number;
  startTime: string;
}

/**
 * Parse a /proc/PID/stat line. Field 2 (comm) is in parentheses and may itself hold spaces and parentheses (a
 * process names itself), so the fields after it are counted from the LAST ')'. Null when the line is not one.
 */
export function parseStat(line: string): ProcStat | null {
  const close = line.lastIndexOf(')');
  if (close < 0 || line.indexOf('(') < 0 || line.indexOf('(') > close) return null;
  // after comm: field 3 (state) is index 0, field 7 (tty_nr) index 4, field 22 (starttime) index 19
  const rest = line
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const tty = rest[4];
  const start = rest[19];
  if (tty === undefined || start === undefined || !/^-?\d+$/.test(tty) || !/^\d+$/.test(start)) return null;
  return { ttyNr: Number(tty), startTime: start };
}

function procStat(pid: number): ProcStat | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

function procExe(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return null;
  }
}

/** The socket's file descriptor, where libuv exposes one (Unix); null otherwise. */
function socketFd(socket: Socket): number | null {
  const fd: unknown = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && Number.isInteger(fd) && fd >= 0 ? fd : null;
}

/** The process on the other end of `socket`; null when unknown (not Linux or macOS, addon not built, no fd). */
export function peerOf(socket: Socket): Peer | null {
  if (process.platform !== 'linux' && process.platform !== 'darwin') return null;
  const peerCredentials = nativeAddon()?.peerCredentials;
  const fd = socketFd(socket);
  if (!peerCredentials || fd === null) return null;
  let cred: { pid: number; uid: number; gid: number } | null;
  try {
    cred = peerCredentials(fd);
  } catch {
    return null;
  }
  if (!cred || !(cred.pid > 0)) return null;
  if (process.platform !== 'linux') {
    // no /proc: what the process is and whether it has a terminal stay unknown, so nothing counts on them
    return { ...cred, exe: null, tty: false, startTime: null };
  }
  const stat = procStat(cred.pid);
  return { ...cred, exe: procExe(cred.pid), tty: stat !== null && stat.ttyNr !== 0, startTime: stat?.startTime ?? null };
}
