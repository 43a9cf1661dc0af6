/**
 * The agent at the CLI of a broker that runs with presence proofs: the real `airlock` run as an AI client's
 * shell tool runs it (setsid, no terminal, stdin from /dev/null). Every loosening it tries is refused, every
 * tightening goes through. Ground truth: what the fixture server ran, and the broker's database on disk.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanup, cli, executedCalls, waitFor, waitForSessions, waitForTicket, textOf } from '../helpers/airlock.js';
import { agentCli, dbRows, eventRows } from '../helpers/agent.js';
import { type Airlock, type Fixture, startAirlock, wrapFixture } from '../helpers/e2e.js';
import type { Wrapped } from '../helpers/airlock.js';
import { tempDir } from '../helpers/airlock.js';

let airlock: Airlock;
let fx: Fixture;
let w: Wrapped;
/** The last event before the broker with proofs started: what came after is the agent's doing. */
let since = 0;

/**
 * How the CLI says a loosening was refused: for want of a proof, or (where the broker sees the CLI's process and
 * polkit can be asked) with polkit's refusal after it tried; either way nothing was loosened, which is what the
 * database is checked for. presence-peer.test.ts holds the exact words once the broker sees its peers.
 */
const REFUSED = /needs your presence|: refused, /;

const setting = (home: string, key: string) => dbRows<{ value: string }>(home, 'SELECT value FROM settings WHERE key = ?', key)[0]?.value;
const trusted = (home: string) => dbRows<{ server: string }>(home, 'SELECT server FROM server_settings WHERE trust_read_only_hints = 1').map((r) => r.server);

beforeAll(async () => {
  const home = tempDir();
  // what the person set up before: the fixture's read-only hints trusted (a broker started without proofs for it)
  const before = await startAirlock({ home });
  expect((await cli(home, ['trust', 'fixture', 'on'])).code).toBe(0);
  await before.daemon.stop();
  since = dbRows<{ seq: number }>(home, 'SELECT max(seq) AS seq FROM events')[0]!.seq;
  airlock = await startAirlock({ home, presence: true });
  ({ fx, w } = await wrapFixture(home));
  await waitForSessions(home, 1);
});
afterAll(cleanup);

describe('the agent at the CLI', () => {
  test('approve is refused for want of presence, the call does not run; deny goes through and says where it came from', async () => {
    const { home } = airlock;
    const call = w.client.callTool({ name: 'delete_all', arguments: { text: 'everything' } });
    const ticket = await waitForTicket(home, 'delete_all');

    const approve = await agentCli(home, ['approve', ticket.id]);
    expect(approve.code).not.toBe(0);
    expect(approve.stderr).toMatch(REFUSED);
    expect(approve.stderr).toContain(`Allow the held call ${ticket.id}: fixture → delete_all`);
    expect(executedCalls(fx.log, 'delete_all')).toEqual([]);
    expect(dbRows(home, 'SELECT resolution FROM tickets WHERE id = ?', ticket.id)).toEqual([{ resolution: null }]);

    // --always and --session loosen more, and are refused the same way
    for (const how of ['--always', '--remember=session']) {
      const r = await agentCli(home, ['approve', ticket.id, how]);
      expect(r.code, how).not.toBe(0);
      expect(r.stderr, how).toMatch(REFUSED);
    }
    expect(dbRows(home, "SELECT id FROM rules WHERE action = 'allow'")).toEqual([]);

    const deny = await agentCli(home, ['deny', ticket.id]);
    expect(deny.code, deny.stderr).toBe(0);
    const result = await call;
    expect(textOf(result)).toMatch(/denied/i);
    expect(executedCalls(fx.log, 'delete_all')).toEqual([]);
    const journaled = () => dbRows<{ decision: string; decided_by: string; detail: string }>(home, 'SELECT decision, decided_by, detail FROM journal WHERE ticket_id = ?', ticket.id);
    // the wrapper journals the call's end on its own time
    await waitFor(() => journaled().length > 0, 8000, 'the denied call in the journal');
    const rows = journaled();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ decision: 'deny', decided_by: 'user' });
    expect(rows[0]!.detail).toContain('denied from');
    expect(rows[0]!.detail).not.toMatch(/approved|by you/);
  });

  test('an allow rule is refused, a deny rule goes through', async () => {
    const { home } = airlock;
    const allow = await agentCli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', '*']);
    expect(allow.code).not.toBe(0);
    expect(allow.stderr).toContain('Add a rule: allow * → *');
    expect(allow.stderr).toMatch(REFUSED);
    const narrow = await agentCli(home, ['rules', 'add', 'allow', '--server', 'fixture', '--tool', 'delete_all', '--arg', 'text=x']);
    expect(narrow.code).not.toBe(0);
    expect(dbRows(home, "SELECT id FROM rules WHERE action = 'allow'")).toEqual([]);

    const deny = await agentCli(home, ['rules', 'add', 'deny', '--server', 'fixture', '--tool', 'delete_all']);
    expect(deny.code, deny.stderr).toBe(0);
    expect(dbRows(home, 'SELECT action, server, tool FROM rules')).toEqual([{ action: 'deny', server: 'fixture', tool: 'delete_all' }]);
    // removing the deny rule loosens: refused too
    const id = dbRows<{ id: string }>(home, 'SELECT id FROM rules')[0]!.id;
    const remove = await agentCli(home, ['rules', 'remove', id]);
    expect(remove.code).not.toBe(0);
    expect(dbRows(home, 'SELECT id FROM rules')).toEqual([{ id }]);
  });

  test('trust on is refused, trust off goes through', async () => {
    const { home } = airlock;
    const other = await agentCli(home, ['trust', 'other', 'on']);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('Trust the read-only hints of other');
    expect(other.stderr).toMatch(REFUSED);
    expect(trusted(home)).toEqual(['fixture']);
    const off = await agentCli(home, ['trust', 'fixture', 'off']);
    expect(off.code, off.stderr).toBe(0);
    expect(trusted(home)).toEqual([]);
    const back = await agentCli(home, ['trust', 'fixture', 'on']);
    expect(back.code).not.toBe(0);
    expect(trusted(home)).toEqual([]);
  });

  test('tripwire off is refused, tripwire on goes through; a looser number is refused, a stricter one goes through', async () => {
    const { home } = airlock;
    const off = await agentCli(home, ['settings', 'tripwire', 'off']);
    expect(off.code).not.toBe(0);
    expect(off.stderr).toContain('Set tripwire to off');
    expect(off.stderr).toMatch(REFUSED);
    expect(setting(home, 'tripwire')).not.toBe('off');
    const on = await agentCli(home, ['settings', 'tripwire', 'on']);
    expect(on.code, on.stderr).toBe(0);
    expect(setting(home, 'tripwire')).toBe('on');

    const longer = await agentCli(home, ['settings', 'ticket-timeout', '86400']);
    expect(longer.code).not.toBe(0);
    expect(setting(home, 'ticket-timeout')).not.toBe('86400');
    const shorter = await agentCli(home, ['settings', 'ticket-timeout', '60']);
    expect(shorter.code, shorter.stderr).toBe(0);
    expect(setting(home, 'ticket-timeout')).toBe('60');
  });

  test('every refusal above is in the events, with its channel, for the person to see', async () => {
    const { home } = airlock;
    const refused = eventRows(home, 'presence-refused').filter((e) => e.seq > since);
    const methods = new Set(refused.map((e) => e.detail.method));
    for (const m of ['approve', 'rules.add', 'rules.remove', 'trust.set', 'settings.set']) expect(methods, m).toContain(m);
    for (const e of refused) expect(e.detail.channel).toBe('cli');
    // and nothing was loosened
    expect(eventRows(home, 'loosened').filter((e) => e.seq > since)).toEqual([]);
    const out = await agentCli(home, ['history', '--events', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const listed = JSON.parse(out.stdout) as { type: string }[];
    expect(listed.filter((e) => e.type === 'presence-refused').length).toBe(refused.length);
  });
});

