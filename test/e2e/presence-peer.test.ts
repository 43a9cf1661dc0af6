/**
 * What the broker knows of the process at the other end of its socket (ipc/peer.ts: its pid, uid, executable and
 * whether it has a terminal), as the agent's refused and permitted calls record it. These expect the OS's real
 * peer credentials: they hold once the native peer lookup is in (a broker that cannot see its peer says "the CLI"
 * instead, and these fail).
 */
import { realpathSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cleanup, waitFor, waitForSessions, waitForTicket, type Wrapped } from '../helpers/airlock.js';
import { agentCli, agentScript, dbRows, eventRows } from '../helpers/agent.js';
import { type Airlock, startAirlock, wrapFixture } from '../helpers/e2e.js';

let airlock: Airlock;
let w: Wrapped;
const NODE = realpathSync(process.execPath);
const NO_TERMINAL = /a process without a terminal \(pid (\d+), node\)/;

beforeAll(async () => {
  airlock = await startAirlock({ presence: true });
  ({ w } = await wrapFixture(airlock.home));
  await waitForSessions(airlock.home, 1);
});
afterAll(cleanup);

test('the CLI from the agent\'s shell: approve says the request came from a process without a terminal; deny records that origin', async () => {
  const { home } = airlock;
  const call = w.client.callTool({ name: 'delete_all', arguments: { text: 'peer' } });
  const ticket = await waitForTicket(home, 'delete_all');
  const approve = await agentCli(home, ['approve', ticket.id]);
  expect(approve.code).not.toBe(0);
  expect(approve.stderr).toMatch(/this request came from a process without a terminal \(pid \d+, node\), which cannot prove a person is there/);
  expect(approve.stderr).toMatch(/run `airlock approve` in a terminal/);

  const deny = await agentCli(home, ['deny', ticket.id]);
  expect(deny.code, deny.stderr).toBe(0);
  await call;
  await waitFor(() => dbRows(home, 'SELECT id FROM journal WHERE ticket_id = ?', ticket.id).length === 1, 8000, 'the denial journaled');
  const [row] = dbRows<{ detail: string }>(home, 'SELECT detail FROM journal WHERE ticket_id = ?', ticket.id);
  expect(row!.detail).toMatch(/denied from a process without a terminal \(pid \d+, node\)/);

  const refused = eventRows(home, 'presence-refused').filter((e) => e.detail.method === 'approve');
  expect(refused.length).toBeGreaterThan(0);
  expect(refused[0]!.detail.peer).toEqual({ pid: expect.any(Number), uid: process.getuid!(), exe: NODE, tty: false });
});

test("a script speaking the protocol: the refusal's event names its very pid and executable", async () => {
  const { home } = airlock;
  const call = w.client.callTool({ name: 'delete_all', arguments: { text: 'script' } });
  const ticket = await waitForTicket(home, 'delete_all');
  const out = await agentScript<{ pid: number; answer: { ok: boolean; code?: string; message?: string } }>(
    home,
    `const b = await connect(home); return { pid: process.pid, answer: await b.call('rules.add', { action: 'allow', server: '*', tool: '*' }) };`,
  );
  expect(out.answer).toMatchObject({ ok: false, code: 'presence-required' });
  expect(out.answer.message).toMatch(NO_TERMINAL);
  expect(NO_TERMINAL.exec(out.answer.message!)![1]).toBe(String(out.pid));
  const event = eventRows(home, 'presence-refused').find((e) => e.detail.method === 'rules.add');
  expect(event?.detail).toMatchObject({ channel: 'cli', peer: { pid: out.pid, uid: process.getuid!(), exe: NODE, tty: false } });
  expect((await agentCli(home, ['deny', ticket.id])).code).toBe(0);
  await call;
});
