/**
 * Attention without the tab in front: which broker events are worth a system notification, the favicon that
 * carries the count of held calls, and what every page says while the broker does not answer. Pure.
 */
import type { BrokerEvent } from '@airlock/proxy-core/protocol/api';
import { visibleText } from './escape.js';

export interface Notice {
  title: string;
  body: string;
  /** One notification per thing: a later one with the same tag replaces it. */
  tag: string;
}

/** The notification an event calls for, or null: held calls, changed tool definitions, new unprotected servers, a tripped E-Stop. */
export function noticeFor(e: Pick<BrokerEvent, 'type' | 'server' | 'tool' | 'detail'>): Notice | null {
  const server = visibleText(e.server ?? '');
  const tool = visibleText(e.tool ?? '');
  const d = (e.detail ?? {}) as Record<string, unknown>;
  const client = typeof d.client === 'string' ? visibleText(d.client) : '';
  switch (e.type) {
    case 'ticket-created': {
      const t = (d.ticket ?? {}) as { id?: unknown; tool?: unknown; server?: unknown; client?: unknown };
      const name = (v: unknown) => (typeof v === 'string' ? visibleText(v) : '');
      return { title: `Airlock: ${name(t.tool) || tool} on ${name(t.server) || server} is waiting`, body: `${name(t.client) ? `${name(t.client)} asked to run it. ` : ''}It runs only if you allow it.`, tag: `ticket-${name(t.id)}` };
    }
    case 'tool-changed':
      return { title: `Airlock: the definition of ${tool} on ${server} changed`, body: 'Its calls ask until you accept the new definition.', tag: `changed-${server}-${tool}` };
    case 'server-added':
      if (d.protected === true) return null;
      return { title: `Airlock: a new server ${server} is not protected`, body: `${client ? `${client}'s config` : 'A client config'} runs it without Airlock: its calls are not checked.`, tag: `unprotected-${server}` };
    case 'estop-on':
      if (d.by !== 'tripwire') return null;
      return { title: 'Airlock: E-Stop tripped', body: `${typeof d.reason === 'string' ? `${visibleText(d.reason)}. ` : ''}Every tool call is refused until you turn it off.`, tag: 'estop' };
    default:
      return null;
  }
}

/** The favicon: Airlock's mark, with the count of held calls on a badge when there are any. */
export function faviconSvg(count: number): string {
  const badge =
    count > 0
      ? `<circle cx="23" cy="9" r="9" fill="#c62828"/><text x="23" y="13" font-family="sans-serif" font-size="${count > 9 ? 10 : 12}" font-weight="700" text-anchor="middle" fill="#fff">${count > 99 ? '99+' : count}</text>`
      : '';
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="3" y="7" width="22" height="22" rx="5" fill="#2f5d8a"/><path d="M9 18h10M14 13v10" stroke="#fff" stroke-width="3" stroke-linecap="round"/>${badge}</svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

/** What every page says while the broker does not answer. */
export const BROKER_DOWN = {
  headline: 'Airlock’s broker is not answering: every tool call is refused until it runs again.',
  how: 'Start it with `airlock daemon --ui` in a terminal (or open the Airlock app); this page reconnects by itself.',
};

/** Whether to say the broker is down: the stream ended or lost its connection (not while it first connects), or the first load failed. */
export function brokerDown(stream: { state: string; reason?: string }, loadError: string | null): boolean {
  return loadError !== null || stream.state === 'ended' || (stream.state === 'reconnecting' && stream.reason !== 'connecting');
}
