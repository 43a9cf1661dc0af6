/**
 * The agent speaks the broker's socket protocol itself: a Node script it writes, reading the secret from the
 * data dir and doing the handshake by hand (test/fixtures/agent/raw-broker.mjs), run from its shell (setsid, no
 * terminal). Holding the secret makes it a front end: it can read, deny, stop and ask for challenges, never
 * loosen, whatever proof it makes up. Ground truth: what the fixture server ran, and the database on disk.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cleanup, executedCalls, waitFor, waitForSessions } from '../helpers/airlock.js';
import { agentScript, dbRows, eventRows } from '../helpers/agent.js';
import { type Airlock, type Fixture, startAirlock, wrapFixture } from '../helpers/e2e.js';
import type { Wrapped } from '../helpers/airlock.js';
import { tempDir, untilBroker } from '../helpers/airlock.js';

interface Answer {
  ok: boolean;
  code?: string;
  message?: string;
  result?: Record<string, unknown>;
}

let airlock: Airlock;
let fx: Fixture;
let w: Wrapped;
let tickets: { a: string; b: string };
let calls: Promise<unknown>[];
let cursorConfig: string;

beforeAll(async () => {
  // a client config with one server, in the HOME the broker sees
  const userHome = tempDir('al-home-');
  mkdirSync(join(userHome, '.cursor'));
  cursorConfig = join(userHome, '.cursor', 'mcp.json');
  writeFileSync(cursorConfig, JSON.stringify({ mcpServers: { notes: { command: 'node', args: ['notes.js'] } } }, null, 2) + '\n');
  airlock = await startAirlock({ presence: true, env: { HOME: userHome, XDG_CONFIG_HOME: join(userHome, '.config'), CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' } });
  ({ fx, w } = await wrapFixture(airlock.home));
  await waitForSessions(airlock.home, 1);
  calls = [w.client.callTool({ name: 'delete_all', arguments: { text: 'A' } }), w.client.callTool({ name: 'delete_all', arguments: { text: 'B' } })];
  const pending = await untilBroker(airlock.home, (e) => e.type === 'ticket-created', async (c) => {
    const p = await c.call('pending', {});
    return p.length >= 2 ? p : undefined;
  }, 8000, 'two held calls');
  const byText = (t: string) => pending.find((x) => (x.arguments as { text?: string }).text === t)!.id;
  tickets = { a: byText('A'), b: byText('B') };
});
afterAll(cleanup);

/** Nothing the agent did let a held call run, or left an allow rule, trust, a looser setting or a pin accepted. */
function nothingLoosened(): void {
  const { home } = airlock;
  expect(executedCalls(fx.log, 'delete_all')).toEqual([]);
  expect(dbRows(home, 'SELECT resolution FROM tickets WHERE id IN (?, ?)', tickets.a, tickets.b)).toEqual([{ resolution: null }, { resolution: null }]);
  expect(dbRows(home, "SELECT id FROM rules WHERE action = 'allow'")).toEqual([]);
  expect(dbRows(home, 'SELECT server FROM server_settings WHERE trust_read_only_hints = 1')).toEqual([]);
  expect(dbRows(home, "SELECT key, value FROM settings WHERE key IN ('tripwire', 'ticket-timeout')")).toEqual([]);
  expect(eventRows(home, 'loosened')).toEqual([]);
}

test('approve without a proof: presence-required; the call does not run', async () => {
  const out = await agentScript<Answer>(airlock.home, `const b = await connect(home); return b.call('approve', { id: args.id });`, { id: tickets.a });
  expect(out).toMatchObject({ ok: false, code: 'presence-required' });
  expect(out.message).toContain(`Allow the held call ${tickets.a}`);
  nothingLoosened();
});

