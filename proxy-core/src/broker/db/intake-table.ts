/**
 * The journal's intake (journal_intake, migration 15): each wrapper's batch as the broker received it, one row,
 * until it is moved into the journal proper (journal-table.ts) in bulk. Appending a batch is one row of bytes;
 * what makes a journal row cost (its indexes, its search entry, its event) is paid when the batches are moved,
 * many at a time (../journal-intake.ts says when).
 */
import type Database from 'better-sqlite3';

/** A batch as received: the session it came on, and its entries' JSON text (an array), unchecked. */
export interface IntakeBatch {
  session: string;
  client: string;
  server: string;
  /** When the broker received it (its entries' events carry this time). */
  at: number;
  /** The entries as a JSON array's text. */
  entries: Buffer;
  /** How many entries the sender says it holds (what the backlog is counted in; the array itself decides). */
  n: number;
}

export interface IntakeRow extends IntakeBatch {
  seq: number;
}

export class IntakeTable {
  private readonly s;
  private readonly appendAll: (batches: readonly IntakeBatch[]) => void;
  /** Entries held, as the senders counted them (read once at start, then kept). */
  private pending: number;

  constructor(db: Database.Database) {
    this.s = {
      insert: db.prepare('INSERT INTO journal_intake (session, client, server, at, entries, n) VALUES (?, ?, ?, ?, ?, ?)'),
      oldest: db.prepare('SELECT seq, session, client, server, at, entries, n FROM journal_intake WHERE seq > ? ORDER BY seq LIMIT 1'),
      deleteUpTo: db.prepare('DELETE FROM journal_intake WHERE seq <= ?'),
      pending: db.prepare('SELECT COALESCE(SUM(n), 0) FROM journal_intake').pluck(),
      newest: db.prepare('SELECT seq FROM journal_intake ORDER BY seq DESC LIMIT 1').pluck(),
      oldestSeq: db.prepare('SELECT seq FROM journal_intake ORDER BY seq LIMIT 1').pluck(),
    };
    this.appendAll = db.transaction((batches: readonly IntakeBatch[]) => {
      for (const b of batches) this.s.insert.run(b.session, b.client, b.server, b.at, b.entries, b.n);
    });
    this.pending = Number(this.s.pending.get());
  }

  /** Append batches in one transaction. */
  append(batches: readonly IntakeBatch[]): void {
    this.appendAll(batches);
    for (const b of batches) this.pending += b.n;
  }

  /** The newest batch's seq (0: none waits). */
  newestSeq(): number {
    return Number(this.s.newest.get() ?? 0);
  }

  /** The oldest batch's seq (0: none waits). */
  oldestSeq(): number {
    return Number(this.s.oldestSeq.get() ?? 0);
  }

  /** The oldest batch after `seq`, or undefined. */
  next(seq: number): IntakeRow | undefined {
    return this.s.oldest.get(seq) as IntakeRow | undefined;
  }

  /** Remove the batches up to `seq` (in the transaction that moved them into the journal). */
  removeUpTo(seq: number): void {
    this.s.deleteUpTo.run(seq);
  }

  /** That transaction committed: `n` entries (as their senders counted them) no longer wait. */
  moved(n: number): void {
    this.pending = Math.max(0, this.pending - n);
  }

  /** Entries waiting to be moved, as their senders counted them. */
  get size(): number {
    return this.pending;
  }
}