describe('a loosening flag the agent wrote into a client config entry', () => {
  test('--trust-read-only-hints is not applied: the session runs without it, a read-only call is held, and trust stays off', async () => {
    const { home } = airlock;
    const hinted = await wrapFixture(home, { server: 'hinted', flags: ['--trust-read-only-hints'] });
    await waitForSessions(home, 2);
    await waitFor(() => eventRows(home, 'wrap-flags-ignored').some((e) => e.seq > since && e.server === 'hinted'), 8000, 'the wrap-flags-ignored event');
    const ignored = eventRows(home, 'wrap-flags-ignored').filter((e) => e.seq > since);
    expect(ignored).toContainEqual(expect.objectContaining({ server: 'hinted', detail: expect.objectContaining({ flags: ['--trust-read-only-hints'] }) }));
    // the agent cannot make it true either
    const trust = await agentCli(home, ['trust', 'hinted', 'on']);
    expect(trust.code).not.toBe(0);
    expect(trusted(home)).not.toContain('hinted');

    const call = hinted.w.client.callTool({ name: 'echo', arguments: { text: 'read-only, it says' } });
    const ticket = await waitForTicket(home, 'echo');
    expect(ticket.server).toBe('hinted');
    expect(executedCalls(hinted.fx.log, 'echo')).toEqual([]);
    expect((await agentCli(home, ['approve', ticket.id])).code).not.toBe(0);
    expect(executedCalls(hinted.fx.log, 'echo')).toEqual([]);
    expect((await agentCli(home, ['deny', ticket.id])).code).toBe(0);
    await call;
    expect(executedCalls(hinted.fx.log, 'echo')).toEqual([]);
  });
});

// last: the agent can press E-Stop, and nothing it can do releases it
describe('E-Stop from the agent', () => {
  test('E-Stop on goes through, off is refused', async () => {
    const { home } = airlock;
    const on = await agentCli(home, ['estop', 'on']);
    expect(on.code, on.stderr).toBe(0);
    expect(setting(home, 'estop')).toBe('on');
    const off = await agentCli(home, ['estop', 'off']);
    expect(off.code).not.toBe(0);
    expect(off.stderr).toContain('Turn E-Stop off');
    expect(off.stderr).toMatch(REFUSED);
    expect(setting(home, 'estop')).toBe('on');
    // while it holds, nothing runs
    const r = await w.client.callTool({ name: 'write_note', arguments: { text: 'during E-Stop' } });
    expect(textOf(r)).toMatch(/E-Stop/);
    expect(executedCalls(fx.log, 'write_note')).toEqual([]);
  });
});
