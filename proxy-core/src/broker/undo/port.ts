/**
 * What undo needs of the broker, as one port the broker implements in one place (broker/undo-port.ts): the
 * database and journal it reads and adds to, the events it records, the wrappers it asks to run an inverse
 * (and pushes fresh policy to), and the broker's state an undo or a snapshot is decided by (E-Stop, the
 * rules, the ticket timeout). Undo learns of finished calls from the journal writer, not through this port:
 * `Undo.journaled`, called once their batch is committed.
 */
import type { MatchEnv } from '../../policy/arg-conditions.js';
import type { CallRecord, Rule } from '../../protocol/api.js';
import type { EventDetails } from '../../protocol/events.js';
import type { BrokerToWrapper } from '../../protocol/names.js';
import type { Clock } from '../../util/clock.js';
import type { Session } from '../sessions.js';
import type { Store } from '../db/store.js';
import type { FileTools } from './file-tools.js';

/** The events undo records. */
export type UndoEvent = 'undo' | 'undo-known' | 'rollback' | 'snapshots-pruned' | 'snapshot-failed' | 'inverse-declared' | 'inverse-removed' | 'inverse-refused';

export interface UndoPort {
  /** Airlock's data dir: snapshots are kept in it. */
  readonly dataDir: string;
  readonly clock: Clock;
  /** How a path argument is read (home, platform, symlinks): as the wrapper's path rules read it. */
  readonly matchEnv: MatchEnv;
  /** Which tools of a server write files, through which arguments (previews read the same). */
  readonly fileTools: FileTools;
  /** The broker's database (undo records and snapshot blobs are tables of it), a journaled call, a server's catalog, a setting. */
  readonly store: Pick<Store, 'db' | 'call' | 'caughtUp' | 'catalog' | 'getSetting' | 'reseal' | 'sealed'>;
  /** Journal an undo's own entry (a file undo is a call of its own) and publish its event; throws when the write fails. */
  journal(entry: CallRecord): void;
  /** Store an event and publish it. */
  record<K extends UndoEvent>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): void;
  /** The wrappers connected now. */
  sessions(): readonly Session[];
  /** Ask a wrapper to run a call (an inverse) through its pipeline. */
  request(sessionId: string, method: typeof BrokerToWrapper.callTool, params: unknown, timeoutMs: number): Promise<unknown>;
  /** Push fresh policy to the wrappers of a server (a declaration changes the evidence they classify with). */
  push(server: string): Promise<void>;
  /** Whether E-Stop is on now: an inverse is a tool call, and E-Stop refuses every one. */
  estop(): boolean;
  /** How long a ticket waits for a person now (a held inverse may wait that long). */
  ticketTimeoutSeconds(): number;
  /** The user's rules: one that decides by whether a call can be undone must see a snapshot that failed. */
  rules(): readonly Rule[];
}
