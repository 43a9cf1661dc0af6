/**
 * The text search's index (journal_search, migration 10) kept off the call's path (migration 15): a batch of
 * calls is committed without its rows in the index, which then takes in every row above its mark
 * (journal_search_mark: the index holds every row up to that seq, and no row above it) in one statement. That
 * happens once the journal has been still for a moment (the journal writer asks), in the writer's own
 * transaction once CATCH_UP_ROWS rows wait (so the tail stays short under a steady load), and before a text
 * search uses the index, so a search finds exactly what it found when every insert indexed its row. One
 * statement over thousands of rows costs the index well under what a row at a time did: FTS5 writes a segment
 * per transaction and merges segments as they pile up. The triggers that take a row's texts out of the index
 * when they change or the row is deleted do so only for rows under the mark.
 *
 * The mark and the rows move in the same transactions, so a crash, or a write rolled back, leaves them agreeing;
 * nothing here trusts a count kept in memory but to decide when to catch up.
 */
import type Database from 'better-sqlite3';

/** The rows left out of the index at most before a batch's own transaction takes them in. */
export const CATCH_UP_ROWS = 2048;

export class SearchIndex {
  private readonly s;
  private readonly inOwnTransaction: () => number;
  /** About how many rows wait (rows inserted since the last catch-up seen here): only a hint of when to catch up. */
  private waiting: number;

  constructor(private readonly db: Database.Database) {
    this.s = {
      mark: db.prepare('SELECT seq FROM journal_search_mark WHERE id = 1').pluck(),
      newest: db.prepare('SELECT MAX(seq) FROM journal_calls').pluck(),
      // the tool is a name id (names.ts): its text, as the index has always held it
      take: db.prepare(`INSERT INTO journal_search (rowid, tool, arguments, detail)
        SELECT c.seq, (SELECT name FROM names WHERE id = c.tool), c.arguments, c.detail FROM journal_calls c WHERE c.seq > ? AND c.seq <= ? ORDER BY c.seq`),
      setMark: db.prepare('UPDATE journal_search_mark SET seq = ? WHERE id = 1'),
    };
    this.inOwnTransaction = db.transaction(() => this.take());
    this.waiting = Math.max(0, this.newestSeq() - this.markSeq());
  }

  /** Rows were inserted (inside the writer's transaction): the index takes them in there once enough wait. */
  inserted(rows: number): void {
    this.waiting += rows;
    if (this.waiting >= CATCH_UP_ROWS) this.take();
  }

  /** Whether rows wait to be taken in (as the database says: two lookups of one row each). */
  get behind(): boolean {
    return this.newestSeq() > this.markSeq();
  }

  /** Take every waiting row into the index now (in the caller's transaction, or in one of its own); how many. */
  catchUp(): number {
    return this.db.inTransaction ? this.take() : this.inOwnTransaction();
  }

  private take(): number {
    const from = this.markSeq();
    const to = this.newestSeq();
    let taken = 0;
    if (to > from) {
      taken = this.s.take.run(from, to).changes;
      this.s.setMark.run(to);
    }
    this.waiting = 0;
    return taken;
  }

  private markSeq(): number {
    return Number(this.s.mark.get() ?? 0);
  }

  private newestSeq(): number {
    return Number(this.s.newest.get() ?? 0);
  }
}
