/**
 * The journal's and the events' repeated strings (clients, servers, tools, classes, reasons, decisions,
 * outcomes, session ids, event kinds) stored once each in `names`, and referred to by their small integer id:
 * a row then carries one or two bytes for each instead of the text.
 *
 * Ids are cached both ways, but only once they are committed: a name inserted (or first read) inside a
 * transaction that is later rolled back must not be served afterwards, since its id could then be given to
 * another name. So within a transaction new ids live in a pending map that `commit` (after the outermost
 * transaction commits) moves into the cache and `discard` (after a rollback) forgets; a transaction the Store
 * does not own (the caller's) never fills the cache, and what it needs is looked up in the table.
 */
import type Database from 'better-sqlite3';

export class Names {
  private readonly ids = new Map<string, number>();
  private readonly names = new Map<number, string>();
  private readonly pending = new Map<string, number>();
  private readonly pendingNames = new Map<number, string>();
  private readonly s;

  constructor(private readonly db: Database.Database) {
    this.s = {
      find: db.prepare('SELECT id FROM names WHERE name = ?').pluck(),
      name: db.prepare('SELECT name FROM names WHERE id = ?').pluck(),
      insert: db.prepare('INSERT INTO names (name) VALUES (?)'),
      all: db.prepare('SELECT id, name FROM names').raw(),
    };
    for (const [id, name] of this.s.all.all() as [number, string][]) this.remember(name, id);
  }

  /** The id of `name`, added to the table when new (call inside the write's transaction). */
  id(name: string): number {
    const known = this.ids.get(name) ?? this.pending.get(name);
    if (known !== undefined) return known;
    let id = this.s.find.get(name) as number | undefined;
    if (id === undefined) id = Number(this.s.insert.run(name).lastInsertRowid);
    this.pending.set(name, id);
    this.pendingNames.set(id, name);
    return id;
  }

  /** `id(name)` for a value that may be absent. */
  maybe(name: string | null | undefined): number | null {
    return name === undefined || name === null ? null : this.id(name);
  }

  /** The id of `name` if it was ever stored (a query's filter: an unknown name matches nothing). */
  find(name: string): number | undefined {
    return this.ids.get(name) ?? this.pending.get(name) ?? (this.s.find.get(name) as number | undefined);
  }

  /** The text of an id read from a row; null for NULL (a column the row does not have). */
  name(id: unknown): string | null {
    if (id === null || id === undefined) return null;
    const n = Number(id);
    const known = this.names.get(n) ?? this.pendingNames.get(n);
    if (known !== undefined) return known;
    const found = this.s.name.get(n) as string | undefined;
    if (found === undefined) return null;
    if (!this.db.inTransaction) this.remember(found, n);
    return found;
  }

  /** The outermost transaction committed: what it added is now safe to cache. */
  commit(): void {
    for (const [name, id] of this.pending) this.remember(name, id);
    this.discard();
  }

  /** It was rolled back (or it belongs to a caller whose outcome is unknown): forget what it added. */
  discard(): void {
    this.pending.clear();
    this.pendingNames.clear();
  }

  /**
   * Run `run` (a better-sqlite3 transaction function) with the names it adds cached only when its transaction
   * is the outermost one and commits. Inside a caller's transaction, what it added is left to the table.
   */
  within<T>(run: () => T): T {
    if (this.db.inTransaction) {
      const before = new Set(this.pending.keys());
      try {
        return run();
      } finally {
        for (const [name, id] of [...this.pending]) {
          if (before.has(name)) continue;
          this.pending.delete(name);
          this.pendingNames.delete(id);
        }
      }
    }
    try {
      const out = run();
      this.commit();
      return out;
    } catch (err) {
      this.discard();
      throw err;
    }
  }

  private remember(name: string, id: number): void {
    this.ids.set(name, id);
    this.names.set(id, name);
  }
}
