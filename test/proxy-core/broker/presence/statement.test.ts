// What a proof binds for an approval that grants: the grant's length and count are in the statement, so a
// proof for "once" cannot be replayed for a grant, nor one for 15 minutes for a week.
import { expect, test } from 'vitest';
import { statementOf } from '../../../../proxy-core/src/broker/presence/statement.js';
import type { Ticket } from '../../../../proxy-core/src/protocol/api.js';

const ticket = { id: 't1', server: 'notes', tool: 'write', argsSha256: 'a'.repeat(64) } as Ticket;
const lookup = { ticket: () => ticket, rule: () => null };

test('an approval with a grant says its time and its calls; without one, once or always', () => {
  expect(statementOf('approve', { id: 't1', remember: 'always', grant: { seconds: 900 } }, lookup)).toBe('Allow the held call t1: notes → write (arguments sha256 aaaaaaaaaaaaaaaa…), and a grant for 900 s (an allow rule)');
  expect(statementOf('approve', { id: 't1', remember: 'always', grant: { calls: 10 }, args: [{ arg: 'path', kind: 'path', glob: '/notes/**' }] }, lookup)).toBe(
    'Allow the held call t1: notes → write (arguments sha256 aaaaaaaaaaaaaaaa…), and a grant for the next 10 calls like it (an allow rule when path matches /notes/**)',
  );
  expect(statementOf('approve', { id: 't1', remember: 'always', grant: { until: Date.UTC(2026, 11, 1, 18) } }, lookup)).toContain('until 2026-12-01T18:00:00.000Z');
  expect(statementOf('approve', { id: 't1', remember: 'once' }, lookup)).toMatch(/, once$/);
  expect(statementOf('approve', { id: 't1', remember: 'always' }, lookup)).toMatch(/always from now on \(an allow rule\)$/);
});
