/** The gate, end to end: real CLI, real broker, real SDK client, fixture server as ground truth. */
import { afterEach, describe, expect, test } from 'vitest';
import {
  cleanup,
  cli,
  cliJson,
  connectWrapped,
  decisionOf,
  executedCalls,
  startDaemon,
  tempDir,
  textOf,
  waitFor,
  waitForSessions,
  waitForTicket,
} from '../helpers/airlock.js';
import { airlockWithFixture, startAirlock, wrapFixture } from '../helpers/e2e.js';

afterEach(cleanup);

describe('default policy: everything not trusted read-only asks', () => {
  test('an unchecked read-only claim is held until approved once, and asks again next time', async () => {
    const { home, fx, w } = await airlockWithFixture();

    const call = w.client.callTool({ name: 'echo', arguments: { text: 'hello' } });
    const ticket = await waitForTicket(home, 'echo');
    expect(ticket).toMatchObject({ client: 'test-client', server: 'fixture', tool: 'echo', arguments: { text: 'hello' }, class: 'read-only-unchecked' });
    expect(typeof ticket.createdAt).toBe('number');
    expect(ticket.reasons.join(' ')).toMatch(/cannot check/);
    expect(executedCalls(fx.log, 'echo')).toHaveLength(0);

    const approved = await cli(home, ['approve', ticket.id]);
    expect(approved.code).toBe(0);
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('hello');
    expect(executedCalls(fx.log, 'echo')).toHaveLength(1);

    const again = w.client.callTool({ name: 'echo', arguments: { text: 'again' } });
    const second = await waitForTicket(home, 'echo');
    expect(second.id).not.toBe(ticket.id);
    await cli(home, ['deny', second.id]);
    expect((await again).isError).toBe(true);
    expect(executedCalls(fx.log, 'echo')).toHaveLength(1);
  });

  test('deny answers with a tool error the model can read, and the server never sees the call', async () => {
    const { home, fx, w } = await airlockWithFixture();
    const call = w.client.callTool({ name: 'delete_all', arguments: {} });
    const ticket = await waitForTicket(home, 'delete_all');
    expect(ticket.class).toBe('destructive');
    const denied = await cli(home, ['deny', ticket.id, '--reason', 'not today']);
    expect(denied.code).toBe(0);
    const result = await call;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/denied.*not today/);
    expect(decisionOf(result)).toMatchObject({ decision: 'deny', decidedBy: 'user', ticketId: ticket.id, class: 'destructive' });
    expect(executedCalls(fx.log)).toHaveLength(0);
  });

  test('approve --remember session lets the same tool run without asking for this wrapper only', async () => {
    const { home, fx, w } = await airlockWithFixture();
    const first = w.client.callTool({ name: 'write_note', arguments: { text: '1' } });
    const t = await waitForTicket(home, 'write_note');
    expect(t.class).toBe('mutating');
    await cli(home, ['approve', t.id, '--remember', 'session']);
    await first;
    const second = await w.client.callTool({ name: 'write_note', arguments: { text: '2' } });
    expect(second.isError).toBeFalsy();
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(2);

    // a second wrapper (another client session) still asks
    const w2 = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
    const other = w2.client.callTool({ name: 'write_note', arguments: { text: '3' } });
    const t2 = await waitForTicket(home, 'write_note');
    await cli(home, ['deny', t2.id]);
    expect((await other).isError).toBe(true);
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(2);
  });

  test('approve --remember always persists an allow rule that every session obeys', async () => {
    const { home, fx, w } = await airlockWithFixture();
    const first = w.client.callTool({ name: 'write_note', arguments: { text: 'a' } });
    const t = await waitForTicket(home, 'write_note');
    await cli(home, ['approve', t.id, '--remember', 'always']);
    await first;
    const rules = await cliJson<{ action: string; server: string; tool: string }[]>(home, ['rules']);
    expect(rules).toEqual([expect.objectContaining({ action: 'allow', server: 'fixture', tool: 'write_note' })]);
    const w2 = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
    const r = await w2.client.callTool({ name: 'write_note', arguments: { text: 'b' } });
    expect(r.isError).toBeFalsy();
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(2);
  });

  test('an unanswered ticket times out as a denial', async () => {
    const { fx, w } = await airlockWithFixture({ daemon: { args: ['--ticket-timeout', '1'] } });
    const r = await w.client.callTool({ name: 'write_note', arguments: {} });
    expect(r.isError).toBe(true);
    expect(decisionOf(r)).toMatchObject({ decidedBy: 'timeout' });
    expect(textOf(r)).toMatch(/nobody answered/);
    expect(executedCalls(fx.log)).toHaveLength(0);
  });
});

