/**
 * `airlock daemon --no-presence`, the person's own choice for a headless box: listed in the daemon's help, said
 * in `status`, recorded as an event, and in every approval. A start without proofs after proofs were in use
 * (the `presence.used` setting, which a verified proof sets) is said louder: something else may have started it.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { cleanup, cli, executedCalls, tempDir, waitFor, waitForTicket } from '../helpers/airlock.js';
import { agentCli, agentScript, dbRows, eventRows } from '../helpers/agent.js';
import { airlockWithFixture, startAirlock } from '../helpers/e2e.js';

afterEach(cleanup);

test('`airlock daemon --help` lists --no-presence and what it gives away', async () => {
  const help = await cli(tempDir(), ['daemon', '--help']);
  expect(help.code).toBe(0);
  expect(help.stdout + help.stderr).toMatch(/--no-presence: let loosening \(approving, allow rules, trust, E-Stop off, looser settings\) through/);
});

test('with --no-presence: status warns, a presence-off event is recorded, an approval says it had no proof', async () => {
  const { home, daemon, fx, w } = await airlockWithFixture();
  expect(daemon.stderr()).toMatch(/warning: presence proofs are off \(--no-presence\)/);
  const status = await cli(home, ['status']);
  expect(status.stdout).toMatch(/WARNING: Presence proofs are off \(the broker was started with --no-presence\)/);
  expect(status.stdout).not.toMatch(/Proofs were in use before/);
  expect(eventRows(home, 'presence-off')).toEqual([expect.objectContaining({ detail: { after: false } })]);

  const call = w.client.callTool({ name: 'delete_all', arguments: { text: 'x' } });
  const ticket = await waitForTicket(home, 'delete_all');
  // the agent's shell can approve now: that is what --no-presence means, and the journal says so
  const approve = await agentCli(home, ['approve', ticket.id]);
  expect(approve.code, approve.stderr).toBe(0);
  await call;
  expect(executedCalls(fx.log, 'delete_all')).toHaveLength(1);
  await waitFor(() => dbRows(home, 'SELECT id FROM journal WHERE ticket_id = ?', ticket.id).length === 1, 8000, 'the approval journaled');
  const [row] = dbRows<{ decision: string; detail: string }>(home, 'SELECT decision, detail FROM journal WHERE ticket_id = ?', ticket.id);
  expect(row!.decision).toBe('allow');
  expect(row!.detail).toContain('without a presence proof (the broker runs with --no-presence)');
  expect(row!.detail).not.toContain('by you');
  expect(eventRows(home, 'loosened')).toContainEqual(expect.objectContaining({ detail: expect.objectContaining({ method: 'approve', via: expect.objectContaining({ proof: 'none', noPresence: true }) }) }));
});

test('a restart with --no-presence after proofs were in use: status says proofs were in use before this start', async () => {
  const home = tempDir();
  // a broker with proofs ran first; that a proof was verified there is what `presence.used` keeps. No proof can
  // be verified by an out-of-process test (polkit refuses here, the app's key is the app's), so the setting is
  // written as that broker would have written it, while no broker runs
  const first = await startAirlock({ home, presence: true });
  expect((await cli(home, ['status'])).stdout).not.toMatch(/WARNING/);
  await first.daemon.stop();
  const db = new Database(join(home, 'airlock.db'));
  db.prepare("INSERT INTO settings (key, value) VALUES ('presence.used', '1') ON CONFLICT(key) DO UPDATE SET value = excluded.value").run();
  db.close();

  await startAirlock({ home });
  const status = await cli(home, ['status']);
  expect(status.stdout).toMatch(/WARNING: Presence proofs are off/);
  expect(status.stdout).toMatch(/Proofs were in use before this start: if you did not start it this way, something else did/);
  expect(eventRows(home, 'presence-off').at(-1)).toMatchObject({ detail: { after: true } });
  // the agent cannot make the warning go away: confirming takes a proof even with proofs off
  const confirm = await agentScript<{ ok: boolean; code?: string }>(home, `const b = await connect(home); return b.call('presence.confirm', {});`);
  expect(confirm).toMatchObject({ ok: false, code: 'presence-required' });
  expect(dbRows(home, "SELECT value FROM settings WHERE key = 'presence.confirmed'")).not.toContainEqual({ value: '1' });
  expect((await cli(home, ['status'])).stdout).toMatch(/Proofs were in use before this start/);
});
