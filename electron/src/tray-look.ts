/** What the tray shows for a state: pure, so the choice of icon and words is tested without a tray. */
import { join } from 'node:path';
import type { BrokerHealth, EstopCause } from './state.js';

export type TrayLook = 'idle' | 'pending' | 'estop' | 'problem';

/**
 * The most urgent thing first: no broker beats E-Stop (nothing is answered either way), and so does a full disk
 * (every call is refused until it frees up); E-Stop beats waiting calls.
 */
export function trayLook(health: BrokerHealth, estop: boolean, pending: number, diskFull = false): TrayLook {
  if (health.state === 'problem' || diskFull) return 'problem';
  if (estop) return 'estop';
  return pending > 0 ? 'pending' : 'idle';
}

/** The icon file of a look: a template image on macOS (the menu bar tints it for light and dark). */
export function trayIconFile(dir: string, look: TrayLook, platform: NodeJS.Platform): string {
  return join(dir, platform === 'darwin' ? `${look}Template.png` : `${look}.png`);
}

export function trayTooltip(health: BrokerHealth, estop: boolean, pending: number, cause: EstopCause | null = null, diskFull = false): string {
  if (health.state === 'problem') return `Airlock: not running (${health.reason}). Protected servers refuse every call.`;
  if (health.state === 'starting') return 'Airlock: starting…';
  if (diskFull) return "Airlock: the disk is full, so calls cannot be journaled: every tool call is refused until there is room. E-Stop still works.";
  if (estop && cause?.by === 'tripwire') return `Airlock: E-Stop turned itself on (${tripwireWhy(cause)}). Every tool call is refused.`;
  if (estop) return 'Airlock: E-Stop is on. Every tool call is refused.';
  if (pending === 1) return 'Airlock: 1 call waits for you';
  if (pending > 1) return `Airlock: ${pending} calls wait for you`;
  return 'Airlock: watching your MCP servers';
}

/** What the tripwire saw, in its own words (`31 changing calls in 10 s`). */
function tripwireWhy(cause: EstopCause): string {
  return cause.reason ?? 'too many changing calls too fast';
}

/** The menu's line under E-Stop when the tripwire engaged it. */
export function estopCauseLabel(cause: EstopCause | null): string | null {
  return cause?.by === 'tripwire' ? `Turned on by the tripwire: ${tripwireWhy(cause)}`.slice(0, 120) : null;
}

/**
 * The notice when E-Stop engaged by itself: distinct from a person's E-Stop (which says "E-Stop is on"), and
 * naming what tripped it, since the person did not see it happen.
 */
export function tripwireNotice(cause: EstopCause): { title: string; body: string } {
  return {
    title: `E-Stop turned itself on: ${tripwireWhy(cause)}`,
    body: 'A changing call would have passed the tripwire\'s limit (the tripwire-calls and tripwire-seconds settings, or the long window); it was held and refused before it reached its server. Every tool call is refused until you turn E-Stop off in the tray. Click to see what ran.',
  };
}
