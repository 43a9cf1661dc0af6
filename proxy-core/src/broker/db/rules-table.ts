/** The user's allow, deny and ask rules, oldest first, and what happens to a stored rule that cannot be read. */
import type Database from 'better-sqlite3';
import { z } from 'zod';
import { ArgConditionSchema } from '../../protocol/api.js';
import type { Rule, RuleAction } from '../../policy/rules.js';
import { parseJson, type Row } from './queries.js';

export class RulesTable {
  private readonly s;

  constructor(db: Database.Database) {
    this.s = {
      list: db.prepare('SELECT * FROM rules ORDER BY created_at, id'),
      insert: db.prepare('INSERT INTO rules (id, action, server, tool, client, created_at, note, args, undoable) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'),
      delete: db.prepare('DELETE FROM rules WHERE id = ?'),
    };
  }

  list(): Rule[] {
    return (this.s.list.all() as Row[]).map((r) => {
      const rule: Rule = {
        id: String(r.id),
        action: r.action as RuleAction,
        server: String(r.server),
        tool: String(r.tool),
        createdAt: Number(r.created_at),
      };
      if (r.client !== null && r.client !== undefined) rule.client = String(r.client);
      if (r.note !== null && r.note !== undefined) rule.note = String(r.note);
      if (r.args !== null && r.args !== undefined) {
        const args = z.array(ArgConditionSchema).safeParse(parseJson(r.args));
        // conditions that cannot be read: an allow is dropped (nothing proves it applies); a deny or an ask
        // is kept without them, which only makes it apply more widely
        if (args.success) rule.args = args.data;
        else if (rule.action === 'allow') return null;
      }
      if (r.undoable === 0 || r.undoable === 1) rule.undoable = r.undoable === 1;
      // any other value cannot be read: an allow is dropped, a deny or an ask applies to every call
      else if (r.undoable !== null && r.undoable !== undefined && rule.action === 'allow') return null;
      return rule;
    }).filter((r): r is Rule => r !== null);
  }

  add(rule: Rule): void {
    const undoable = rule.undoable === undefined ? null : rule.undoable ? 1 : 0;
    this.s.insert.run(rule.id, rule.action, rule.server, rule.tool, rule.client ?? null, rule.createdAt, rule.note ?? null, rule.args?.length ? JSON.stringify(rule.args) : null, undoable);
  }

  remove(id: string): boolean {
    return this.s.delete.run(id).changes > 0;
  }
}
