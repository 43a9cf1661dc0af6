/**
 * What keeps the journal whole when things go wrong, for the broker: events stored even when the disk is full
 * (kept in memory and written once it allows, disk-guard.ts), the count of journal entries that could not be
 * kept (reported by the wrappers, or found unreadable in a spill file) with an event for each report, and the
 * pick-up of spill files that wrappers which are gone left behind (spill-pickup.ts).
 */
import { IpcError } from '../ipc/channel.js';
import type { BrokerEvent, CallRecord } from '../protocol/api.js';
import type { CallEvent, EventDetails, EventType } from '../protocol/events.js';
import { DiskGuard, type DiskFull } from './disk-guard.js';
import { SpillPickup } from './spill-pickup.js';
import type { Store } from './db/store.js';

/** Where the running count of lost journal entries is kept (a raw key of the settings table, not a setting). */
const LOST_KEY = 'journal-lost';

export interface JournalLostTotals {
  /** Records of calls that reached their server (or may have) that no copy of survived. */
  executed: number;
  /** Records of refused calls (never sent to a server) counted instead of kept. */
  notRun: number;
}

export interface JournalSafetyOptions {
  store: Store;
  dataDir: string;
  now: () => number;
  publish: (events: BrokerEvent[]) => void;
  /** Entries a spill file held were committed (their 'call' events, for the bus and undo). */
  journaled: (events: CallEvent[]) => void;
  /** The disk became full or writable again: push the wrappers their policy (they refuse calls while it is full). */
  diskChanged: (full: boolean) => void;
}

export const DISK_FULL_REASON =
  "Airlock cannot journal this call: the disk that holds Airlock's data is full (or failing), so every call is refused until it takes writes again";

export class JournalSafety {
  readonly disk: DiskGuard;
  private lost: JournalLostTotals;
  private readonly pickup: SpillPickup;

  constructor(private readonly o: JournalSafetyOptions) {
    this.disk = new DiskGuard({
      now: o.now,
      changed: (full) => {
        const full_ = this.disk.full;
        if (full && full_) this.record('disk-full', null, null, { error: full_.error });
        else if (!full) this.record('disk-ok', null, null, {});
        o.diskChanged(full);
      },
      saveEvents: (events) => {
        const stored = o.store.db.transaction(() => events.map((e) => o.store.addEvent(e.type, e.server, e.tool, e.detail, e.at)))();
        o.publish(stored);
      },
      probe: () => o.store.setSetting('disk-check', String(o.now())),
    });
    this.lost = readLost(o.store.getSetting(LOST_KEY));
    this.pickup = new SpillPickup({
      dataDir: o.dataDir,
      commit: (entries) => this.commit(entries),
      lost: (count, why) => this.addLost({ executed: count, notRun: 0 }, null, why),
      taken: (file, entries, error) => this.record('spill-taken', null, null, { file, entries, ...(error !== undefined ? { error } : {}) }),
      // nothing can be committed while the disk is full: the files wait, unread
      paused: () => this.disk.full !== null,
    });
  }

  /** Store an event and publish it; while the disk refuses, it is kept and stored (and published) later. */
  record<K extends EventType>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): BrokerEvent {
    const at = this.o.now();
    try {
      const event = this.o.store.addEvent(type, server, tool, detail, at);
      this.o.publish([event]);
      return event;
    } catch (err) {
      if (!this.disk.failed(err)) throw err;
      this.disk.keepEvent({ at, type, server, tool, detail });
      return { seq: 0, at, type, server, tool, detail };
    }
  }

  /** A wrapper (or a spill file) could not keep some entries: counted for good, and said in an event. */
  addLost(lost: JournalLostTotals, who: { client: string; server: string } | null, why?: string): void {
    if (lost.executed <= 0 && lost.notRun <= 0) return;
    this.lost = { executed: this.lost.executed + lost.executed, notRun: this.lost.notRun + lost.notRun };
    const totals = JSON.stringify(this.lost);
    this.disk.write(() => this.o.store.setSetting(LOST_KEY, totals), LOST_KEY);
    this.record('journal-lost', who?.server ?? null, null, {
      executed: lost.executed,
      notRun: lost.notRun,
      ...(who ? { client: who.client } : {}),
      reason: why ?? 'the wrapper could not keep them while Airlock could not take them (see its stderr)',
    });
  }

  /** Run a request; a disk error marks the disk full and reaches the caller as one clear line (code disk-full). */
  translate(run: () => unknown): unknown {
    const fail = (err: unknown): never => {
      if (this.disk.failed(err)) throw new IpcError('disk-full', `the disk that holds Airlock's data refused the write (${(err as Error).message}); the broker keeps running, E-Stop still holds, calls are refused until it takes writes again`);
      throw err;
    };
    try {
      const out = run();
      return out instanceof Promise ? out.catch(fail) : out;
    } catch (err) {
      return fail(err);
    }
  }

  status(): { diskFull: DiskFull | null; journalLost: JournalLostTotals } {
    return { diskFull: this.disk.full, journalLost: { ...this.lost } };
  }

  start(): void {
    try {
      this.pickup.start();
    } catch (err) {
      this.record('spill-taken', null, null, { file: '', entries: 0, error: (err as Error).message });
    }
  }

  stop(): void {
    this.pickup.stop();
    this.disk.stop();
  }

  private commit(entries: CallRecord[]): void {
    let events: CallEvent[];
    try {
      events = this.o.store.writeJournal(entries);
    } catch (err) {
      this.disk.failed(err);
      throw err;
    }
    this.o.journaled(events);
  }
}

function readLost(text: string | undefined): JournalLostTotals {
  try {
    const v = JSON.parse(text ?? '') as Partial<JournalLostTotals>;
    const n = (x: unknown) => (typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 ? x : 0);
    return { executed: n(v.executed), notRun: n(v.notRun) };
  } catch {
    return { executed: 0, notRun: 0 };
  }
}