test('approve with a made-up proof of each kind, each answering a challenge the agent asked for: refused', async () => {
  const out = await agentScript<Record<string, Answer>>(
    airlock.home,
    `
    const b = await connect(home);
    const ask = async () => (await b.call('presence.challenge', { method: 'approve', params: { id: args.id } })).result;
    const out = {};
    const c1 = await ask();
    out.challenge = { ok: true, result: c1 };
    out.polkit = await b.call('approve', { id: args.id, presence: { kind: 'polkit', challenge: c1.id } });
    const c2 = await ask();
    out.click = await b.call('approve', { id: args.id, presence: { kind: 'app-click', challenge: c2.id, mac: 'ab'.repeat(32) } });
    const c3 = await ask();
    out.touch = await b.call('approve', { id: args.id, presence: { kind: 'touch-id', challenge: c3.id, mac: '00'.repeat(32) } });
    const c4 = await ask();
    out.webauthn = await b.call('approve', { id: args.id, presence: { kind: 'webauthn', challenge: c4.id, response: { id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: 'junk', authenticatorData: 'junk', signature: 'junk' } } } });
    // a proof for a challenge never issued, and one spent already
    out.unknown = await b.call('approve', { id: args.id, presence: { kind: 'polkit', challenge: 'c' + '0'.repeat(24) } });
    out.spent = await b.call('approve', { id: args.id, presence: { kind: 'polkit', challenge: c1.id } });
    return out;
    `,
    { id: tickets.a },
  );
  expect(out.challenge!.result).toMatchObject({ statement: expect.stringContaining(`Allow the held call ${tickets.a}`) });
  for (const kind of ['polkit', 'click', 'touch', 'webauthn', 'unknown', 'spent']) expect(out[kind], kind).toMatchObject({ ok: false, code: 'presence-refused' });
  expect(out.spent!.message).toMatch(/unknown or was used already/);
  nothingLoosened();
});

test('every other loosening call is refused; the tightening ones go through', async () => {
  const out = await agentScript<Record<string, Answer>>(
    airlock.home,
    `
    const b = await connect(home);
    return {
      allowRule: await b.call('rules.add', { action: 'allow', server: '*', tool: '*' }),
      trust: await b.call('trust.set', { server: 'fixture', on: true }),
      tripwire: await b.call('settings.set', { key: 'tripwire', value: 'off' }),
      timeout: await b.call('settings.set', { key: 'ticket-timeout', value: '86400' }),
      pins: await b.call('pins.accept', { server: 'fixture' }),
      protect: await b.call('clients.protect', { client: 'cursor', servers: 'all' }),
      unprotect: await b.call('clients.unprotect', { client: 'cursor', servers: 'all' }),
      confirm: await b.call('presence.confirm', {}),
      estopOff: await b.call('estop', { on: false }),
      // tightening: open to it
      denyRule: await b.call('rules.add', { action: 'deny', server: 'fixture', tool: 'crash' }),
      trustOff: await b.call('trust.set', { server: 'fixture', on: false }),
      tripwireOn: await b.call('settings.set', { key: 'tripwire-calls', value: '5' }),
      leasesEnd: await b.call('presence.end', {}),
    };
    `,
  );
  for (const m of ['allowRule', 'trust', 'tripwire', 'timeout', 'pins', 'unprotect', 'confirm', 'estopOff']) expect(out[m], m).toMatchObject({ ok: false, code: 'presence-required' });
  for (const m of ['denyRule', 'trustOff', 'tripwireOn', 'leasesEnd', 'protect']) expect(out[m], `${m}: ${JSON.stringify(out[m])}`).toMatchObject({ ok: true });
  expect(dbRows(airlock.home, 'SELECT action, server, tool FROM rules')).toEqual([{ action: 'deny', server: 'fixture', tool: 'crash' }]);
  expect(dbRows(airlock.home, "SELECT value FROM settings WHERE key = 'tripwire-calls'")).toEqual([{ value: '5' }]);
  // protected, and still so: the config on disk starts the server through Airlock
  const entry = (JSON.parse(readFileSync(cursorConfig, 'utf8')) as { mcpServers: { notes: { args: string[] } } }).mcpServers.notes;
  expect(entry.args).toContain('wrap');
  nothingLoosened();
});

