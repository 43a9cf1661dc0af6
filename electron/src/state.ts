/**
 * What the app shows, kept current from the broker: its health, E-Stop (and who engaged it) and the pending
 * tickets. Loaded once per connection, then each event applied in order; every change is
 * idempotent (a ticket created twice is one ticket, ending one that is gone changes nothing), so an event the
 * load already reflects does no harm. Listeners hear one `changed` per tick however many events arrived in it,
 * so a burst of replayed events opens no popup that the same burst closes.
 */
import type { BrokerEvent, BrokerStatus, EventDetails, Ticket } from '@airlock/proxy-core';
import { Signal } from './signal.js';

export type BrokerHealth =
  | { state: 'starting' }
  /** `owned`: the app started this broker (and stops it on quit); else it attached to a running one. */
  | { state: 'ready'; owned: boolean }
  | { state: 'problem'; reason: string };

/** Who engaged E-Stop: a person (any front end), or the tripwire, with why. */
export type EstopCause = EventDetails['estop-on'];

/** Events after which what "Undo last" would undo may be different. */
const UNDO_EVENTS: ReadonlySet<string> = new Set(['undo-known', 'undo', 'rollback', 'snapshots-pruned', 'snapshot-failed']);
/** Events after which this front end's presence lease or the broker's standing warning may be different. */
const PRESENCE_EVENTS: ReadonlySet<string> = new Set(['presence-leases-ended', 'presence-confirmed', 'presence-off']);

export class AppState {
  health: BrokerHealth = { state: 'starting' };
  estop = false;
  /** Why E-Stop is on, when this connection saw it engage (a load knows only that it is on: null). */
  estopCause: EstopCause | null = null;
  /** The broker's disk is full: calls cannot be journaled, so every one is refused (since when, and the error). */
  diskFull: { since: number; error: string } | null = null;
  /** Pending tickets, oldest first (the order they arrived in). */
  private readonly pending = new Map<string, Ticket>();
  /** Settings the app reads (approval style, shortcut): the key of each that changed. */
  readonly settingChanged = new Signal<string>();
  /** A server was protected (by anyone): the first one turns "start at login" on. */
  readonly serverProtected = new Signal<void>();
  /** E-Stop engaged while the app was following (not at a load): by whom, and why. */
  readonly estopEngaged = new Signal<EstopCause>();
  /** Something happened that may change which call "Undo last" would undo. */
  readonly undoChanged = new Signal<void>();
  /** Leases ended (anywhere), proofs confirmed or turned off: what presence.status says may be different. */
  readonly presenceChanged = new Signal<void>();
  readonly changed = new Signal<void>();
  private scheduled = false;

  get tickets(): Ticket[] {
    return [...this.pending.values()];
  }

  ticket(id: string): Ticket | undefined {
    return this.pending.get(id);
  }

  setHealth(health: BrokerHealth): void {
    this.health = health;
    this.touch();
  }

  /** A fresh load: what the broker says now replaces what was known. */
  load(status: BrokerStatus, pending: readonly Ticket[]): void {
    // status says who turned E-Stop on; an older cause from the stream is kept when it has none
    if (!status.estop) this.estopCause = null;
    else if (status.estopCause) this.estopCause = status.estopCause;
    else if (!this.estop) this.estopCause = null;
    this.estop = status.estop;
    this.diskFull = status.diskFull ?? null;
    this.pending.clear();
    for (const t of [...pending].sort((a, b) => a.createdAt - b.createdAt)) this.pending.set(t.id, t);
    this.touch();
  }

  apply(e: BrokerEvent): void {
    const detail = (typeof e.detail === 'object' && e.detail !== null ? e.detail : {}) as Record<string, unknown>;
    switch (e.type) {
      case 'ticket-created': {
        const t = detail.ticket as Ticket | undefined;
        if (t && typeof t.id === 'string' && !this.pending.has(t.id)) this.pending.set(t.id, t);
        break;
      }
      case 'ticket-ended':
        if (typeof detail.ticketId === 'string') this.pending.delete(detail.ticketId);
        break;
      case 'estop-on': {
        const cause: EstopCause = detail.by === 'tripwire' ? { by: 'tripwire', ...(typeof detail.reason === 'string' ? { reason: detail.reason } : {}) } : { by: 'user' };
        this.estop = true;
        this.estopCause = cause;
        this.estopEngaged.emit(cause);
        break;
      }
      case 'estop-off':
        this.estop = false;
        this.estopCause = null;
        break;
      case 'disk-full':
        this.diskFull = { since: e.at, error: typeof detail.error === 'string' ? detail.error : 'the disk is full' };
        break;
      case 'disk-ok':
        this.diskFull = null;
        break;
      case 'setting-changed':
        if (typeof detail.key === 'string') this.settingChanged.emit(detail.key);
        return;
      case 'server-protected':
        this.serverProtected.emit();
        return;
      default:
        if (UNDO_EVENTS.has(e.type)) this.undoChanged.emit();
        if (PRESENCE_EVENTS.has(e.type)) this.presenceChanged.emit();
        return;
    }
    this.touch();
  }

  private touch(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.changed.emit();
    });
  }
}
