/**
 * The agent in the browser UI's shoes: it signs in with the link the daemon printed to its stderr (a log it can
 * read) or that `airlock ui` prints in its own shell, and calls the UI's HTTP API as the page does. A UI session
 * is a front end, not a proof: approving and loosening are refused (403, presence-required), denying and E-Stop
 * go through. Ground truth: what the fixture server ran, and the database on disk.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cleanup, executedCalls, waitFor, waitForSessions, waitForTicket, type Wrapped } from '../helpers/airlock.js';
import { agentCli, dbRows, eventRows } from '../helpers/agent.js';
import { type Fixture, startUiAirlock, type UiAirlock, wrapFixture } from '../helpers/e2e.js';
import { signIn, type UiSignIn } from '../helpers/ui-sign-in.js';

let ui: UiAirlock;
let fx: Fixture;
let w: Wrapped;

beforeAll(async () => {
  ui = await startUiAirlock({ presence: true });
  ({ fx, w } = await wrapFixture(ui.home));
  await waitForSessions(ui.home, 1);
});
afterAll(cleanup);

/** A POST of the UI's API as the page sends it: the answer's status and body. */
async function api(s: UiSignIn, method: string, params: unknown): Promise<{ status: number; body: { result?: unknown; error?: { code: string; message: string } } }> {
  const res = await fetch(`${ui.origin}/api/call/${method}`, { method: 'POST', headers: { ...s.headers, Origin: ui.origin, 'Content-Type': 'application/json' }, body: JSON.stringify(params) });
  return { status: res.status, body: (await res.json()) as { result?: unknown } };
}

test("with the daemon's printed link: approve is 403 presence-required and the call does not run; deny goes through", async () => {
  // what the daemon wrote to its stderr (a log file, a terminal's scrollback): the agent reads it
  const session = await signIn(ui.link);
  const call = w.client.callTool({ name: 'delete_all', arguments: { text: 'from the UI' } });
  const ticket = await waitForTicket(ui.home, 'delete_all');

  const approve = await api(session, 'approve', { id: ticket.id });
  expect(approve.status).toBe(403);
  expect(approve.body.error).toMatchObject({ code: 'presence-required' });
  const always = await api(session, 'approve', { id: ticket.id, remember: 'always' });
  expect(always.status).toBe(403);
  // a made-up app proof for a challenge it asked for
  const challenge = await api(session, 'presence.challenge', { method: 'approve', params: { id: ticket.id } });
  expect(challenge.status).toBe(200);
  const id = (challenge.body.result as { id: string }).id;
  const forged = await api(session, 'approve', { id: ticket.id, presence: { kind: 'app-click', challenge: id, mac: 'ab'.repeat(32) } });
  expect(forged.status).toBe(403);
  expect(forged.body.error).toMatchObject({ code: 'presence-refused' });
  expect(executedCalls(fx.log, 'delete_all')).toEqual([]);
  expect(dbRows(ui.home, 'SELECT resolution FROM tickets WHERE id = ?', ticket.id)).toEqual([{ resolution: null }]);
  expect(dbRows(ui.home, "SELECT id FROM rules WHERE action = 'allow'")).toEqual([]);

  const deny = await api(session, 'deny', { id: ticket.id });
  expect(deny.status).toBe(200);
  await call;
  await waitFor(() => dbRows(ui.home, 'SELECT id FROM journal WHERE ticket_id = ?', ticket.id).length === 1, 8000, 'the denial journaled');
  const [row] = dbRows<{ decision: string; detail: string }>(ui.home, 'SELECT decision, detail FROM journal WHERE ticket_id = ?', ticket.id);
  expect(row!.decision).toBe('deny');
  expect(row!.detail).toContain('denied from');
  expect(executedCalls(fx.log, 'delete_all')).toEqual([]);
});

test('with a link `airlock ui` printed in the agent\'s shell: loosening is refused, E-Stop on goes through and off does not', async () => {
  const link = await agentCli(ui.home, ['ui']);
  expect(link.code, link.stderr).toBe(0);
  const fresh = /^(http:\/\/localhost:\d+\/\?token=[A-Za-z0-9_-]{43})$/m.exec(link.stdout)?.[1];
  expect(fresh, link.stdout).toBeDefined();
  const session = await signIn(fresh!);
  for (const [method, params] of [
    ['rules.add', { action: 'allow', server: '*', tool: '*' }],
    ['trust.set', { server: 'fixture', on: true }],
    ['settings.set', { key: 'tripwire', value: 'off' }],
    ['pins.accept', { server: 'fixture' }],
  ] as const) {
    const r = await api(session, method, params);
    expect(r.status, method).toBe(403);
    expect(r.body.error, method).toMatchObject({ code: 'presence-required' });
  }
  expect(dbRows(ui.home, "SELECT id FROM rules WHERE action = 'allow'")).toEqual([]);
  expect(dbRows(ui.home, 'SELECT server FROM server_settings WHERE trust_read_only_hints = 1')).toEqual([]);
  expect(dbRows(ui.home, "SELECT value FROM settings WHERE key = 'tripwire'")).toEqual([]);

  expect((await api(session, 'estop', { on: true })).status).toBe(200);
  expect(dbRows(ui.home, "SELECT value FROM settings WHERE key = 'estop'")).toEqual([{ value: 'on' }]);
  const off = await api(session, 'estop', { on: false });
  expect(off.status).toBe(403);
  expect(dbRows(ui.home, "SELECT value FROM settings WHERE key = 'estop'")).toEqual([{ value: 'on' }]);

  const refused = eventRows(ui.home, 'presence-refused');
  for (const m of ['approve', 'rules.add', 'trust.set', 'settings.set', 'pins.accept', 'estop']) {
    expect(refused.some((e) => e.detail.method === m && e.detail.channel === 'ui'), m).toBe(true);
  }
  expect(eventRows(ui.home, 'loosened')).toEqual([]);
});