test('a challenge is good only for the connection that asked for it, and only for the call it names', async () => {
  const out = await agentScript<Record<string, Answer>>(
    airlock.home,
    `
    const one = await connect(home);
    const two = await connect(home);
    const forA = (await one.call('presence.challenge', { method: 'approve', params: { id: args.a } })).result;
    const other = await two.call('approve', { id: args.a, presence: { kind: 'polkit', challenge: forA.id } });
    const forA2 = (await one.call('presence.challenge', { method: 'approve', params: { id: args.a } })).result;
    const ticketB = await one.call('approve', { id: args.b, presence: { kind: 'polkit', challenge: forA2.id } });
    const forOnce = (await one.call('presence.challenge', { method: 'approve', params: { id: args.a } })).result;
    const always = await one.call('approve', { id: args.a, remember: 'always', presence: { kind: 'polkit', challenge: forOnce.id } });
    const forDeny = (await one.call('presence.challenge', { method: 'rules.add', params: { action: 'allow', server: 'fixture', tool: 'echo' } })).result;
    const widened = await one.call('rules.add', { action: 'allow', server: '*', tool: '*', presence: { kind: 'polkit', challenge: forDeny.id } });
    return { other, ticketB, always, widened };
    `,
    tickets,
  );
  expect(out.other).toMatchObject({ ok: false, code: 'presence-refused', message: expect.stringMatching(/another front end/) });
  expect(out.ticketB).toMatchObject({ ok: false, code: 'presence-refused', message: expect.stringMatching(/another action/) });
  expect(out.always).toMatchObject({ ok: false, code: 'presence-refused', message: expect.stringMatching(/another action/) });
  expect(out.widened).toMatchObject({ ok: false, code: 'presence-refused', message: expect.stringMatching(/another action/) });
  nothingLoosened();
});

test('a connection that claims another role gets no further', async () => {
  const out = await agentScript<Record<string, Answer>>(
    airlock.home,
    `
    const ui = await connect(home, 'ui');
    const wrapper = await connect(home, 'wrapper');
    return { ui: await ui.call('approve', { id: args.a }), wrapper: await wrapper.call('approve', { id: args.a }), wrapperRule: await wrapper.call('rules.add', { action: 'allow', server: '*', tool: '*' }) };
    `,
    tickets,
  );
  expect(out.ui).toMatchObject({ ok: false, code: 'presence-required' });
  expect(out.wrapper).toMatchObject({ ok: false });
  expect(out.wrapperRule).toMatchObject({ ok: false });
  nothingLoosened();
});

test('an agent trying 1000 times leaves a handful of presence-refused events, each saying its channel', async () => {
  const before = eventRows(airlock.home, 'presence-refused').length;
  const out = await agentScript<{ refused: number }>(
    airlock.home,
    `
    const b = await connect(home);
    let refused = 0;
    for (let i = 0; i < 1000; i++) {
      const r = await b.call('approve', { id: args.a });
      if (!r.ok && r.code === 'presence-required') refused++;
      const c = (await b.call('presence.challenge', { method: 'approve', params: { id: args.a } })).result;
      const p = await b.call('approve', { id: args.a, presence: { kind: 'app-click', challenge: c.id, mac: 'ab'.repeat(32) } });
      if (!p.ok && p.code === 'presence-refused') refused++;
    }
    return { refused };
    `,
    tickets,
  );
  expect(out.refused).toBe(2000);
  const events = eventRows(airlock.home, 'presence-refused');
  const added = events.slice(before);
  // reported once per 10 s (an earlier test's refusal of approve may still be the one standing)
  expect(events.some((e) => e.detail.method === 'approve')).toBe(true);
  expect(added.length).toBeLessThanOrEqual(4);
  for (const e of added) expect(e.detail).toMatchObject({ method: 'approve', channel: 'cli', statement: expect.stringContaining(tickets.a) });
  nothingLoosened();
});

test('the same loop with a new connection for each try (as `airlock approve` in a loop is) leaves a handful too', async () => {
  const before = eventRows(airlock.home, 'presence-refused').length;
  const out = await agentScript<{ refused: number }>(
    airlock.home,
    `
    let refused = 0;
    for (let i = 0; i < 1200; i++) {
      const b = await connect(home);
      const r = await b.call('approve', { id: args.a });
      if (!r.ok && r.code === 'presence-required') refused++;
      b.close();
    }
    return { refused };
    `,
    tickets,
  );
  expect(out.refused).toBe(1200);
  const added = eventRows(airlock.home, 'presence-refused').slice(before);
  expect(added.length).toBeLessThanOrEqual(4);
  nothingLoosened();
});

test('the held calls are still held, and the person can still deny them', async () => {
  const out = await agentScript<Answer[]>(airlock.home, `const b = await connect(home); return [await b.call('deny', { id: args.a }), await b.call('deny', { id: args.b })];`, tickets);
  expect(out).toMatchObject([{ ok: true }, { ok: true }]);
  await Promise.all(calls);
  await waitFor(() => dbRows(airlock.home, "SELECT id FROM journal WHERE tool = 'delete_all' AND decision = 'deny'").length === 2, 8000, 'both denials journaled');
  expect(executedCalls(fx.log, 'delete_all')).toEqual([]);
});
