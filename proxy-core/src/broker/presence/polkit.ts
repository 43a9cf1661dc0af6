/** polkit (placeholder until the OS check lands: it refuses). */
import type { Peer } from '../../ipc/peer.js';

export interface PolkitAnswer {
  ok: boolean;
  reason: string;
}

export async function checkPolkit(_peer: Peer, _statement: string, _opts?: { actionId?: string; pkcheck?: string; timeoutMs?: number; interactive?: boolean }): Promise<PolkitAnswer> {
  return { ok: false, reason: 'polkit is not available' };
}
