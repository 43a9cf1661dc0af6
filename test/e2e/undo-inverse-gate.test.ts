/**
 * A declared inverse is a tool call like any other. Against the fixture server (whose log is the ground truth
 * of what ran): an undo never runs its inverse in another server that took the same name (another program,
 * another client), only in a wrapper started with the call's own command; a rule that denies the inverse
 * refuses its declaration, and denies it when the undo runs it; an inverse that asks holds a ticket marked as
 * an undo, showing the inverse's arguments, and a denial leaves the undo not done. The journal says what the
 * inverse undid, who asked for it, and what decided it.
 */
import { afterEach, describe, expect, test } from 'vitest';
import type { HistoryItem } from '../../proxy-core/src/protocol/api.js';
import type { UndoReport } from '../../proxy-core/src/protocol/undo-api.js';
import { cleanup, cli, cliJson, connectWrapped, executedCalls, fixture, startDaemon, tempDir, untilBroker, waitForSessions, waitForTicket, type Wrapped } from '../helpers/airlock.js';

afterEach(cleanup);

/** Wait until the last call of `tool` has ended and undo knows what it can do for it. */
async function undoable(home: string, tool: string): Promise<HistoryItem> {
  return untilBroker(
    home,
    (e) => e.type === 'call' || e.type === 'undo-known',
    async (c) => (await c.call('history', { tool, limit: 10 })).calls.find((x) => !x.id.startsWith('undo-') && x.undo?.available === true),
    8000,
    `an undoable call of ${tool}`,
  );
}

async function undo(home: string, id: string): Promise<{ code: number; report: UndoReport }> {
  const r = await cli(home, ['undo', id, '--json']);
  if (!r.stdout.trim()) throw new Error(`airlock undo ${id} printed no report (exit ${r.code}): ${r.stderr}`);
  return { code: r.code, report: JSON.parse(r.stdout) as UndoReport };
}

async function journalEntry(home: string, id: string): Promise<HistoryItem | undefined> {
  return (await cliJson<HistoryItem[]>(home, ['history'])).find((h) => h.id === id);
}

/** The server's tools are known to the broker (what `airlock inverses set` checks a declaration against). */
async function listed(home: string, w: Wrapped, server: string): Promise<void> {
  await w.client.listTools();
  await untilBroker(home, () => true, async (c) => ((await c.call('catalog', { server })).length > 0 ? true : undefined), 8000, `the tools of ${server}`);
}

describe('an undo runs its inverse only in the same server', () => {
  test('not in another program started under the same name; in a fresh wrapper of the same command, yes', async () => {
    const home = tempDir();
    await startDaemon(home);
    for (const tool of ['write_note', 'delete_all']) expect((await cli(home, ['rules', 'add', 'allow', '--server', 'fx', '--tool', tool])).code).toBe(0);
    const a = fixture(home);
    const wa = await connectWrapped({ home, server: 'fx', client: 'client-a', command: a.command, args: a.args, env: a.env });
    await listed(home, wa, 'fx');
    // the person's declaration (a wrapper's --undo flag alone declares nothing)
    expect((await cli(home, ['inverses', 'set', 'fx', 'write_note=delete_all'])).code).toBe(0);
    expect((await wa.client.callTool({ name: 'write_note', arguments: { text: 'hello' } })).isError).toBeFalsy();
    const call = await undoable(home, 'write_note');
    await wa.close();
    await untilBroker(home, (e) => e.type === 'session-down', async (c) => ((await c.call('status', {})).sessions.length === 0 ? true : undefined), 8000, 'the wrapper to go');

    // another program (another catalog, another client) takes the name
    const b = fixture(home, ['--catalog', 'basic-v2']);
    const wb = await connectWrapped({ home, server: 'fx', client: 'client-b', command: b.command, args: b.args, env: b.env });
    await wb.client.listTools();
    await waitForSessions(home, 1);
    const refused = await undo(home, call.id);
    expect(refused.code).toBe(1);
    expect(refused.report).toMatchObject({ ok: false, kind: 'inverse' });
    expect(refused.report.summary).toMatch(/no wrapper of fx started with `.*fixture-server\.mjs` is connected .*basic-v2.*another server/);
    expect(executedCalls(b.log, 'delete_all')).toEqual([]);

    // the same command again (a fresh wrapper, another client): the inverse runs there, through its rules
    const a2 = fixture(home);
    const wa2 = await connectWrapped({ home, server: 'fx', client: 'client-a2', command: a2.command, args: a2.args, env: a2.env });
    await wa2.client.listTools();
    await waitForSessions(home, 2);
    const done = await undo(home, call.id);
    expect(done.report).toMatchObject({ ok: true, kind: 'inverse', residue: [] });
    expect(done.code).toBe(0);
    expect(executedCalls(a2.log, 'delete_all').map((e) => e.arguments)).toEqual([{ text: 'hello' }]);
    expect(executedCalls(b.log, 'delete_all')).toEqual([]);
    const entry = await journalEntry(home, done.report.undoId!);
    expect(entry).toMatchObject({ client: 'client-a2', tool: 'delete_all', decision: 'allow', decidedBy: 'rule', outcome: 'ok' });
    expect(entry!.reasons[0]).toBe(`undo of call ${call.id} (write_note), asked for by you`);
  });
});

