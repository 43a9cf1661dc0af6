/**
 * `airlock daemon --no-presence`, the person's own choice for a headless box: listed in the daemon's help, said
 * in `status`, recorded as an event, and in every approval. A start without proofs after proofs were in use
 * (the `presence.used` setting, which a verified proof sets) is said louder: something else may have started it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Writable } from 'node:stream';
import { appProofMac } from '../../proxy-core/src/broker/presence/presence.js';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { afterEach, expect, test } from 'vitest';
import { cleanup, CLI, cli, executedCalls, tempDir, waitFor, waitForTicket } from '../helpers/airlock.js';
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
  // a broker with proofs ran first, and a proof was verified there: the app's (a MAC under the key it handed over
  // on fd 3), for an allow rule. The broker itself keeps that proofs are in use (a sealed setting)
  const key = randomBytes(32);
  const first = spawn(process.execPath, [CLI, 'daemon', '--app-key-fd', '3'], { env: { ...process.env, AIRLOCK_HOME: home }, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  (first.stdio[3] as Writable).end(`${key.toString('hex')}\n`);
  await new Promise<void>((resolve, reject) => {
    let err = '';
    first.stderr!.on('data', (d: Buffer) => (err += d.toString()) && /broker running/.test(err) && resolve());
    first.once('exit', () => reject(new Error(err)));
  });
  expect((await cli(home, ['status'])).stdout).not.toMatch(/WARNING/);
  const app = await BrokerClient.connect({ dir: home, role: 'app' });
  const params = { action: 'allow' as const, server: 'fixture', tool: 'write_note' };
  const c = await app.call('presence.challenge', { method: 'rules.add', params });
  await app.callWithProof('rules.add', params, { kind: 'app-click', challenge: c.id, mac: appProofMac(key, 'app-click', Buffer.from(c.challenge, 'base64url')) });
  app.close();
  first.kill('SIGTERM');
  await new Promise((r) => first.once('exit', r));

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
