/** The Servers and Tools pages' arithmetic: which servers run, which can be picked, findings in order. */
import type { ClientConfigs, ConfiguredServer, InspectReportResult, SessionInfo } from '@airlock/proxy-core/protocol/api';

/** The name Airlock (the journal, rules, sessions) knows a configured server by. */
export function airlockName(s: ConfiguredServer): string {
  return s.wrappedAs ?? s.name;
}

/** Whether a configured server has a live session (a wrapper connected under its name). */
export function isRunning(s: ConfiguredServer, sessions: readonly SessionInfo[]): boolean {
  const name = airlockName(s);
  return sessions.some((x) => x.server === name);
}

/** Every server name a catalog may exist for: live sessions first, then protected servers of every client. */
export function knownServers(sessions: readonly SessionInfo[], clients: readonly ClientConfigs[]): string[] {
  const names = new Set<string>();
  for (const s of sessions) names.add(s.server);
  for (const c of clients) for (const l of c.locations) for (const s of l.servers) if (s.protected) names.add(airlockName(s));
  return [...names].sort((a, b) => a.localeCompare(b));
}

/** The servers of a client that could be protected and are not. */
export function unprotectedCount(c: ClientConfigs): number {
  let n = 0;
  for (const l of c.locations) for (const s of l.servers) if (s.protectable && !s.protected) n++;
  return n;
}

const SEVERITY_ORDER = ['critical', 'high', 'error', 'danger', 'warning', 'warn', 'medium', 'low', 'notice', 'info'];

export type Finding = InspectReportResult['findings'][number];

/** Findings grouped by severity, the most severe first (unknown severities after the known ones). */
export function findingsBySeverity(findings: readonly Finding[]): { severity: string; findings: Finding[] }[] {
  const groups = new Map<string, Finding[]>();
  for (const f of findings) {
    const key = f.severity.toLowerCase();
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const rank = (s: string): number => {
    const i = SEVERITY_ORDER.indexOf(s);
    return i < 0 ? SEVERITY_ORDER.length : i;
  };
  return [...groups.entries()].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)).map(([severity, list]) => ({ severity, findings: list }));
}

/** How loud a severity is drawn. */
export function severityTone(severity: string): 'danger' | 'caution' | 'calm' {
  const s = severity.toLowerCase();
  if (['critical', 'high', 'error', 'danger'].includes(s)) return 'danger';
  if (['warning', 'warn', 'medium'].includes(s)) return 'caution';
  return 'calm';
}

/** An inspected catalog's tools grouped by class. */
export function toolsByClass(tools: InspectReportResult['tools']): { cls: string; names: string[] }[] {
  const groups = new Map<string, string[]>();
  for (const t of tools) groups.set(t.class, [...(groups.get(t.class) ?? []), t.name]);
  return [...groups.entries()].map(([cls, names]) => ({ cls, names }));
}

/** The command line a configured server runs (already redacted by the broker). */
export function commandLine(s: ConfiguredServer): string {
  if (s.url) return s.url;
  return [s.command ?? '', ...(s.args ?? [])].filter(Boolean).join(' ');
}

/** Annotations that are a flat object of scalars, as `name: value` pairs (JSON for the value); null otherwise. */
export function flatAnnotations(declared: unknown): [string, string][] | null {
  if (typeof declared !== 'object' || declared === null || Array.isArray(declared)) return null;
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(declared as Record<string, unknown>)) {
    if (v !== null && typeof v === 'object') return null;
    out.push([k, JSON.stringify(v) ?? String(v)]);
  }
  return out;
}
