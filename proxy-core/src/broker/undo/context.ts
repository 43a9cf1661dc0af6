/**
 * What the parts of undo share: the context they work in (the broker's port, the undo records and snapshot
 * blobs), the ids an undo gets, and the report of an undo that did not run. Taking snapshots (prepare.ts),
 * recording what a call left (finish.ts) and the two ways of running an undo (run.ts: files put back from
 * their snapshots; inverse.ts: a declared inverse called through a wrapper) all import it, not each other.
 */
import { randomBytes } from 'node:crypto';
import type { UndoReport } from '../../protocol/undo-api.js';
import type { UndoPort } from './port.js';
import type { PathEntry, UndoRecord, UndoRecords } from './records.js';
import type { SnapshotBlobs, SnapshotCaps } from './snapshots.js';

/** The journal ids of undos start with this (never a wrapper's: theirs are random base64url then a counter). */
export const UNDO_ID_PREFIX = 'undo-';

/** An inverse on its way: what a ticket the wrapper asks for it is marked with. */
export interface RunningInverse {
  sessionId: string;
  inverse: string;
  callId: string;
  tool: string;
}

export interface UndoContext {
  /** What undo needs of the broker. */
  port: UndoPort;
  records: UndoRecords;
  blobs: SnapshotBlobs;
  /** The snapshot caps now (settings a person may change at any time). */
  caps(): SnapshotCaps;
  /** Keep snapshots under their cap (the records in `keep` are not pruned). */
  prune(keep: ReadonlySet<string>): void;
  /** The bytes a path had before the call: its snapshot (or the old file still held by a link). */
  readBefore(entry: PathEntry): Promise<Buffer>;
  /** The command a session was started with (the sessions table), or null. */
  sessionCommand(sessionId: string): string[] | null;
  /** Inverses on their way, by undo id: a ticket one asks for is marked as an undo. */
  running: Map<string, RunningInverse>;
}

export function newUndoId(): string {
  return `${UNDO_ID_PREFIX}${randomBytes(6).toString('hex')}`;
}

/** A report of an undo that did not run (nothing was touched). */
export function refused(rec: Pick<UndoRecord, 'callId'> & { kind: UndoRecord['kind'] | null }, summary: string, extra: Partial<UndoReport> = {}): UndoReport {
  return { callId: rec.callId, ok: false, kind: rec.kind, summary, restored: [], conflicts: [], residue: [], ...extra };
}
