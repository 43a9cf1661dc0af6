/**
 * Grants through the real CLI, a daemon and wrapped fixture servers (whose logs are the ground truth of what
 * ran): a time-boxed grant lets calls through in the wrapper with no ticket and stops when its time is up; a
 * grant of 3 calls allows exactly 3 when two wrappers race for them, and the rest are held for a person.
 */
import { afterEach, expect, test } from 'vitest';
import { cleanup, cli, cliJson, decisionOf, executedCalls, finishedCalls, waitFor, waitForSessions, waitForTicket } from '../helpers/airlock.js';
import { startAirlock, wrapFixture } from '../helpers/e2e.js';

afterEach(cleanup);

interface RuleRow {
  id: string;
  action: string;
  expiresAt?: number;
  calls?: number;
}

test('a grant for a time runs calls in the wrapper without a ticket, and ends at its second', async () => {
  const { home } = await startAirlock();
  const { fx, w } = await wrapFixture(home);
  await waitForSessions(home, 1);
  const first = w.client.callTool({ name: 'write_note', arguments: { text: 'first' } });
  const ticket = await waitForTicket(home, 'write_note');
  const approved = await cli(home, ['approve', ticket.id, '--for', '4s']);
  expect(approved.stdout).toContain('for 4s');
  expect((await first).isError).toBeFalsy();
  const [grant] = (await cliJson<RuleRow[]>(home, ['rules', '--json'])).filter((r) => r.expiresAt !== undefined);
  expect(grant).toMatchObject({ action: 'allow' });

  // inside the grant: no ticket, decided by the rule in the wrapper
  let inside = 0;
  while (Date.now() < grant!.expiresAt! - 1500) {
    const r = await w.client.callTool({ name: 'write_note', arguments: { text: `in-${inside}` } });
    expect(r.isError).toBeFalsy();
    inside++;
    if (inside >= 5) break;
  }
  expect(inside).toBeGreaterThan(0);
  const journaled = await finishedCalls(home, 'write_note', { count: inside, keep: (x) => x.arguments.includes('"in-') });
  for (const x of journaled) expect(x).toMatchObject({ decision: 'allow', decidedBy: 'rule', detail: expect.stringMatching(/^allowed by your 4-second grant r\w+, \d+ seconds? left$/) });
  for (const x of journaled) expect(x.ticketId).toBeUndefined();
  expect((await cliJson<unknown[]>(home, ['pending', '--json']))).toEqual([]);

  // at its end: the next call is held, and did not run
  await waitFor(() => Date.now() >= grant!.expiresAt!, 6000, 'the grant to end');
  const after = w.client.callTool({ name: 'write_note', arguments: { text: 'after' } });
  const held = await waitForTicket(home, 'write_note');
  await cli(home, ['deny', held.id]);
  expect(decisionOf(await after)).toMatchObject({ decision: 'deny', decidedBy: 'user' });
  const ran = executedCalls(fx.log, 'write_note').map((c) => (c.arguments as { text: string }).text);
  expect(ran).toEqual(['first', ...Array.from({ length: inside }, (_, i) => `in-${i}`)]);
  // the broker removed it at its end too
  await waitFor(async () => (await cliJson<RuleRow[]>(home, ['rules', '--json'])).every((r) => r.id !== grant!.id), 5000, 'the grant to be removed');
});

test('a grant of 3 calls allows exactly 3 across two wrappers racing; the others are held', async () => {
  const { home } = await startAirlock();
  const a = await wrapFixture(home);
  const b = await wrapFixture(home);
  await waitForSessions(home, 2);
  const first = a.w.client.callTool({ name: 'write_note', arguments: { text: 'approved' } });
  const ticket = await waitForTicket(home, 'write_note');
  await cli(home, ['approve', ticket.id, '--calls', '3']);
  await first;

  const calls = [a, b, a, b, a, b].map(({ w }, i) => w.client.callTool({ name: 'write_note', arguments: { text: `race-${i}` } }));
  // three run; three are held as tickets
  await waitFor(async () => (await cliJson<unknown[]>(home, ['pending', '--json'])).length === 3, 10_000, 'three held calls');
  for (const t of await cliJson<{ id: string }[]>(home, ['pending', '--json'])) await cli(home, ['deny', t.id]);
  const results = await Promise.all(calls);
  expect(results.filter((r) => !r.isError)).toHaveLength(3);
  expect(results.filter((r) => decisionOf(r)?.decision === 'deny')).toHaveLength(3);
  const journaled = await finishedCalls(home, 'write_note', { count: 3, keep: (x) => x.arguments.includes('"race-') && x.decision === 'allow' });
  for (const x of journaled) expect(x).toMatchObject({ decidedBy: 'rule', detail: expect.stringMatching(/grant of 3 calls/) });
  const ran = [...executedCalls(a.fx.log, 'write_note'), ...executedCalls(b.fx.log, 'write_note')].map((c) => (c.arguments as { text: string }).text);
  expect(ran.filter((t) => t.startsWith('race-'))).toHaveLength(3);
  expect(ran).toContain('approved');
  // its last call spent, the grant is gone
  expect((await cliJson<RuleRow[]>(home, ['rules', '--json'])).filter((r) => r.calls !== undefined)).toEqual([]);
});
