/**
 * E-Stop and what trips it: the switch (kept in the database with why it is on, so a restart still says),
 * the tripwire that presses it when changing calls come too fast (tripwire.ts), and the places for changing
 * calls handed to the wrappers while the tripwire is on (tripwire-budget.ts).
 */
import { EstopCauseSchema, type EstopCause } from '../protocol/api.js';
import type { EventDetails } from '../protocol/events.js';
import { BrokerNote } from '../protocol/names.js';
import type { Clock } from '../util/clock.js';
import type { JournalSafety } from './journal-safety.js';
import type { RecordEvent } from './events.js';
import { parseJson } from './db/queries.js';
import type { Session, Sessions } from './sessions.js';
import type { Store } from './db/store.js';
import { Tripwire, tripwireLimits, type TripwireLimits } from './tripwire.js';
import { TripwireBudget } from './tripwire-budget.js';

export interface EstopOptions {
  store: Store;
  clock: Clock;
  safety: JournalSafety;
  sessions: () => Sessions;
  record: RecordEvent;
  /** Deny every held call (E-Stop was pressed). */
  denyHeld: () => void;
}

export class EstopSwitch {
  on: boolean;
  cause: EstopCause | null;
  readonly tripwire: Tripwire;
  /** The cap: places for changing calls, handed to the wrappers. */
  readonly budget: TripwireBudget;
  limits: TripwireLimits;

  constructor(private readonly o: EstopOptions) {
    this.on = o.store.getSetting('estop') === 'on';
    this.cause = this.on ? readEstopCause(o.store.getSetting('estop-cause')) : null;
    this.tripwire = new Tripwire(o.clock);
    this.limits = tripwireLimits((key) => o.store.getSetting(key));
    this.budget = new TripwireBudget({
      clock: o.clock,
      limits: () => this.limits,
      estop: () => this.on,
      sessions: () => o.sessions().all().length,
      reclaim: (id) => o.sessions().get(id)?.channel.notify(BrokerNote.budgetReclaim, {}),
      trip: (reason) => void this.set(true, { by: 'tripwire', reason }),
    });
  }

  /**
   * E-Stop on or off. On, every held call is denied and every wrapper, as it applies the push, also stops the
   * calls its server is running (wrap/estop.ts); this resolves once every wrapper has applied it.
   */
  async set(on: boolean, why: EventDetails['estop-on'] = { by: 'user' }): Promise<{ estop: boolean }> {
    const { store } = this.o;
    this.on = on;
    // kept with the switch: after a restart, status still says why E-Stop is on
    this.cause = on ? { ...why, at: this.o.clock.now() } : null;
    // held in memory first: a disk that refuses the write keeps it pending, written as soon as it allows
    const cause = this.cause ? JSON.stringify(this.cause) : '';
    this.o.safety.disk.write(() => store.db.transaction(() => {
      store.setSetting('estop', on ? 'on' : 'off');
      store.setSetting('estop-cause', cause);
    })(), 'estop');
    if (on) {
      this.tripwire.reset();
      this.budget.reset();
      this.o.record('estop-on', null, null, why);
    } else this.o.record('estop-off', null, null, {});
    if (on) this.o.denyHeld();
    await this.o.sessions().push();
    return { estop: on };
  }

  /** Whether `watch` counts anything now (the tripwire is on, E-Stop is not). */
  get watching(): boolean {
    return !this.on && this.limits.on;
  }

  /** Count a journal batch's changing calls; past the limit, E-Stop engages and the event says why. */
  watch(session: Session, entries: readonly unknown[]): void {
    if (this.on) return;
    const reason = this.tripwire.observe(session.info.id, entries, this.limits);
    if (reason !== null) void this.set(true, { by: 'tripwire', reason });
  }

  /** A tripwire setting changed: read the limits again. */
  reloadLimits(): void {
    this.limits = tripwireLimits((k) => this.o.store.getSetting(k));
  }
}

/** The stored cause of an E-Stop; null when it cannot be read (the switch itself still holds). */
function readEstopCause(stored: string | undefined): EstopCause | null {
  if (!stored) return null;
  const parsed = EstopCauseSchema.safeParse(parseJson(stored));
  return parsed.success ? parsed.data : null;
}
