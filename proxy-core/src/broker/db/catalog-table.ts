/**
 * Each server's catalog as last classified (`tools`: one row per tool, its class, reasons and declared
 * annotations) and the read-only claims withdrawn for a server's tools, with the evidence (`withdrawn_claims`).
 */
import type Database from 'better-sqlite3';
import type { Verdict } from '../../classify/classify.js';
import { parseJson, type Row } from './queries.js';

export class CatalogTable {
  private readonly s;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {
    this.s = {
      upsertTool: db.prepare(`INSERT INTO tools (server, name, class, reasons, declared, updated_at) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT(server, name) DO UPDATE SET class = excluded.class, reasons = excluded.reasons,
          declared = excluded.declared, updated_at = excluded.updated_at`),
      deleteTools: db.prepare('DELETE FROM tools WHERE server = ?'),
      listTools: db.prepare('SELECT * FROM tools WHERE server = ? ORDER BY name'),
      withdraw: db.prepare('INSERT OR IGNORE INTO withdrawn_claims (server, tool, evidence, at) VALUES (?, ?, ?, ?)'),
      listWithdrawn: db.prepare('SELECT tool, evidence FROM withdrawn_claims WHERE server = ?'),
    };
  }

  replace(server: string, verdicts: Iterable<Verdict>): void {
    const now = this.now();
    this.db.transaction(() => {
      this.s.deleteTools.run(server);
      for (const v of verdicts) {
        this.s.upsertTool.run(server, v.name, v.class, JSON.stringify(v.reasons), v.declared === undefined ? null : JSON.stringify(v.declared), now);
      }
    })();
  }

  list(server: string): { name: string; class: string; reasons: string[]; declared: unknown }[] {
    return (this.s.listTools.all(server) as Row[]).map((r) => ({
      name: String(r.name),
      class: String(r.class),
      reasons: parseJson(r.reasons, []) as string[],
      declared: parseJson(r.declared, undefined),
    }));
  }

  /** Record a withdrawn read-only claim; false when it was already withdrawn. */
  withdrawClaim(server: string, tool: string, evidence: string): boolean {
    return this.s.withdraw.run(server, tool, evidence, this.now()).changes > 0;
  }

  withdrawn(server: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const r of this.s.listWithdrawn.all(server) as { tool: string; evidence: string }[]) out[r.tool] = r.evidence;
    return out;
  }
}