describe('trust and rules', () => {
  test('--trust-read-only-hints runs read-only claims without asking, but never a contradicted or mutating tool', async () => {
    const { home, fx, w } = await airlockWithFixture({ trust: true });
    // readOnlyHint: true needs the broker's policy; a wrapper that is not connected yet says false (fails closed)
    await waitForSessions(home, 1);
    const listed = await w.client.listTools();
    const echo = listed.tools.find((t) => t.name === 'echo')!;
    expect(echo.annotations?.readOnlyHint).toBe(true);
    expect(listed.tools.find((t) => t.name === 'write_note')!.annotations?.readOnlyHint).toBe(false);
    const r = await w.client.callTool({ name: 'echo', arguments: { text: 'trusted' } });
    expect(textOf(r)).toContain('trusted');
    const pending = w.client.callTool({ name: 'write_note', arguments: {} });
    const t = await waitForTicket(home, 'write_note');
    await cli(home, ['deny', t.id]);
    await pending;
    expect(executedCalls(fx.log).map((c) => c.tool)).toEqual(['echo']);
  });

  test('per-server trust set with `airlock trust` applies to the very next call', async () => {
    const { home, w } = await airlockWithFixture();
    expect((await cli(home, ['trust', 'fixture', 'on'])).code).toBe(0);
    const r = await w.client.callTool({ name: 'echo', arguments: { text: 'now trusted' } });
    expect(r.isError).toBeFalsy();
    expect(await cliJson<string[]>(home, ['trust'])).toEqual(['fixture']);
  });

  test('deny beats allow, a rule change applies to the very next call, and rules can be removed', async () => {
    const { home, fx, w } = await airlockWithFixture();
    const allow = await cliJson<{ id: string }>(home, ['rules', 'add', 'allow', '--server', 'fix*', '--tool', '*']);
    expect((await w.client.callTool({ name: 'write_note', arguments: {} })).isError).toBeFalsy();
    const deny = await cliJson<{ id: string }>(home, ['rules', 'add', 'deny', '--server', '*', '--tool', 'write_*']);
    const denied = await w.client.callTool({ name: 'write_note', arguments: {} });
    expect(denied.isError).toBe(true);
    expect(decisionOf(denied)).toMatchObject({ decidedBy: 'rule' });
    expect(textOf(denied)).toContain(deny.id);
    expect((await w.client.callTool({ name: 'echo', arguments: {} })).isError).toBeFalsy();
    expect((await cli(home, ['rules', 'remove', deny.id])).code).toBe(0);
    expect((await w.client.callTool({ name: 'write_note', arguments: {} })).isError).toBeFalsy();
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(2);
    expect((await cli(home, ['rules', 'remove', allow.id])).code).toBe(0);
    const bad = await cli(home, ['rules', 'remove', 'nope']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });

  test('a client-scoped rule only applies to that client', async () => {
    const { home } = await startAirlock();
    await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', 'write_note', '--client', 'cursor']);
    const { fx, w: cursor } = await wrapFixture(home, { client: 'cursor' });
    expect((await cursor.client.callTool({ name: 'write_note', arguments: {} })).isError).toBeFalsy();
    const other = await connectWrapped({ home, client: 'zed', command: fx.command, args: fx.args, env: fx.env });
    const call = other.client.callTool({ name: 'write_note', arguments: {} });
    const t = await waitForTicket(home, 'write_note');
    expect(t.client).toBe('zed');
    await cli(home, ['deny', t.id]);
    expect((await call).isError).toBe(true);
  });
});

describe('E-Stop', () => {
  test('refuses the very next call, denies pending tickets, and survives a broker restart', async () => {
    const { home, daemon } = await startAirlock();
    await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', 'echo']);
    const { fx, w } = await wrapFixture(home);
    expect((await w.client.callTool({ name: 'echo', arguments: {} })).isError).toBeFalsy();

    const waiting = w.client.callTool({ name: 'write_note', arguments: {} });
    await waitForTicket(home, 'write_note');
    expect((await cli(home, ['estop', 'on'])).code).toBe(0);
    const pendingResult = await waiting;
    expect(decisionOf(pendingResult)).toMatchObject({ decidedBy: 'estop' });
    const next = await w.client.callTool({ name: 'echo', arguments: {} });
    expect(next.isError).toBe(true);
    expect(decisionOf(next)).toMatchObject({ decidedBy: 'estop' });
    expect(textOf(next)).toMatch(/E-Stop is on/);
    expect((await cliJson<{ estop: boolean }>(home, ['status'])).estop).toBe(true);

    await daemon.stop();
    await startDaemon(home);
    expect((await cliJson<{ estop: boolean }>(home, ['status'])).estop).toBe(true);
    // the wrapper reconnects by itself and still refuses
    await waitFor(async () => (await cliJson<{ sessions: unknown[] }>(home, ['status'])).sessions.length === 1, 5000, 'reconnect');
    expect(decisionOf(await w.client.callTool({ name: 'echo', arguments: {} }))).toMatchObject({ decidedBy: 'estop' });
    await cli(home, ['estop', 'off']);
    expect((await w.client.callTool({ name: 'echo', arguments: {} })).isError).toBeFalsy();
    expect(executedCalls(fx.log).map((c) => c.tool)).toEqual(['echo', 'echo']);
  });
});

describe('broker down', () => {
  test('every call fails closed within 2 s, even an allowed one, and the wrapper reconnects by itself', async () => {
    const home = tempDir();
    const first = await startDaemon(home);
    await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', '*']);
    // a session begun while the broker is down fails its initialize (health-check.test.ts): this one began before
    const { fx, w } = await wrapFixture(home, { trust: true });
    await first.stop();
    const t0 = Date.now();
    const r = await w.client.callTool({ name: 'echo', arguments: {} });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(r.isError).toBe(true);
    expect(decisionOf(r)).toMatchObject({ decidedBy: 'broker-down' });
    expect(textOf(r)).toMatch(/Airlock is not running.*airlock daemon/);
    expect(executedCalls(fx.log)).toHaveLength(0);

    await startDaemon(home);
    await waitFor(async () => (await cliJson<{ sessions: unknown[] }>(home, ['status'])).sessions.length === 1, 5000, 'reconnect');
    const ok = await w.client.callTool({ name: 'echo', arguments: { text: 'back' } });
    expect(textOf(ok)).toContain('back');
    // the refused call made while the broker was down is in the journal now
    await waitFor(async () => (await cliJson<unknown[]>(home, ['history'])).length === 2, 5000, 'journal flush');
    const history = await cliJson<{ decidedBy: string; outcome: string }[]>(home, ['history']);
    expect(history.map((h) => h.decidedBy)).toEqual(['rule', 'broker-down']);
  });

  test('a ticket pending when the broker dies is refused at once', async () => {
    const { home, daemon, fx, w } = await airlockWithFixture();
    const call = w.client.callTool({ name: 'write_note', arguments: {} });
    await waitForTicket(home, 'write_note');
    daemon.proc.kill('SIGKILL');
    const t0 = Date.now();
    const r = await call;
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(decisionOf(r)).toMatchObject({ decidedBy: 'broker-down' });
    expect(executedCalls(fx.log)).toHaveLength(0);
  });

  test('a CLI command with the broker down exits non-zero with one line saying how to start it', async () => {
    const home = tempDir();
    const r = await cli(home, ['status']);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/not running.*airlock daemon/);
  });
});

