/**
 * Rules whose globs are built to make matching slow, added as the agent can add them (a deny rule tightens, so it
 * needs no presence proof), against a real broker and a real wrapper: the calls are still decided at once, the
 * allowed one runs (the fixture's own log says so) and the broker keeps answering. Matched as backtracking regular
 * expressions, each of these patterns held a process for longer than the universe has been around.
 */
import { afterEach, expect, test } from 'vitest';
import { cleanup, cli, executedCalls, textOf } from '../helpers/airlock.js';
import { startBroker, wrapFixture } from '../helpers/e2e.js';

afterEach(cleanup);

test('deny rules of a hundred stars, on names and on arguments, hold neither the broker nor the wrapper', async () => {
  const { home, broker } = await startBroker();
  expect((await cli(home, ['rules', 'add', 'allow', '--server', 'fixture', '--tool', 'echo'])).code).toBe(0);
  for (const args of [
    ['--server', `${'*'.repeat(100)}Q`, '--tool', '*'],
    ['--server', 'fixture', '--tool', `${'*e'.repeat(60)}Q`],
    ['--server', 'fixture', '--tool', 'echo', '--arg', `text=${'*x'.repeat(60)}Q`],
  ]) {
    const added = await cli(home, ['rules', 'add', 'deny', ...args]);
    expect(added.code, added.stderr).toBe(0);
  }
  const { fx, w } = await wrapFixture(home);
  const text = 'x'.repeat(300);
  const t0 = performance.now();
  const result = await w.client.callTool({ name: 'echo', arguments: { text } });
  expect(textOf(result)).toContain(text);
  expect(executedCalls(fx.log, 'echo').map((c) => (c.arguments as { text: string }).text)).toEqual([text]);
  // and the broker, which matched the same globs when it pushed the policy, answers a front end
  expect(await broker.call('status', {})).toMatchObject({ pid: expect.any(Number) });
  expect(performance.now() - t0).toBeLessThan(10_000);
}, 60_000);
