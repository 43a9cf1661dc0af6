/** Peer credentials of a Unix socket (placeholder until the native piece lands: the OS is not asked). */
import type { Socket } from 'node:net';

export interface Peer {
  pid: number;
  uid: number;
  gid: number;
  exe: string | null;
  tty: boolean;
  startTime: string | null;
}

export function peerOf(_socket: Socket): Peer | null {
  return null;
}
