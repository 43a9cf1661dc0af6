/** A journal record for tests: an allowed, changing call of `write` on `fs` from `cursor`, with what a test says instead. */
import type { CallRecord } from '../../proxy-core/src/protocol/api.js';

export function callRecord(over: Partial<CallRecord> = {}): CallRecord {
  return {
    id: 'c1',
    client: 'cursor',
    server: 'fs',
    tool: 'write',
    arguments: '{}',
    argsTruncated: false,
    class: 'mutating',
    reasons: [],
    decision: 'allow',
    decidedBy: 'rule',
    detail: '',
    outcome: 'pending',
    startedAt: 1,
    ...over,
  };
}
