/** What `airlock inspect` reports about a server: findings, each with a severity a reader can sort by. */

export type Severity = 'info' | 'warning' | 'error' | 'critical';

/** Mildest first. */
export const SEVERITIES: readonly Severity[] = ['info', 'warning', 'error', 'critical'];

export interface Finding {
  severity: Severity;
  /** The tool (or resource URI / prompt name, prefixed) the finding is about; absent for the server as a whole. */
  tool?: string;
  message: string;
}

/** Collects findings in the order they were made. */
export class Findings {
  readonly list: Finding[] = [];

  add(severity: Severity, message: string, tool?: string): void {
    this.list.push(tool === undefined ? { severity, message } : { severity, tool, message });
  }
}

/** Count findings per severity (every severity present, zero or not). */
export function countBySeverity(findings: readonly Finding[]): Record<Severity, number> {
  const counts: Record<Severity, number> = { info: 0, warning: 0, error: 0, critical: 0 };
  for (const f of findings) counts[f.severity] += 1;
  return counts;
}
