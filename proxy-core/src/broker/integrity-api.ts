/**
 * What the database's start-up check found (db/integrity.ts), told once as events, and the front ends' view of
 * it: `status` carries it; `airlock rules` marks the rule rows it ignores.
 */
import type { Integrity } from '../protocol/api.js';
import type { RecordEvent } from './events.js';

export function reportIntegrity(found: Integrity | null, record: RecordEvent): void {
  if (!found) return;
  if (found.unsealed.length) record('unsealed-rows', null, null, { rows: found.unsealed });
  if (found.restored.length || found.manifestMissing) record('tightening-restored', null, null, { rows: found.restored, ...(found.manifestMissing ? { manifestMissing: true as const } : {}) });
  for (const gap of found.gaps) record(gap.log === 'journal' ? 'journal-gap' : 'events-gap', null, null, gap);
}

/** A line per finding, for `airlock status` and a log. */
export function integrityLines(found: Integrity): string[] {
  const lines: string[] = [];
  for (const row of found.unsealed) {
    lines.push(
      row.applied
        ? `a row appeared in the database without your approval: applied, it only tightens (${row.what})`
        : `a ${row.table === 'rules' ? 'rule' : row.table === 'settings' ? 'setting' : 'row'} appeared in the database without your approval: ignored (${row.what})`,
    );
  }
  for (const what of found.restored) lines.push(`a tightening row had gone from the database: put back (${what})`);
  if (found.manifestMissing) lines.push('the sealed record of your deny rules and strict settings was gone: removals before this start cannot be told');
  for (const g of found.gaps) {
    const parts = [...(g.missing ? [`${g.missing} deleted between seq ${g.from} and ${g.to}`] : []), ...(g.backwards ? [`${g.backwards} newest gone (the head went back)`] : [])];
    lines.push(`${g.log === 'journal' ? 'journal' : 'event'} rows were deleted by something other than retention: ${parts.join(', ')}`);
  }
  return lines;
}
