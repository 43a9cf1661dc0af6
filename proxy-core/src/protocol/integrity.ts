/**
 * What the broker's start-up check of its database found (broker/db/integrity.ts), in words: the same lines for
 * `airlock status`, `airlock rules` and the UI.
 */
import type { Integrity } from './api.js';

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
