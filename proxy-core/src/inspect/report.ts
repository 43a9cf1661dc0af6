/** The inspection report: its JSON shape (`--json`) and its terminal rendering. */
import { CLASS_ORDER, type ToolClass } from '../classify/classify.js';
import type { PromptReport, ResourceReport } from './listing.js';
import { countBySeverity, SEVERITIES, type Finding, type Severity } from './findings.js';
import { printable } from './poisoning.js';
import type { ExecutedTool, SkippedTool } from './probe.js';

export interface ToolReport {
  name: string;
  class: ToolClass;
  reasons: string[];
  /** The annotations exactly as declared (absent when the tool declares none). */
  annotations?: unknown;
}

export interface InspectReport {
  server: { name: string; version: string; protocolVersion: string };
  /** What the ExecutionPolicy permitted, in words. */
  policy: string;
  tools: ToolReport[];
  findings: Finding[];
  executed: ExecutedTool[];
  skipped: SkippedTool[];
  resources: ResourceReport[];
  resourceTemplates: number;
  prompts: PromptReport[];
  summary: {
    toolsByClass: Partial<Record<ToolClass, number>>;
    findingsBySeverity: Record<Severity, number>;
    executed: number;
    skipped: number;
  };
}

/** Fill in the summary from the rest of the report. */
export function summarize(report: Omit<InspectReport, 'summary'>): InspectReport {
  const toolsByClass: Partial<Record<ToolClass, number>> = {};
  for (const t of report.tools) toolsByClass[t.class] = (toolsByClass[t.class] ?? 0) + 1;
  // Worst first, so the report reads from what needs attention.
  const order = (s: Severity): number => SEVERITIES.length - SEVERITIES.indexOf(s);
  const findings = [...report.findings].sort((a, b) => order(a.severity) - order(b.severity));
  return {
    ...report,
    findings,
    summary: {
      toolsByClass,
      findingsBySeverity: countBySeverity(report.findings),
      executed: report.executed.length,
      skipped: report.skipped.length,
    },
  };
}

function classCounts(counts: Partial<Record<ToolClass, number>>): string {
  const parts = CLASS_ORDER.filter((c) => (counts[c] ?? 0) > 0).map((c) => `${counts[c]} ${c}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

function severityCounts(counts: Record<Severity, number>): string {
  return [...SEVERITIES].reverse().map((s) => `${counts[s]} ${s}`).join(', ');
}

function table(rows: string[][], indent = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => indent + row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd());
}

/** Render the report for a terminal. Every server-supplied string goes through `printable`. */
export function renderText(report: InspectReport): string {
  const s = report.server;
  const out: string[] = [];
  const title = `${printable(s.name || '(unnamed server)', 80)}${s.version ? ` ${printable(s.version, 40)}` : ''}`;
  out.push(`Server   ${title}${s.protocolVersion ? ` (protocol ${printable(s.protocolVersion, 40)})` : ''}`);
  out.push(`Policy   ${report.policy}`);
  out.push('');

  const executed = new Map(report.executed.map((e) => [e.tool, e]));
  const skipped = new Map(report.skipped.map((e) => [e.tool, e]));
  out.push(`Tools (${report.tools.length})`);
  const rows = report.tools.map((t) => {
    const run = executed.get(t.name);
    const skip = skipped.get(t.name);
    let outcome = '';
    if (run) {
      const failed = run.checks.filter((c) => !c.ok).map((c) => c.name);
      const latency = run.latencyMsP50 === null ? 'call failed' : `p50 ${run.latencyMsP50} ms`;
      outcome = `executed  ${latency}; ${failed.length === 0 ? 'all checks passed' : `failed: ${failed.join(', ')}`}`;
    } else if (skip) {
      outcome = `skipped   ${printable(skip.reason, 120)}`;
    }
    return [printable(t.name, 48), t.class, outcome];
  });
  out.push(...(rows.length > 0 ? table(rows) : ['  (none)']));
  out.push('');

  if (report.resources.length > 0 || report.resourceTemplates > 0) {
    const read = report.resources.filter((r) => r.ok).length;
    out.push(`Resources (${report.resources.length} read attempted, ${read} ok; ${report.resourceTemplates} template(s))`);
    out.push(...table(report.resources.map((r) => [printable(r.uri, 60), r.ok ? `${r.bytes ?? 0} bytes` : `failed: ${printable(r.error ?? '', 100)}`])));
    out.push('');
  }
  if (report.prompts.length > 0) {
    out.push(`Prompts (${report.prompts.length})`);
    out.push(...table(report.prompts.map((p) => [printable(p.name, 48), p.ok ? `${p.messages ?? 0} message(s)` : `failed: ${printable(p.error ?? '', 100)}`])));
    out.push('');
  }

  out.push(`Findings (${report.findings.length})`);
  const findingRows = groupedFindings(report.findings).map((g) => [
    g.severity.toUpperCase(),
    g.tools.length > GROUP_AT ? `${g.tools.length} tools` : g.tools[0] === undefined ? '-' : printable(g.tools[0], 48),
    printable(g.tools.length > GROUP_AT ? `${g.message} (${g.tools.map((t) => t ?? '-').join(', ')})` : g.message, 400),
  ]);
  out.push(...(findingRows.length > 0 ? table(findingRows) : ['  (none)']));
  out.push('');

  const sum = report.summary;
  out.push('Summary');
  out.push(`  tools     ${report.tools.length} (${classCounts(sum.toolsByClass)})`);
  out.push(`  findings  ${report.findings.length} (${severityCounts(sum.findingsBySeverity)})`);
  out.push(`  executed  ${sum.executed}, skipped ${sum.skipped} (read-only is what the server declares; Airlock cannot verify it)`);
  return out.join('\n') + '\n';
}

/** The same finding on more tools than this reads as one line in the terminal (the JSON keeps every one). */
const GROUP_AT = 3;

function groupedFindings(findings: readonly { severity: string; tool?: string; message: string }[]) {
  const groups = new Map<string, { severity: string; message: string; tools: (string | undefined)[] }>();
  for (const f of findings) {
    const key = `${f.severity}\u0000${f.message}`;
    const g = groups.get(key) ?? { severity: f.severity, message: f.message, tools: [] };
    g.tools.push(f.tool);
    groups.set(key, g);
  }
  // a group small enough to show row by row goes back to one row per tool
  return [...groups.values()].flatMap((g) => (g.tools.length > GROUP_AT ? [g] : g.tools.map((t) => ({ ...g, tools: [t] }))));
}
