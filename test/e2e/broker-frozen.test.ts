/**
 * A broker that hangs rather than dies (SIGSTOP: the socket stays open, nothing answers). The wrapper must
 * notice by itself and refuse every call within 2 s, the CLI must say so rather than hang, and everything must
 * come back when the broker does.
 */
import { afterEach, expect, test } from 'vitest';
import {
  cleanup,
  cli,
  cliJson,
  connectWrapped,
  decisionOf,
  executedCalls,
  fixture,
  onCleanup,
  startDaemon,
  tempDir,
  waitFor,
  waitForSessions,
  waitForTicket,
} from '../helpers/airlock.js';

afterEach(cleanup);

async function timed<T>(p: Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  const value = await p;
  return { value, ms: Date.now() - t0 };
}

test('a stopped broker: held and allowed calls are refused within 2 s, the CLI says so, and all resumes after', async () => {
  const home = tempDir();
  const daemon = await startDaemon(home);
  await cli(home, ['rules', 'add', 'allow', '--server', 'fixture', '--tool', 'echo']);
  const fx = fixture(home);
  const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
  await waitForSessions(home, 1);
  expect((await w.client.callTool({ name: 'echo', arguments: { text: 'before' } })).isError).toBeFalsy();

  const held = w.client.callTool({ name: 'write_note', arguments: {} });
  await waitForTicket(home, 'write_note');

  const pid = daemon.proc.pid!;
  process.kill(pid, 'SIGSTOP');
  onCleanup(() => {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // already gone
    }
  });
  const stoppedAt = Date.now();

  // the held call: its broker stopped answering, so it is refused, not left hanging
  const heldResult = await held;
  expect(Date.now() - stoppedAt).toBeLessThan(2000);
  expect(heldResult.isError).toBe(true);
  expect(decisionOf(heldResult)).toMatchObject({ decision: 'deny', decidedBy: 'broker-down' });

  // an allowed call no longer runs on the cached policy, and a call that asks does not wait forever
  const allowed = await timed(w.client.callTool({ name: 'echo', arguments: { text: 'during' } }));
  expect(allowed.ms).toBeLessThan(2000);
  expect(allowed.value.isError).toBe(true);
  expect(decisionOf(allowed.value)).toMatchObject({ decidedBy: 'broker-down' });
  const asking = await timed(w.client.callTool({ name: 'delete_all', arguments: {} }));
  expect(asking.ms).toBeLessThan(2000);
  expect(asking.value.isError).toBe(true);

  // the CLI cannot get through either, and says why within its own bound instead of hanging
  const estop = await timed(cli(home, ['estop', 'on']));
  expect(estop.value.code).not.toBe(0);
  expect(estop.value.stderr).toMatch(/did not answer/);
  expect(estop.ms).toBeLessThan(5000);

  process.kill(pid, 'SIGCONT');
  await waitFor(async () => {
    const r = await w.client.callTool({ name: 'echo', arguments: { text: 'after' } });
    return r.isError !== true;
  }, 10_000, 'calls to run again after the broker resumed');
  expect(executedCalls(fx.log, 'echo').map((e) => (e.arguments as { text: string }).text)).toEqual(['before', 'after']);
  expect(executedCalls(fx.log, 'write_note')).toHaveLength(0);
  expect(executedCalls(fx.log, 'delete_all')).toHaveLength(0);
  const status = await cliJson<{ estop: boolean }>(home, ['status']);
  expect(status.estop).toBe(false);
});
