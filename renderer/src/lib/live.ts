/**
 * What the whole window keeps current from the event stream: E-Stop, the pending tickets, the live sessions
 * and notices about new unprotected servers. Pure: a snapshot loaded once, then each event applied in order.
 *
 * Loading without losing an event: subscribe first, from the newest event known (`events` with limit 1), and
 * hold what arrives; then load `status` and `pending`; then apply the held events to what was loaded. Every
 * change here is idempotent (a ticket created twice is one ticket, ending one that is gone changes nothing,
 * the last E-Stop event wins), so an event the load already reflects does no harm applied again.
 */
import type { BrokerEvent, BrokerStatus, SessionInfo, Ticket } from '@airlock/proxy-core/protocol/api';
import type { ConfigEventDetail, EventDetails } from '@airlock/proxy-core/protocol/events';

/** How a ticket ended, as the window learnt it. */
export interface TicketEnd {
  resolution: string;
  reason: string | null;
  remember: string | null;
  at: number;
}

/** A server that appeared in a client's config and is not protected. */
export interface ServerNotice {
  client: string;
  server: string;
  path?: string;
  seq: number;
}

/** Who turned E-Stop on: a person, or the tripwire (which says why). */
export interface EstopCause {
  by: 'user' | 'tripwire';
  reason?: string;
}

export interface LiveSnapshot {
  estop: boolean;
  /** Why E-Stop is on, when known (null: off, or turned on before Airlock kept the cause). */
  estopCause: EstopCause | null;
  /** Newest first. */
  tickets: Ticket[];
  sessions: SessionInfo[];
  /** Tickets that ended while the window watched (the last 200). */
  ended: Record<string, TicketEnd>;
  notices: ServerNotice[];
  /** The last event applied. */
  seq: number;
}

const MAX_ENDED = 200;

export function emptySnapshot(): LiveSnapshot {
  return { estop: false, estopCause: null, tickets: [], sessions: [], ended: {}, notices: [], seq: 0 };
}

const newestFirst = (a: Ticket, b: Ticket): number => b.createdAt - a.createdAt;

/** The snapshot of a fresh load, with the events that arrived while it loaded applied on top. */
export function reconcile(status: BrokerStatus, pending: readonly Ticket[], held: readonly BrokerEvent[], head: number, previous?: LiveSnapshot): LiveSnapshot {
  let s: LiveSnapshot = {
    estop: status.estop,
    estopCause: status.estop && status.estopCause ? estopCauseOf(status.estopCause) : null,
    tickets: [...pending].sort(newestFirst),
    sessions: [...status.sessions],
    ended: previous?.ended ?? {},
    notices: previous?.notices ?? [],
    seq: head,
  };
  for (const e of held) s = applyEvent(s, e);
  return s;
}

function detailOf<K extends keyof EventDetails>(e: BrokerEvent, _type: K): Partial<EventDetails[K]> {
  return (typeof e.detail === 'object' && e.detail !== null ? e.detail : {}) as Partial<EventDetails[K]>;
}

function withEnded(ended: Record<string, TicketEnd>, id: string, end: TicketEnd): Record<string, TicketEnd> {
  const next = { ...ended, [id]: end };
  const keys = Object.keys(next);
  if (keys.length > MAX_ENDED) for (const k of keys.slice(0, keys.length - MAX_ENDED)) delete next[k];
  return next;
}

const sameServer = (n: ServerNotice, d: Partial<ConfigEventDetail>): boolean => n.client === d.client && n.server === d.server;

/** The snapshot after one event (events at or before the snapshot's seq are already in it). */
export function applyEvent(s: LiveSnapshot, e: BrokerEvent): LiveSnapshot {
  if (e.seq <= s.seq) return s;
  const next: LiveSnapshot = { ...s, seq: e.seq };
  switch (e.type) {
    case 'ticket-created': {
      const t = detailOf(e, 'ticket-created').ticket;
      if (!t || s.tickets.some((x) => x.id === t.id) || s.ended[t.id]) break;
      next.tickets = [t, ...s.tickets].sort(newestFirst);
      break;
    }
    case 'ticket-unwaited': {
      const d = detailOf(e, 'ticket-unwaited');
      if (typeof d.ticketId !== 'string') break;
      next.tickets = s.tickets.map((t) => (t.id === d.ticketId ? { ...t, unwaitedAt: typeof d.at === 'number' ? d.at : e.at } : t));
      break;
    }
    case 'ticket-ended': {
      const d = detailOf(e, 'ticket-ended');
      if (typeof d.ticketId !== 'string') break;
      next.tickets = s.tickets.filter((t) => t.id !== d.ticketId);
      next.ended = withEnded(s.ended, d.ticketId, { resolution: d.resolution ?? 'ended', reason: d.reason ?? null, remember: d.remember ?? null, at: e.at });
      break;
    }
    case 'estop-on':
      next.estop = true;
      next.estopCause = estopCauseOf(e.detail);
      break;
    case 'estop-off':
      next.estop = false;
      next.estopCause = null;
      break;
    case 'session-up': {
      const session = detailOf(e, 'session-up').session;
      if (session && !s.sessions.some((x) => x.id === session.id)) next.sessions = [...s.sessions, session];
      break;
    }
    case 'session-down': {
      const id = detailOf(e, 'session-down').sessionId;
      next.sessions = s.sessions.filter((x) => x.id !== id);
      break;
    }
    case 'server-added': {
      const d = detailOf(e, 'server-added');
      if (d.protected !== false || !d.client || !d.server || s.notices.some((n) => sameServer(n, d))) break;
      next.notices = [...s.notices, { client: d.client, server: d.server, ...(d.path ? { path: d.path } : {}), seq: e.seq }];
      break;
    }
    case 'server-protected':
    case 'server-unprotected': {
      const d = detailOf(e, 'server-protected');
      // unprotected on purpose: no notice needed either
      next.notices = s.notices.filter((n) => !sameServer(n, d));
      break;
    }
  }
  return next;
}

function estopCauseOf(detail: unknown): EstopCause {
  const d = (typeof detail === 'object' && detail !== null ? detail : {}) as Partial<EventDetails['estop-on']>;
  const by = d.by === 'tripwire' ? 'tripwire' : 'user';
  return typeof d.reason === 'string' && d.reason ? { by, reason: d.reason } : { by };
}

/** The snapshot without one notice (the person dismissed it, or protected the server). */
export function dismissNotice(s: LiveSnapshot, client: string, server: string): LiveSnapshot {
  return { ...s, notices: s.notices.filter((n) => !(n.client === client && n.server === server)) };
}

/** The window's title: the pending count first, so it shows in a tab or the taskbar. */
export function windowTitle(pending: number): string {
  return pending > 0 ? `(${pending}) Airlock` : 'Airlock';
}
