/**
 * Loosening wrap flags in a config entry are not the person's choice: a wrapper started with
 * `--trust-read-only-hints` trusts nothing until `airlock trust` says so, its session says the flag was not
 * applied, and `airlock trust` and the journal agree. Ground truth: what the fixture server executed.
 */
import { afterEach, expect, test } from 'vitest';
import { cleanup, cli, cliJson, connectWrapped, executedCalls, fixture, startDaemon, tempDir, waitForSessions, waitForTicket } from '../helpers/airlock.js';

afterEach(cleanup);

test('--trust-read-only-hints alone trusts nothing: the read-only call is held, and the person is told', async () => {
  const home = tempDir();
  await startDaemon(home);
  const fx = fixture(home);
  // the flag as an edited config entry would give it, without `airlock trust fixture on`
  const w = await connectWrapped({ home, flags: ['--trust-read-only-hints'], command: fx.command, args: fx.args, env: fx.env });
  await waitForSessions(home, 1);
  const listed = await w.client.listTools();
  expect(listed.tools.find((t) => t.name === 'echo')!.annotations?.readOnlyHint).toBe(false);
  const call = w.client.callTool({ name: 'echo', arguments: { text: 'held' } });
  const ticket = await waitForTicket(home, 'echo');
  expect(executedCalls(fx.log)).toEqual([]);
  expect(await cliJson<string[]>(home, ['trust'])).toEqual([]);
  const out = await cli(home, ['events', '--json']);
  const events = out.stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as { type: string; detail: unknown });
  expect(events).toContainEqual(expect.objectContaining({ type: 'wrap-flags-ignored', detail: expect.objectContaining({ flags: ['--trust-read-only-hints'] }) }));
  expect(w.stderr()).toMatch(/--trust-read-only-hints is not applied to "fixture"/);
  await cli(home, ['deny', ticket.id]);
  await call;
  expect(executedCalls(fx.log)).toEqual([]);
  const history = JSON.stringify(await cliJson<unknown>(home, ['history']));
  expect(history).not.toContain('trusted by your setting');
});
