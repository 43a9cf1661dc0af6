/**
 * A one-shot client (a CLI that makes one call and exits) and a held call: the wrapper answers "still waiting"
 * and promises the ticket stays open, then the client exits and its wrapper session ends. The ticket stays open
 * for its timeout; the same call (same client, server, tool, arguments) made from a new session takes the
 * decision: approved, it runs once; denied, it gets the person's reason. The fixture server's log is the ground
 * truth of what ran.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, test } from 'vitest';
import type { BrokerClient } from '../../proxy-core/src/ipc/client.js';
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
  untilBroker,
  wrapArgs,
  type WrapOptions,
} from '../helpers/airlock.js';
import { CLIENT_CLIS, installClientCli } from '../helpers/client-cli.js';

afterEach(cleanup);

const HOLD = { AIRLOCK_HOLD_ANSWER_MS: '300' };

async function sessionCount(c: BrokerClient): Promise<number> {
  return (await c.call('status', {})).sessions.length;
}

/** A broker in a fresh home and the fixture wrapped with a short hold answer: what each test here starts from. */
async function heldSession(): Promise<{ home: string; fx: ReturnType<typeof fixture>; o: WrapOptions }> {
  const home = tempDir();
  await startDaemon(home);
  const fx = fixture(home);
  return { home, fx, o: { home, command: fx.command, args: fx.args, env: { ...fx.env, ...HOLD } } };
}

/** One call from a client that then exits: the answer it got, and the ticket it left. */
async function oneShot(o: WrapOptions, tool: string, args: Record<string, unknown>): Promise<{ result: unknown }> {
  const w = await connectWrapped(o);
  const result = await w.client.callTool({ name: tool, arguments: args });
  await w.close();
  // the wrapper saw its client go and its session ended at the broker
  await untilBroker(o.home, (e) => e.type === 'session-down', async (c) => ((await sessionCount(c)) === 0 ? true : undefined), 8000, 'the session to end');
  return { result };
}

describe('a ticket answered "still waiting" outlives its client', () => {
  test('approved after the client exited: the same call from a new session runs, once', async () => {
    const { home, fx, o } = await heldSession();
    const { result } = await oneShot(o, 'write_note', { text: 'one shot' });
    expect(decisionOf(result)).toMatchObject({ decidedBy: 'waiting' });
    const ticket = decisionOf(result)!.ticketId as string;
    expect(ticket).toMatch(/^[0-9a-f]{8}$/);
    // still open once the session has ended, not "client cancelled"
    expect((await cliJson<Ticket[]>(home, ['pending'])).map((t) => t.id)).toEqual([ticket]);
    const approved = await cli(home, ['approve', ticket]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(executedCalls(fx.log)).toHaveLength(0);

    const w = await connectWrapped(o);
    const ran = await w.client.callTool({ name: 'write_note', arguments: { text: 'one shot' } });
    expect(ran.isError).toBeFalsy();
    expect(textOf(ran)).toContain('one shot');
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);

    // used once: the same call again opens a new ticket, and runs nothing
    const again = await w.client.callTool({ name: 'write_note', arguments: { text: 'one shot' } });
    expect(decisionOf(again)).toMatchObject({ decidedBy: 'waiting' });
    expect(decisionOf(again)!.ticketId).not.toBe(ticket);
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);
  });

  test("denied after the client exited: the same call from a new session is refused with the person's reason", async () => {
    const { home, fx, o } = await heldSession();
    const { result } = await oneShot(o, 'delete_all', {});
    const ticket = decisionOf(result)!.ticketId as string;
    expect((await cli(home, ['deny', ticket, '--reason', 'not on a Friday'])).code).toBe(0);

    const w = await connectWrapped(o);
    const refused = await w.client.callTool({ name: 'delete_all', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(decisionOf(refused)).toMatchObject({ decision: 'deny', decidedBy: 'user', ticketId: ticket });
    expect(textOf(refused)).toContain('not on a Friday');
    expect(executedCalls(fx.log)).toHaveLength(0);
  });

  test('undecided: the new session waits on the same ticket, and the decision reaches it', async () => {
    const { home, fx, o } = await heldSession();
    const { result } = await oneShot(o, 'write_note', { text: 'later' });
    const ticket = decisionOf(result)!.ticketId as string;

    const w = await connectWrapped(o);
    const second = await w.client.callTool({ name: 'write_note', arguments: { text: 'later' } });
    // one ticket for the person, not two
    expect(decisionOf(second)).toMatchObject({ decidedBy: 'waiting', ticketId: ticket });
    expect((await cliJson<Ticket[]>(home, ['pending'])).map((t) => t.id)).toEqual([ticket]);
    expect((await cli(home, ['approve', ticket])).code).toBe(0);
    const ran = await w.client.callTool({ name: 'write_note', arguments: { text: 'later' } });
    expect(ran.isError).toBeFalsy();
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);
  });

  test('only the same call takes it: other arguments, or another client, open their own ticket', async () => {
    const { home, fx, o } = await heldSession();
    const { result } = await oneShot(o, 'write_note', { text: 'mine' });
    const ticket = decisionOf(result)!.ticketId as string;
    expect((await cli(home, ['approve', ticket])).code).toBe(0);

    const other = await connectWrapped({ ...o, client: 'other-client' });
    const theirs = await other.client.callTool({ name: 'write_note', arguments: { text: 'mine' } });
    expect(decisionOf(theirs)).toMatchObject({ decidedBy: 'waiting' });
    expect(decisionOf(theirs)!.ticketId).not.toBe(ticket);
    const w = await connectWrapped(o);
    const changed = await w.client.callTool({ name: 'write_note', arguments: { text: 'not mine' } });
    expect(decisionOf(changed)).toMatchObject({ decidedBy: 'waiting' });
    expect(executedCalls(fx.log)).toHaveLength(0);
    // the approval is still there for the same call
    const ran = await w.client.callTool({ name: 'write_note', arguments: { text: 'mine' } });
    expect(ran.isError).toBeFalsy();
    expect(executedCalls(fx.log, 'write_note').map((c) => c.arguments)).toEqual([{ text: 'mine' }]);
  });

  test('it stays open for its timeout, no longer', async () => {
    const home = tempDir();
    await startDaemon(home, ['--ticket-timeout', '3']);
    const fx = fixture(home);
    const o = { home, command: fx.command, args: fx.args, env: { ...fx.env, ...HOLD } };
    const { result } = await oneShot(o, 'write_note', { text: 'too late' });
    const ticket = decisionOf(result)!.ticketId as string;
    expect((await cliJson<Ticket[]>(home, ['pending'])).map((t) => t.id)).toEqual([ticket]);
    const ended = await untilBroker(
      home,
      (e) => e.type === 'ticket-ended',
      async (c) => (await c.call('events', { limit: 50 })).events.find((e) => e.type === 'ticket-ended' && (e.detail as { ticketId?: unknown }).ticketId === ticket),
      8000,
      'the ticket to time out',
    );
    expect(ended.detail).toMatchObject({ resolution: 'timeout' });
    expect(await cliJson<Ticket[]>(home, ['pending'])).toEqual([]);
    // a timeout is nobody's decision: the same call made again asks afresh
    const w = await connectWrapped(o);
    const again = await w.client.callTool({ name: 'write_note', arguments: { text: 'too late' } });
    expect(decisionOf(again)).toMatchObject({ decidedBy: 'waiting' });
    expect(decisionOf(again)!.ticketId).not.toBe(ticket);
    expect(executedCalls(fx.log)).toHaveLength(0);
  });
});

