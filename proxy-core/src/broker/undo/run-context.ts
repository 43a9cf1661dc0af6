/**
 * What running an undo needs and gives, shared by the two ways of running one (run.ts: files put back from
 * their snapshots; inverse.ts: a declared inverse called through a wrapper): the context they run in, the ids
 * an undo's journal entry gets, and the report of an undo that did not run.
 */
import { randomBytes } from 'node:crypto';
import type { BrokerEvent } from '../../protocol/api.js';
import type { EventDetails } from '../../protocol/events.js';
import type { BrokerToWrapper } from '../../protocol/names.js';
import type { UndoReport } from '../../protocol/undo-api.js';
import type { Clock } from '../../util/clock.js';
import type { Session } from '../sessions.js';
import type { Store } from '../store.js';
import type { SnapshotBlobs, SnapshotCaps } from './snapshots.js';
import type { PathEntry, UndoRecord, UndoRecords } from './records.js';

/** The journal ids of undos start with this (never a wrapper's: theirs are random base64url then a counter). */
export const UNDO_ID_PREFIX = 'undo-';

/** An inverse on its way: what a ticket the wrapper asks for it is marked with. */
export interface RunningInverse {
  sessionId: string;
  inverse: string;
  callId: string;
  tool: string;
}

export interface UndoRunContext {
  store: Store;
  records: UndoRecords;
  blobs: SnapshotBlobs;
  /** The bytes a path had before the call: its snapshot (or the old file still held by a link). */
  readBefore(entry: PathEntry): Promise<Buffer>;
  clock: Clock;
  caps(): SnapshotCaps;
  estop(): boolean;
  sessions(): readonly Session[];
  request(sessionId: string, method: typeof BrokerToWrapper.callTool, params: unknown, timeoutMs: number): Promise<unknown>;
  /** How long a ticket waits for a person now: a held inverse may wait that long. */
  ticketTimeoutSeconds(): number;
  /** The command a session was started with (the sessions table), or null. */
  sessionCommand(sessionId: string): string[] | null;
  /** Inverses on their way, by undo id: a ticket one asks for is marked as an undo. */
  running: Map<string, RunningInverse>;
  record<K extends 'undo'>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): void;
  publish(events: BrokerEvent[]): void;
  /** Keep snapshots under their cap (the records in `keep` are not pruned). */
  prune(keep: ReadonlySet<string>): void;
}

export function newUndoId(): string {
  return `${UNDO_ID_PREFIX}${randomBytes(6).toString('hex')}`;
}

/** A report of an undo that did not run (nothing was touched). */
export function refused(rec: Pick<UndoRecord, 'callId'> & { kind: UndoRecord['kind'] | null }, summary: string, extra: Partial<UndoReport> = {}): UndoReport {
  return { callId: rec.callId, ok: false, kind: rec.kind, summary, restored: [], conflicts: [], residue: [], ...extra };
}
