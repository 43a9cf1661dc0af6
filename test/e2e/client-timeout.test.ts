/**
 * A held call and the client's own timeout: the MCP SDK gives up on a request after 60 s, a ticket waits
 * 120 s. Without a progressToken the wrapper answers "still waiting" before the client gives up, keeps the
 * ticket open, and the same call made again takes the user's decision. The fixture server's log is the
 * ground truth of what ran.
 */
import { afterEach, describe, expect, test } from 'vitest';
import {
  cleanup,
  cli,
  cliJson,
  connectWrapped,
  decisionOf,
  executedCalls,
  fixture,
  startDaemon,
  tempDir,
  textOf,
  type Ticket,
  waitFor,
  waitForTicket,
} from '../helpers/airlock.js';

afterEach(cleanup);

interface HistoryRow {
  tool: string;
  decision: string;
  decidedBy: string;
  outcome: string;
  detail: string;
  ticketId?: string;
}

describe('a call held past the hold time, without a progressToken', () => {
  test('is answered "still waiting"; the ticket stays open; the same call made again after the approval runs once', async () => {
    const home = tempDir();
    await startDaemon(home);
    const fx = fixture(home);
    const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: { ...fx.env, AIRLOCK_HOLD_ANSWER_MS: '300' } });

    const first = await w.client.callTool({ name: 'write_note', arguments: { text: 'held' } });
    expect(first.isError).toBe(true);
    const ticket = await waitForTicket(home, 'write_note');
    expect(textOf(first)).toContain(`waiting for your approval in Airlock (ticket ${ticket.id}) — call the tool again with the same arguments to pick up the decision`);
    expect(decisionOf(first)).toMatchObject({ decidedBy: 'waiting', state: 'waiting', ticketId: ticket.id });
    expect(executedCalls(fx.log)).toHaveLength(0);

    // made again before anyone answered: it waits on the same ticket (and is answered "still waiting" again)
    const again = await w.client.callTool({ name: 'write_note', arguments: { text: 'held' } });
    expect(decisionOf(again)).toMatchObject({ decidedBy: 'waiting', ticketId: ticket.id });
    expect((await cliJson<Ticket[]>(home, ['pending'])).map((t) => t.id)).toEqual([ticket.id]);

    expect((await cli(home, ['approve', ticket.id])).code).toBe(0);
    const ran = await w.client.callTool({ name: 'write_note', arguments: { text: 'held' } });
    expect(ran.isError).toBeFalsy();
    expect(textOf(ran)).toContain('held');
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);

    // the approval was used once: the same call made a fourth time opens a new ticket
    const fourth = await w.client.callTool({ name: 'write_note', arguments: { text: 'held' } });
    const next = await waitForTicket(home, 'write_note');
    expect(next.id).not.toBe(ticket.id);
    expect(decisionOf(fourth)).toMatchObject({ decidedBy: 'waiting', ticketId: next.id });
    await cli(home, ['deny', next.id]);
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);

    await waitFor(async () => (await cliJson<HistoryRow[]>(home, ['history'])).length === 4, 5000, 'four journal entries');
    const history = (await cliJson<HistoryRow[]>(home, ['history'])).reverse();
    expect(history.map((h) => [h.decidedBy, h.outcome, h.ticketId])).toEqual([
      ['timeout', 'not-run', ticket.id],
      ['timeout', 'not-run', ticket.id],
      ['user', 'ok', ticket.id],
      ['timeout', 'not-run', next.id],
    ]);
    expect(history[0]!.detail).toMatch(/answered early while waiting for approval/);
  });

  test('denied after the early answer: the same call made again gets the refusal, and nothing runs', async () => {
    const home = tempDir();
    await startDaemon(home);
    const fx = fixture(home);
    const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: { ...fx.env, AIRLOCK_HOLD_ANSWER_MS: '300' } });
    const first = await w.client.callTool({ name: 'delete_all', arguments: {} });
    expect(decisionOf(first)).toMatchObject({ decidedBy: 'waiting' });
    const ticket = await waitForTicket(home, 'delete_all');
    await cli(home, ['deny', ticket.id, '--reason', 'not today']);
    const again = await w.client.callTool({ name: 'delete_all', arguments: {} });
    expect(decisionOf(again)).toMatchObject({ decision: 'deny', decidedBy: 'user', ticketId: ticket.id });
    expect(textOf(again)).toMatch(/not today/);
    expect(executedCalls(fx.log)).toHaveLength(0);
  });

  test('with a progressToken the call stays held past the hold time, and runs when approved', async () => {
    const home = tempDir();
    await startDaemon(home);
    const fx = fixture(home);
    const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: { ...fx.env, AIRLOCK_HOLD_ANSWER_MS: '300', AIRLOCK_PROGRESS_MS: '100' } });
    const progress: number[] = [];
    const call = w.client.callTool({ name: 'write_note', arguments: { text: 'p' } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    const ticket = await waitForTicket(home, 'write_note');
    await new Promise((r) => setTimeout(r, 1000));
    expect(progress.length).toBeGreaterThan(3);
    await cli(home, ['approve', ticket.id]);
    const r = await call;
    expect(r.isError).toBeFalsy();
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);
  });
});

describe("the MCP SDK client's real default timeout (60 s)", () => {
  test('a user who approves at 55 s approves something: the repeated call runs, exactly once', async () => {
    const home = tempDir();
    await startDaemon(home);
    const fx = fixture(home);
    // no AIRLOCK_HOLD_ANSWER_MS: the default hold time; no timeout option and no progress: the SDK's default
    const env = { ...fx.env };
    delete env.AIRLOCK_HOLD_ANSWER_MS;
    const w = await connectWrapped({ home, command: fx.command, args: fx.args, env });
    const t0 = Date.now();
    const first = await w.client.callTool({ name: 'write_note', arguments: { text: 'slow human' } });
    const answeredAfter = Date.now() - t0;
    expect(answeredAfter).toBeGreaterThan(45_000);
    expect(answeredAfter).toBeLessThan(60_000);
    expect(decisionOf(first)).toMatchObject({ decidedBy: 'waiting' });
    const [ticket] = await cliJson<Ticket[]>(home, ['pending']);
    expect(ticket).toBeDefined();
    expect(executedCalls(fx.log)).toHaveLength(0);

    await new Promise((r) => setTimeout(r, Math.max(0, 55_000 - (Date.now() - t0))));
    expect((await cli(home, ['approve', ticket!.id])).code).toBe(0);
    const ran = await w.client.callTool({ name: 'write_note', arguments: { text: 'slow human' } });
    expect(ran.isError).toBeFalsy();
    expect(executedCalls(fx.log)).toHaveLength(1);
    expect(executedCalls(fx.log, 'write_note')[0]!.arguments).toEqual({ text: 'slow human' });
  }, 120_000);
});
