/**
 * The search index's part of a call with long arguments, indexed later (migration 17). Trigram indexing costs with
 * the distinct trigrams a text holds: 64 KB of arguments (a file a call wrote) took 3 to 4 ms of the broker's time
 * for source code or prose, and some 30 ms for base64, so that one wrapper's batch of such calls (about 1 MB) held
 * the broker for up to half a second in the transaction that filed it. When a call is filed, only the first
 * SEARCH_HEAD_CHARS characters of its arguments are indexed and its seq is listed in journal_search_rest; the rest
 * is indexed later (`complete`), a bounded number of characters a transaction, when the calls give the broker a
 * quiet moment or too many wait (journal-writer.ts).
 *
 * A search stays exact meanwhile: the rows listed are candidates of every text search as well as what the index
 * proposes, and the substring match decides on them as on the others (queries.ts). The triggers that take a row
 * out of the index say what it holds by the list (FTS5's 'delete' needs the very values indexed).
 */
import type Database from 'better-sqlite3';

/**
 * The characters of a call's arguments the search index takes when the call is filed: the triggers of migration 17
 * hold this number, so it never changes.
 */
export const SEARCH_HEAD_CHARS = 4096;

/** What the index holds of a row's arguments: the head while the row is listed. */
const indexedArgs = (row: 'OLD' | 'NEW') =>
  `CASE WHEN EXISTS (SELECT 1 FROM journal_search_rest WHERE seq = ${row}.seq) THEN substr(${row}.arguments, 1, ${SEARCH_HEAD_CHARS}) ELSE ${row}.arguments END`;
const toolName = (row: 'OLD' | 'NEW') => `(SELECT name FROM names WHERE id = ${row}.tool)`;

/**
 * Migration 17 (migrations.ts): the list, and the triggers that take a row's texts out of the index when its detail
 * changes or it is deleted (migration 10's) made to give FTS5 what the index holds for it. Rows filed before it are
 * indexed whole and not listed.
 */
export const SEARCH_REST_MIGRATION = `
  CREATE TABLE journal_search_rest (seq INTEGER PRIMARY KEY);
  DROP TRIGGER journal_search_update;
  DROP TRIGGER journal_search_delete;
  CREATE TRIGGER journal_search_update AFTER UPDATE OF tool, arguments, detail ON journal_calls
    WHEN OLD.tool IS NOT NEW.tool OR OLD.arguments IS NOT NEW.arguments OR OLD.detail IS NOT NEW.detail
  BEGIN
    INSERT INTO journal_search (journal_search, rowid, tool, arguments, detail) VALUES ('delete', OLD.seq, ${toolName('OLD')}, ${indexedArgs('OLD')}, OLD.detail);
    INSERT INTO journal_search (rowid, tool, arguments, detail) VALUES (NEW.seq, ${toolName('NEW')}, ${indexedArgs('NEW')}, NEW.detail);
  END;
  CREATE TRIGGER journal_search_delete AFTER DELETE ON journal_calls BEGIN
    INSERT INTO journal_search (journal_search, rowid, tool, arguments, detail) VALUES ('delete', OLD.seq, ${toolName('OLD')}, ${indexedArgs('OLD')}, OLD.detail);
    DELETE FROM journal_search_rest WHERE seq = OLD.seq;
  END;
`;

export class SearchRest {
  private readonly s;
  private readonly completeTx: (maxChars: number) => number;
  /** FTS5's 'delete' of a head, prepared at its first use (a table that is not FTS5's cannot take it). */
  private dropHeadStmt: Database.Statement | undefined;

  constructor(private readonly db: Database.Database) {
    this.s = {
      // the head is cut by SQLite, as the triggers cut it: in characters (code points), not UTF-16 units
      insertHead: db.prepare(`INSERT INTO journal_search (rowid, tool, arguments, detail) VALUES (?, ?, substr(?, 1, ${SEARCH_HEAD_CHARS}), ?)`),
      list: db.prepare(`INSERT INTO journal_search_rest (seq) SELECT ? WHERE length(?) > ${SEARCH_HEAD_CHARS}`),
      waiting: db.prepare('SELECT COUNT(*) FROM journal_search_rest').pluck(),
      oldest: db.prepare(
        `SELECT r.seq, (SELECT name FROM names WHERE id = c.tool) AS tool, c.arguments, c.detail
         FROM journal_search_rest r LEFT JOIN journal_calls c ON c.seq = r.seq ORDER BY r.seq LIMIT ?`,
      ),
      insertWhole: db.prepare('INSERT INTO journal_search (rowid, tool, arguments, detail) VALUES (?, ?, ?, ?)'),
      unlist: db.prepare('DELETE FROM journal_search_rest WHERE seq = ?'),
    };
    this.completeTx = db.transaction((maxChars: number) => this.completeRows(maxChars));
  }

  /**
   * A call's row just inserted (inside the caller's transaction): its search entry, whole when its arguments are
   * short, its head and a place on the list otherwise.
   */
  add(seq: number | bigint, tool: string, args: string, detail: string): void {
    // a string of at most SEARCH_HEAD_CHARS UTF-16 units has no more characters than that: indexed whole
    if (args.length <= SEARCH_HEAD_CHARS) {
      this.s.insertWhole.run(seq, tool, args, detail);
      return;
    }
    this.s.insertHead.run(seq, tool, args, detail);
    this.s.list.run(seq, args);
  }

  /** Rows whose arguments are indexed in part. */
  waiting(): number {
    return Number(this.s.waiting.get());
  }

  /**
   * Index the rest of the oldest listed rows, in one transaction, at most `maxChars` characters of arguments (UTF-16
   * units) but one row at least. Returns the rows done. A listed row no longer in the journal is taken off the list.
   */
  complete(maxChars: number): number {
    return this.completeTx(maxChars);
  }

  private completeRows(maxChars: number): number {
    const rows = this.s.oldest.all(16) as { seq: number; tool: string | null; arguments: string | null; detail: string | null }[];
    let chars = 0;
    let done = 0;
    for (const r of rows) {
      if (done > 0 && chars + (r.arguments?.length ?? 0) > maxChars) break;
      if (r.arguments !== null) {
        this.dropHeadStmt ??= this.db.prepare(
          `INSERT INTO journal_search (journal_search, rowid, tool, arguments, detail) VALUES ('delete', ?, ?, substr(?, 1, ${SEARCH_HEAD_CHARS}), ?)`,
        );
        this.dropHeadStmt.run(r.seq, r.tool, r.arguments, r.detail);
        this.s.insertWhole.run(r.seq, r.tool, r.arguments, r.detail);
        chars += r.arguments.length;
      }
      this.s.unlist.run(r.seq);
      done++;
    }
    return done;
  }
}