/** `mcp-inspector --cli --method tools/call …` through `airlock wrap`: one call, then the CLI exits. */
function inspectorCall(bin: string, home: string, fx: ReturnType<typeof fixture>, text: string): Promise<{ code: number; out: string }> {
  const args = [
    '--cli',
    '--method',
    'tools/call',
    '--tool-name',
    'write_note',
    '--tool-arg',
    `text=${text}`,
    // the Inspector gives the server a small environment of its own: what it needs goes with -e
    '-e',
    `FIXTURE_LOG=${fx.log}`,
    '-e',
    `AIRLOCK_HOLD_ANSWER_MS=${HOLD.AIRLOCK_HOLD_ANSWER_MS}`,
    process.execPath,
    ...wrapArgs({ home, client: 'inspector', command: fx.command, args: fx.args, flags: ['--home', home] }),
  ];
  return new Promise((resolve, reject) => {
    const p = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: home } });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.once('error', reject);
    p.once('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

describe("the MCP Inspector's CLI, a client that makes one call and exits", () => {
  test('its ticket outlives it, and the same call made again after the approval runs once', async () => {
    const { bin } = await installClientCli(CLIENT_CLIS.inspector);
    const home = tempDir();
    await startDaemon(home);
    const fx = fixture(home);
    const first = await inspectorCall(bin, home, fx, 'from the inspector');
    expect(first.out).toMatch(/waiting for your approval in Airlock \(ticket [0-9a-f]{8}\)/);
    const ticket = /\(ticket ([0-9a-f]{8})\)/.exec(first.out)![1]!;
    await untilBroker(home, (e) => e.type === 'session-down', async (c) => ((await sessionCount(c)) === 0 ? true : undefined), 8000, 'the session to end');
    expect((await cliJson<Ticket[]>(home, ['pending'])).map((t) => t.id)).toEqual([ticket]);
    const approved = await cli(home, ['approve', ticket]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(executedCalls(fx.log)).toHaveLength(0);

    const second = await inspectorCall(bin, home, fx, 'from the inspector');
    expect(second.code, second.out).toBe(0);
    expect(second.out).toContain('from the inspector');
    expect(executedCalls(fx.log, 'write_note').map((c) => c.arguments)).toEqual([{ text: 'from the inspector' }]);
  }, 300_000);
});
