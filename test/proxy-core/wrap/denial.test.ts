import { describe, expect, test } from 'vitest';
import type { Verdict } from '../../../proxy-core/src/classify/classify.js';
import type { DecidedBy } from '../../../proxy-core/src/policy/decide.js';
import { DECISION_META_KEY, denialResult, RELAY_TO_USER, waitingResult } from '../../../proxy-core/src/wrap/denial.js';

const verdict: Verdict = { name: 'write_note', class: 'destructive', reasons: ['no annotations'], declared: undefined };

function text(r: Record<string, unknown>): string {
  return (r.content as { text: string }[]).map((c) => c.text).join('\n');
}

describe('what a refusal says, for clients that show the person little', () => {
  const cases: [DecidedBy, string, RegExp][] = [
    ['user', 'denied from the CLI: not on a Friday', /^The user denied "write_note" on fx in Airlock \(denied from the CLI: not on a Friday\)\./],
    ['rule', 'a deny rule matches', /^Airlock refused "write_note" on fx: a deny rule matches\./],
    ['timeout', 'nobody answered within 120 s', /^Airlock asked the user to approve "write_note" on fx, but nobody answered within 120 s, so it was refused\./],
    ['estop', 'E-Stop is on', /^Airlock refused "write_note" on fx: E-Stop is on\./],
    ['broker-down', 'not reachable', /^Airlock is not running, so "write_note" on fx was refused/],
    ['error', 'internal error: boom', /^Airlock refused "write_note" on fx: internal error: boom\./],
  ];
  test.each(cases)('%s: who refused and why come first, and the model is asked to pass it on', (decidedBy, reason, first) => {
    const r = denialResult({ decidedBy, reason, tool: 'write_note', server: 'fx', verdict, ticketId: 'ab12cd34' });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(first);
    expect(text(r).endsWith(RELAY_TO_USER)).toBe(true);
    expect((r._meta as Record<string, Record<string, unknown>>)[DECISION_META_KEY]).toMatchObject({ decision: 'deny', decidedBy, reason, ticketId: 'ab12cd34' });
  });

  test('"still waiting" names the ticket and how to approve it, and asks the model to pass it on', () => {
    const r = waitingResult({ tool: 'write_note', server: 'fx', verdict, ticketId: 'ab12cd34' });
    expect(text(r)).toMatch(/^"write_note" on fx is waiting for your approval in Airlock \(ticket ab12cd34\)/);
    expect(text(r)).toContain('`airlock approve ab12cd34`');
    expect(text(r).endsWith(RELAY_TO_USER)).toBe(true);
  });
});
