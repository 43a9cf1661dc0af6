/**
 * The broker's side of undo's port (undo/port.ts): everything undo may ask of the broker, in one place. The
 * broker's state that changes at run time (E-Stop, the rules) is read through `estop` and `rules` when asked.
 */
import type { MatchEnv } from '../policy/arg-conditions.js';
import type { CallRecord, Rule } from '../protocol/api.js';
import type { EventDetails, EventType } from '../protocol/events.js';
import type { BrokerToWrapper } from '../protocol/names.js';
import type { Clock } from '../util/clock.js';
import type { EventBus } from './events.js';
import type { Session, Sessions } from './sessions.js';
import type { Store } from './db/store.js';
import type { TicketTimeout } from './tickets/timeout.js';
import type { FileTools } from './undo/file-tools.js';
import type { UndoEvent, UndoPort } from './undo/port.js';

/** What of the broker the port reaches. */
export interface BrokerUndoParts {
  store: Store;
  dataDir: string;
  clock: Clock;
  matchEnv: MatchEnv;
  fileTools: FileTools;
  sessions: Sessions;
  bus: EventBus;
  ticketTimeout: TicketTimeout;
  /** The broker's record: stored and published (kept, and stored later, while the disk refuses). */
  record<K extends EventType>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): unknown;
  /** Whether E-Stop is on now. */
  estop(): boolean;
  /** The rules now (the broker's copy of the rules table). */
  rules(): readonly Rule[];
}

export class BrokerUndoPort implements UndoPort {
  readonly dataDir: string;
  readonly clock: Clock;
  readonly matchEnv: MatchEnv;
  readonly fileTools: FileTools;
  readonly store: Store;

  constructor(private readonly b: BrokerUndoParts) {
    this.dataDir = b.dataDir;
    this.clock = b.clock;
    this.matchEnv = b.matchEnv;
    this.fileTools = b.fileTools;
    this.store = b.store;
  }

  journal(entry: CallRecord): void {
    this.b.bus.publish(this.b.store.writeJournal([entry]));
  }

  record<K extends UndoEvent>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): void {
    this.b.record(type, server, tool, detail);
  }

  sessions(): readonly Session[] {
    return this.b.sessions.all();
  }

  request(sessionId: string, method: typeof BrokerToWrapper.callTool, params: unknown, timeoutMs: number): Promise<unknown> {
    return this.b.sessions.request(sessionId, method, params, timeoutMs);
  }

  push(server: string): Promise<void> {
    return this.b.sessions.push((s) => s.info.server === server);
  }

  estop(): boolean {
    return this.b.estop();
  }

  ticketTimeoutSeconds(): number {
    return this.b.ticketTimeout.seconds;
  }

  rules(): readonly Rule[] {
    return this.b.rules();
  }
}
