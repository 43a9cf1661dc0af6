/**
 * The wrapped server itself turns on Airlock: it finds the data dir (its environment, the wrapper's command line
 * or environment), reads the secret, connects to the broker and tries to approve its own held call
 * (test/fixtures/servers/self-approver.mjs). Refused: the secret makes it a front end, not a person. And the
 * wrapper hands it nothing of Airlock's: its environment, read from /proc, holds no AIRLOCK_* variable but the
 * tree's marker. Ground truth: what the fixture server ran, its own log of its tries, and the database.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { cleanup, connectWrapped, executedCalls, fixture, ROOT, waitFor, waitForTicket } from '../helpers/airlock.js';
import { agentCli, dbRows } from '../helpers/agent.js';
import { startAirlock } from '../helpers/e2e.js';

const SELF_APPROVER = join(ROOT, 'test', 'fixtures', 'servers', 'self-approver.mjs');

afterEach(cleanup);

type Answer = { ok: boolean; code?: string; message?: string };
type Entry = { pid: number; env?: string[]; home?: string | null; from?: string; ticket?: string; plain?: Answer; proved?: Answer; rule?: Answer };

const entries = (log: string): Entry[] => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry) : []);

function environ(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

test.each([
  ['AIRLOCK_HOME in the environment the client gives the wrapper', false],
  ['--home on the wrapper\'s command line (as `airlock protect` writes it)', true],
] as const)('a server that approves its own held call is refused (%s); its environment carries no AIRLOCK_* variable', async (_how, withHomeFlag) => {
  const { home } = await startAirlock({ presence: true });
  const fx = fixture(home);
  const attackLog = join(home, 'attack.log');
  const w = await connectWrapped({
    home,
    command: process.execPath,
    args: [SELF_APPROVER],
    env: { ...fx.env, ATTACK_LOG: attackLog, ...(withHomeFlag ? { AIRLOCK_HOME: '' } : {}) },
    ...(withHomeFlag ? { flags: ['--home', home] } : {}),
  });
  const call = w.client.callTool({ name: 'delete_all', arguments: { text: 'everything' } });
  const ticket = await waitForTicket(home, 'delete_all');
  await waitFor(() => entries(attackLog).some((e) => e.ticket === ticket.id), 8000, 'the server to try its ticket');

  const log = entries(attackLog);
  const first = log[0]!;
  // what the server was started with: none of Airlock's variables (the tree marker is the one Airlock adds)
  expect(first.env).toEqual(['AIRLOCK_PROCESS_TREE']);
  const env = environ(first.pid);
  expect(Object.keys(env).filter((k) => /^AIRLOCK_/i.test(k))).toEqual(['AIRLOCK_PROCESS_TREE']);
  expect(Object.values(env).join('\n')).not.toContain(readFileSync(join(home, 'secret'), 'utf8').trim());
  // it still found the data dir (the wrapper's own command line and environment are readable to it): the broker is what stands
  expect(log.find((e) => e.from)).toMatchObject({ home, from: withHomeFlag ? "the wrapper's --home" : "the wrapper's environment" });
  const tried = log.find((e) => e.ticket === ticket.id)!;
  expect(tried.plain).toMatchObject({ ok: false, code: 'presence-required' });
  expect(tried.proved).toMatchObject({ ok: false, code: 'presence-refused' });
  expect(tried.rule).toMatchObject({ ok: false, code: 'presence-required' });

  expect(executedCalls(fx.log, 'delete_all')).toEqual([]);
  expect(dbRows(home, 'SELECT resolution FROM tickets WHERE id = ?', ticket.id)).toEqual([{ resolution: null }]);
  expect(dbRows(home, "SELECT id FROM rules WHERE action = 'allow'")).toEqual([]);
  expect((await agentCli(home, ['deny', ticket.id])).code).toBe(0);
  await call;
  expect(executedCalls(fx.log, 'delete_all')).toEqual([]);
});
