/**
 * The user's allow, deny and ask rules, oldest first, and what happens to a stored rule that cannot be read or
 * carries no good seal (seals.ts): an allow rule without one is not applied (nothing proves a person made it); a
 * deny or an ask rule is, since it only makes Airlock stricter.
 */
import type Database from 'better-sqlite3';
import { z } from 'zod';
import { ArgConditionSchema } from '../../protocol/api.js';
import type { RowOrigin } from '../../protocol/presence.js';
import type { Rule, RuleAction } from '../../policy/rules.js';
import { parseJson, type Row } from './queries.js';
import { rowSealed, signRow } from './sealed-tables.js';
import { BY_AIRLOCK, readOrigin, type Sealer } from './seals.js';

/** A rule's columns as stored (what its seal covers). */
export function ruleRow(rule: Rule): Row {
  return {
    id: rule.id,
    action: rule.action,
    server: rule.server,
    tool: rule.tool,
    client: rule.client ?? null,
    created_at: rule.createdAt,
    note: rule.note ?? null,
    args: rule.args?.length ? JSON.stringify(rule.args) : null,
    undoable: rule.undoable === undefined ? null : rule.undoable ? 1 : 0,
    expires_at: rule.expiresAt ?? null,
    calls_left: rule.calls ?? null,
    calls_granted: rule.callsGranted ?? null,
  };
}

/** A whole number read from a column, or undefined when it holds none (NULL) — null when it holds something else. */
function count(v: unknown): number | null | undefined {
  if (v === null || v === undefined) return undefined;
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
}

export class RulesTable {
  private readonly s;

  /** Called after a rule is added or removed (the record of tightening rows follows them: tightening.ts). */
  changed: () => void = () => {};

  constructor(
    db: Database.Database,
    private readonly sealer: Sealer,
  ) {
    this.s = {
      list: db.prepare('SELECT * FROM rules ORDER BY created_at, id'),
      insert: db.prepare(`INSERT INTO rules (id, action, server, tool, client, created_at, note, args, undoable, expires_at, calls_left, calls_granted, via, seal)
        VALUES (@id, @action, @server, @tool, @client, @created_at, @note, @args, @undoable, @expires_at, @calls_left, @calls_granted, @via, @seal)
        ON CONFLICT(id) DO UPDATE SET action = excluded.action, server = excluded.server, tool = excluded.tool, client = excluded.client,
          created_at = excluded.created_at, note = excluded.note, args = excluded.args, undoable = excluded.undoable,
          expires_at = excluded.expires_at, calls_left = excluded.calls_left, calls_granted = excluded.calls_granted, via = excluded.via, seal = excluded.seal`),
      delete: db.prepare('DELETE FROM rules WHERE id = ?'),
      get: db.prepare('SELECT * FROM rules WHERE id = ?'),
      spend: db.prepare('UPDATE rules SET calls_left = ?, via = ?, seal = ? WHERE id = ? AND calls_left = ?'),
    };
  }

  /** The rules in force: every stored rule that can be read, but an allow rule without a good seal. */
  list(): Rule[] {
    return this.read((r) => r.action !== 'allow' || rowSealed(this.sealer, 'rules', r));
  }

  /** Every stored row as it is, with its seal judged (the start-up check, `airlock rules`). */
  rows(): { row: Row; sealed: boolean }[] {
    return (this.s.list.all() as Row[]).map((row) => ({ row, sealed: rowSealed(this.sealer, 'rules', row) }));
  }

  /** Rules as stored, without judging their seals (what `airlock rules` lists as ignored, too). */
  read(keep: (row: Row) => boolean = () => true): Rule[] {
    return (this.s.list.all() as Row[]).filter(keep).map((r) => {
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
      // a grant's end or count that cannot be read: the grant is dropped (it would otherwise never end)
      const expires = count(r.expires_at);
      const calls = count(r.calls_left);
      const granted = count(r.calls_granted);
      if (expires === null || calls === null || granted === null) return null;
      if (expires !== undefined) rule.expiresAt = expires;
      if (calls !== undefined) rule.calls = calls;
      if (granted) rule.callsGranted = granted;
      return rule;
    }).filter((r): r is Rule => r !== null);
  }

  /** Store a rule sealed with the origin of the decision that made it (a rule of the same id is replaced). */
  add(rule: Rule, origin: RowOrigin = BY_AIRLOCK): void {
    this.put(ruleRow(rule), origin);
    this.changed();
  }

  /** Store a row as given, sealed (a tightening rule put back from its record: tightening.ts). */
  put(row: Row, origin: RowOrigin): void {
    // a row recorded before grants has no grant columns: it is no grant
    const full = { expires_at: null, calls_left: null, calls_granted: null, ...row };
    this.s.insert.run({ ...full, ...signRow(this.sealer, 'rules', full, origin) });
  }

  /**
   * Spend one call of a counted grant: its row's count goes down by one and is sealed again with the origin it
   * was made with. Null when it has none left, is not counted, or carries no good seal. One statement on one
   * connection, so two wrappers asking at once cannot both spend the last call.
   */
  spend(id: string): { left: number } | null {
    const row = this.s.get.get(id) as Row | undefined;
    if (!row || row.action !== 'allow' || !rowSealed(this.sealer, 'rules', row)) return null;
    const left = count(row.calls_left);
    if (left === undefined || left === null || left < 1) return null;
    const next = { ...row, calls_left: left - 1 };
    const origin = readOrigin(row.via);
    if (!origin) return null;
    const { via, seal } = signRow(this.sealer, 'rules', next, origin);
    if (this.s.spend.run(left - 1, via, seal, id, left).changes !== 1) return null;
    return { left: left - 1 };
  }

  remove(id: string): boolean {
    const gone = this.s.delete.run(id).changes > 0;
    if (gone) this.changed();
    return gone;
  }
}
