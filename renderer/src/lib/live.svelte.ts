/**
 * The window's one subscription to the broker's event stream, and the state it keeps current (live.ts):
 * E-Stop, the pending tickets, sessions, notices, the stream's state. Pages listen for the events they care
 * about with `on`, and reload what they show when `generation` changes (a fresh start after the stream ended).
 */
import type { BrokerEvent, BrokerStatus } from '@airlock/proxy-core/protocol/api';
import type { AirlockApi, StreamState } from '@airlock/proxy-core/protocol/ui-contract';
import { errorText } from './errors.js';
import { applyEvent, dismissNotice, emptySnapshot, type LiveSnapshot, reconcile } from './live.js';

type Listener = (event: BrokerEvent) => void;

export class Live {
  snapshot = $state.raw<LiveSnapshot>(emptySnapshot());
  status = $state.raw<BrokerStatus | null>(null);
  stream = $state.raw<StreamState>({ state: 'reconnecting', reason: 'connecting' });
  /** Why the first load failed, if it did. */
  loadError = $state<string | null>(null);
  loaded = $state(false);
  /** Bumped on every (re)start: pages reload what they show. */
  generation = $state(0);

  private listeners = new Set<Listener>();
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly api: AirlockApi) {}

  /** Subscribe from the newest event, load, then apply what arrived meanwhile (see live.ts). */
  async start(): Promise<void> {
    this.stop();
    this.loadError = null;
    const generation = ++this.generation;
    let held: BrokerEvent[] | null = [];
    try {
      const { events } = await this.api.call('events', { limit: 1 });
      const head = events[0]?.seq ?? 0;
      if (generation !== this.generation) return;
      this.unsubscribe = this.api.subscribe(head, {
        event: (e) => {
          if (generation !== this.generation) return;
          if (held) held.push(e);
          else this.snapshot = applyEvent(this.snapshot, e);
          // the disk-full banner reads status: fetched again when the disk's state may have changed
          if (!held && (e.type === 'disk-full' || e.type === 'disk-ok' || e.type === 'journal-lost' || e.type === 'presence-confirmed')) void this.refreshStatus();
          for (const l of this.listeners) l(e);
        },
        state: (s) => {
          if (generation === this.generation) this.stream = s;
        },
      });
      const [status, pending] = await Promise.all([this.api.call('status', {}), this.api.call('pending', {})]);
      if (generation !== this.generation) return;
      this.status = status;
      this.snapshot = reconcile(status, pending, held, head, this.snapshot);
      held = null;
      this.loaded = true;
    } catch (err) {
      held = null;
      if (generation === this.generation) this.loadError = errorText(err);
    }
  }

  private async refreshStatus(): Promise<void> {
    try {
      this.status = await this.api.call('status', {});
    } catch {
      // the stream says when the broker is gone; the banner keeps what it last knew
    }
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Listen for events; returns the way to stop. */
  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get estop(): boolean {
    return this.snapshot.estop;
  }

  async setEstop(on: boolean): Promise<void> {
    const r = await this.api.call('estop', { on });
    // the event will say the same; showing it now spares a moment of doubt
    this.snapshot = { ...this.snapshot, estop: r.estop };
    // on a full disk the event comes only once it can be stored: status says so now
    void this.refreshStatus();
  }

  dismissNotice(client: string, server: string): void {
    this.snapshot = dismissNotice(this.snapshot, client, server);
  }
}