describe('journal', () => {
  test('records decision, who decided, outcome and duration, newest first, across a broker restart', async () => {
    const { home, daemon } = await startAirlock();
    await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', 'echo']);
    await cli(home, ['rules', 'add', 'deny', '--server', '*', '--tool', 'delete_all']);
    const { w } = await wrapFixture(home);
    await w.client.callTool({ name: 'echo', arguments: { text: 'one' } });
    await w.client.callTool({ name: 'delete_all', arguments: {} });
    await waitFor(async () => (await cliJson<unknown[]>(home, ['history'])).length >= 2, 5000, 'journal');
    await daemon.stop();
    await startDaemon(home);
    const history = await cliJson<Record<string, unknown>[]>(home, ['history', '--limit', '2']);
    expect(history).toHaveLength(2);
    const byTool = Object.fromEntries(history.map((h) => [h.tool, h]));
    expect(byTool.delete_all).toMatchObject({ decision: 'deny', decidedBy: 'rule', outcome: 'not-run', client: 'test-client', server: 'fixture' });
    expect(history[0]!.tool).toBe('delete_all');
    const all = await cliJson<Record<string, unknown>[]>(home, ['history']);
    const echo = all.find((h) => h.tool === 'echo')!;
    expect(echo).toMatchObject({ decision: 'allow', decidedBy: 'rule', outcome: 'ok', arguments: '{"text":"one"}', class: 'read-only-unchecked' });
    expect(typeof echo.durationMs).toBe('number');
    const text = await cli(home, ['history']);
    expect(text.stdout).toMatch(/TIME\s+CLIENT\s+SERVER\s+TOOL/);
  });
});