describe('an inverse goes through rules and tickets', () => {
  test('a denied inverse is refused as a declaration, denied when the undo runs it; one that asks shows a ticket marked as an undo', async () => {
    const home = tempDir();
    await startDaemon(home);
    expect((await cli(home, ['rules', 'add', 'allow', '--server', 'fx', '--tool', 'write_note'])).code).toBe(0);
    const deny = await cliJson<{ id: string }>(home, ['rules', 'add', 'deny', '--server', 'fx', '--tool', 'delete_all']);
    const f = fixture(home);
    const w = await connectWrapped({ home, server: 'fx', command: f.command, args: f.args, env: f.env });
    await listed(home, w, 'fx');

    const declared = await cli(home, ['inverses', 'set', 'fx', 'write_note=delete_all']);
    expect(declared.code).not.toBe(0);
    expect(declared.stderr).toMatch(/delete_all cannot be the inverse of write_note: rule \w+ .*denies it/);

    // declared while no rule forbids it, then a rule forbids it: the undo's inverse is denied by that rule
    expect((await cli(home, ['rules', 'remove', deny.id])).code).toBe(0);
    expect((await cli(home, ['inverses', 'set', 'fx', 'write_note=delete_all'])).code).toBe(0);
    expect((await w.client.callTool({ name: 'write_note', arguments: { text: 'agent chose this' } })).isError).toBeFalsy();
    const call = await undoable(home, 'write_note');
    const deny2 = await cliJson<{ id: string }>(home, ['rules', 'add', 'deny', '--server', 'fx', '--tool', 'delete_all']);
    const denied = await undo(home, call.id);
    expect(denied.code).toBe(1);
    expect(denied.report).toMatchObject({ ok: false, kind: 'inverse' });
    expect(denied.report.residue.join(' ')).toMatch(/was not run \(rule: denied by rule/);
    expect(executedCalls(f.log, 'delete_all')).toEqual([]);
    const deniedEntry = await journalEntry(home, denied.report.undoId!);
    expect(deniedEntry).toMatchObject({ tool: 'delete_all', decision: 'deny', decidedBy: 'rule', outcome: 'not-run' });
    expect(deniedEntry!.reasons[0]).toBe(`undo of call ${call.id} (write_note), asked for by you`);
    expect((await cliJson<HistoryItem[]>(home, ['history'])).find((h) => h.id === call.id)!.undo).toMatchObject({ available: true, state: 'failed' });

    // no rule: delete_all (destructive) asks; the ticket says it is an undo and shows what it would be called with
    expect((await cli(home, ['rules', 'remove', deny2.id])).code).toBe(0);
    const first = undo(home, call.id);
    const ticket = (await waitForTicket(home, 'delete_all')) as Awaited<ReturnType<typeof waitForTicket>> & { undoOf?: string };
    expect(ticket.undoOf).toBe(call.id);
    expect(ticket.arguments).toEqual({ text: 'agent chose this' });
    expect(ticket.reasons[0]).toMatch(new RegExp(`an undo you asked for: delete_all undoes call ${call.id}`));
    expect((await cli(home, ['pending'])).stdout).toContain(`an undo you asked for: delete_all undoes call ${call.id}`);
    expect((await cli(home, ['deny', ticket.id])).code).toBe(0);
    const held = await first;
    expect(held.report).toMatchObject({ ok: false });
    expect(held.report.residue.join(' ')).toMatch(/was not run \(user: denied from [^)]*\)/);
    expect(executedCalls(f.log, 'delete_all')).toEqual([]);

    // asked again and approved: it runs, once
    const second = undo(home, call.id);
    const again = await waitForTicket(home, 'delete_all');
    expect((await cli(home, ['approve', again.id])).code).toBe(0);
    expect((await second).report).toMatchObject({ ok: true });
    expect(executedCalls(f.log, 'delete_all').map((e) => e.arguments)).toEqual([{ text: 'agent chose this' }]);
    expect(await journalEntry(home, (await second).report.undoId!)).toMatchObject({ decision: 'allow', decidedBy: 'user', ticketId: again.id, outcome: 'ok' });
  });

  test("a wrapper's --undo naming an inverse a rule denies is refused", async () => {
    const home = tempDir();
    await startDaemon(home);
    expect((await cli(home, ['rules', 'add', 'deny', '--server', 'fx', '--tool', 'delete_all'])).code).toBe(0);
    const f = fixture(home);
    const refusal = untilBroker(home, (e) => e.type === 'inverse-refused', async (c) => (await c.call('events', { limit: 50 })).events.find((e) => e.type === 'inverse-refused'), 8000, 'the refusal');
    const w = await connectWrapped({ home, server: 'fx', command: f.command, args: f.args, env: f.env, flags: ['--undo', 'write_note=delete_all'] });
    await listed(home, w, 'fx');
    expect((await refusal).detail).toMatchObject({ spec: 'write_note=delete_all', problems: [expect.stringMatching(/delete_all cannot be the inverse of write_note: rule \w+ .*denies it/)] });
    expect(await cliJson<unknown[]>(home, ['inverses', '--json'])).toEqual([]);
    // nor can the person declare it while the rule stands
    const declared = await cli(home, ['inverses', 'set', 'fx', 'write_note=delete_all']);
    expect(declared.code).not.toBe(0);
    expect(declared.stderr).toMatch(/delete_all cannot be the inverse of write_note: rule \w+ .*denies it/);
    // so a call of write_note is not undoable, and asking to undo it never runs delete_all
    expect((await cli(home, ['rules', 'add', 'allow', '--server', 'fx', '--tool', 'write_note'])).code).toBe(0);
    expect((await w.client.callTool({ name: 'write_note', arguments: { text: 'kept' } })).isError).toBeFalsy();
    const call = await untilBroker(
      home,
      (e) => e.type === 'call' || e.type === 'undo-known',
      async (c) => (await c.call('history', { tool: 'write_note', limit: 10 })).calls.find((x) => x.outcome === 'ok' && x.undo !== undefined),
      8000,
      'the call of write_note',
    );
    expect(call.undo).toMatchObject({ available: false, kind: null });
    const refused = await undo(home, call.id);
    expect(refused.code).toBe(1);
    expect(refused.report).toMatchObject({ ok: false });
    expect(executedCalls(f.log, 'write_note').map((e) => e.arguments)).toEqual([{ text: 'kept' }]);
    expect(executedCalls(f.log, 'delete_all')).toEqual([]);
  });
});
