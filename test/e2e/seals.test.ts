/**
 * State that appeared without a proof is not believed, end to end: an allow rule put into the database with
 * better-sqlite3 while the broker is stopped (as an agent would with the sqlite3 CLI) does not let a call
 * through; the real wrapper holds it and the fixture server never runs it. `airlock status` and `airlock rules`
 * say so; `airlock rules remove` takes the row away. Real daemon, real CLI.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, cli, connectWrapped, executedCalls, fixture, startDaemon, tempDir, waitForSessions, waitForTicket } from '../helpers/airlock.js';

afterEach(cleanup);

describe('a rule put into the database while the broker is stopped', () => {
  test('is ignored and reported; the call is still held and the server does not run it', async () => {
    const home = tempDir();
    const first = await startDaemon(home);
    await first.stop();
    const db = new Database(join(home, 'airlock.db'));
    db.prepare("INSERT INTO rules (id, action, server, tool, created_at) VALUES ('rforged', 'allow', '*', 'write_note', 1)").run();
    db.close();

    await startDaemon(home);
    const status = await cli(home, ['status']);
    expect(status.stdout).toContain('a rule appeared in the database without your approval: ignored (allow * → write_note)');
    const rules = await cli(home, ['rules']);
    expect(rules.stdout).toMatch(/rforged\s+IGNORED/);

    const fx = fixture(home);
    const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
    await waitForSessions(home, 1);
    const call = w.client.callTool({ name: 'write_note', arguments: { text: 'forged' } });
    const ticket = await waitForTicket(home, 'write_note');
    expect(executedCalls(fx.log, 'write_note')).toEqual([]);
    expect((await cli(home, ['deny', ticket.id])).code).toBe(0);
    const result = (await call) as { isError?: boolean };
    expect(result.isError).toBe(true);
    // ground truth: the server never saw the call
    expect(executedCalls(fx.log, 'write_note')).toEqual([]);

    expect((await cli(home, ['rules', 'remove', 'rforged'])).code).toBe(0);
    expect((await cli(home, ['status'])).stdout).not.toContain('without your approval');
  });
});
