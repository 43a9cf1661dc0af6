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
