/** What the tray shows for a state: pure, so the choice of icon and words is tested without a tray. */
import { join } from 'node:path';
import type { BrokerHealth } from './state.js';

export type TrayLook = 'idle' | 'pending' | 'estop' | 'problem';

/** The most urgent thing first: no broker beats E-Stop (nothing is answered either way), E-Stop beats waiting calls. */
export function trayLook(health: BrokerHealth, estop: boolean, pending: number): TrayLook {
  if (health.state === 'problem') return 'problem';
  if (estop) return 'estop';
  return pending > 0 ? 'pending' : 'idle';
}

/** The icon file of a look: a template image on macOS (the menu bar tints it for light and dark). */
export function trayIconFile(dir: string, look: TrayLook, platform: NodeJS.Platform): string {
  return join(dir, platform === 'darwin' ? `${look}Template.png` : `${look}.png`);
}

export function trayTooltip(health: BrokerHealth, estop: boolean, pending: number): string {
  if (health.state === 'problem') return `Airlock: not running (${health.reason}). Protected servers refuse every call.`;
  if (health.state === 'starting') return 'Airlock: starting…';
  if (estop) return 'Airlock: E-Stop is on. Every tool call is refused.';
  if (pending === 1) return 'Airlock: 1 call waits for you';
  if (pending > 1) return `Airlock: ${pending} calls wait for you`;
  return 'Airlock: watching your MCP servers';
}
