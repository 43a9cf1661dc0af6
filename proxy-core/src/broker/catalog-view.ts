/**
 * A server's catalog as a front end shows it: each tool with its class and reasons, the evidence that withdrew
 * its read-only claim, the rules that could apply to it, how it writes files and its pinned definition (with
 * what changed, when the server now lists another). Pure: the broker hands in what it holds.
 */
import { globMatch } from '../policy/glob.js';
import type { CatalogTool, FileTool, PinInfo, Rule } from '../protocol/api.js';

/** How the policy weighs matching rules (policy/decide.ts): the strictest wins, among equals the oldest. */
const WEIGHT: Record<Rule['action'], number> = { deny: 0, ask: 1, allow: 2 };

/**
 * The rules that could apply to one tool of one server (server and tool globs as the policy matches them; a
 * rule for one client or with argument conditions counts, it may apply to some calls), in the order the
 * policy weighs them. `rules` comes oldest first, and the sort keeps that order among equals.
 */
export function rulesForTool(rules: readonly Rule[], server: string, tool: string): Rule[] {
  return rules.filter((r) => globMatch(r.server, server) && globMatch(r.tool, tool)).sort((a, b) => WEIGHT[a.action] - WEIGHT[b.action]);
}

export interface CatalogParts {
  server: string;
  tools: readonly { name: string; class: string; reasons: string[]; declared: unknown }[];
  rules: readonly Rule[];
  /** Withdrawn read-only claims: tool -> evidence. */
  withdrawn: Readonly<Record<string, string>>;
  fileTool(tool: string): FileTool | undefined;
  /** The tool's pin, when it has one. */
  pin?(tool: string): PinInfo | undefined;
}

export function catalogView(p: CatalogParts): CatalogTool[] {
  return p.tools.map((t) => {
    const fileTool = p.fileTool(t.name);
    const pin = p.pin?.(t.name);
    return {
      ...t,
      ...(Object.hasOwn(p.withdrawn, t.name) ? { withdrawn: p.withdrawn[t.name]! } : {}),
      rules: rulesForTool(p.rules, p.server, t.name),
      ...(fileTool ? { fileTool } : {}),
      ...(pin ? { pin } : {}),
    };
  });
}
