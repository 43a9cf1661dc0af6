/** Statements whose text is built at run time (a query's filters, a sealed table's name), prepared once each (a handful in practice). */
import type Database from 'better-sqlite3';

export class StatementCache {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  get(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }
}
