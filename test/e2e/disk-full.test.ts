/**
 * A full disk under the data dir (a 4 MB tmpfs, filled by a same-user process): the broker stays up, E-Stop can
 * be turned on and holds, calls that cannot be journaled are refused, status says the disk is full, and once
 * there is room again every call the server ran is in the journal and E-Stop is on disk. Needs root for the
 * mount: when the mount fails, the test fails (nothing is skipped).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { fill, mountTmpfs } from '../helpers/small-disk.js';
import { cleanup, cli, cliJson, connectWrapped, decisionOf, executedCalls, fixture, onCleanup, processAlive, startDaemon, tempDir, textOf, waitFor, waitForSessions } from '../helpers/airlock.js';

afterEach(cleanup);

/** A 4 MB tmpfs as the data dir; unmounted at cleanup. */
function smallDisk(): string {
  const dir = join(tempDir('al-disk-'), 'data');
  mkdirSync(dir);
  mountTmpfs(dir, '4m', onCleanup);
  return dir;
}

interface Status {
  pid: number;
  estop: boolean;
  diskFull?: { since: number; error: string } | null;
}

describe('a full disk under the data dir', () => {
  test('the broker stays up, E-Stop holds, unjournaled calls are refused, and nothing that ran is lost', async () => {
    const home = smallDisk();
    const daemon = await startDaemon(home);
    // the fixture's log is the ground truth: it lives elsewhere, on a disk with room
    const fx = fixture(tempDir());
    const w = await connectWrapped({ home, trust: true, command: fx.command, args: fx.args, env: fx.env });
    await waitForSessions(home, 1);
    for (let i = 0; i < 20; i++) expect(textOf(await w.client.callTool({ name: 'echo', arguments: { text: `before-${i}` } }))).toContain(`before-${i}`);

    // the calls before are on disk first: a batch still on its way would meet the full disk and make the very
    // first call after the fill a refusal
    await waitFor(() => {
      const db = new Database(join(home, 'airlock.db'), { readonly: true, fileMustExist: true });
      try {
        return (db.prepare("SELECT count(*) AS n FROM journal WHERE tool = 'echo' AND outcome = 'ok'").get() as { n: number }).n >= 20;
      } finally {
        db.close();
      }
    }, 20_000, 'the calls before the fill to be journaled');
    const filler = fill(home);
    // calls go on until a journal write fails; from then on every call is refused, saying why
    let refusal = '';
    for (let i = 0; i < 5000 && !refusal; i++) {
      const r = await w.client.callTool({ name: 'echo', arguments: { text: `full-${i}`.padEnd(2000, '.') } });
      if (decisionOf(r)?.decision === 'deny') refusal = textOf(r);
    }
    expect(refusal).toMatch(/disk .*full/);
    const status = await cliJson<Status>(home, ['status']);
    expect(status.diskFull?.error).toBeTruthy();
    expect((await cli(home, ['status'])).stdout).toMatch(/Disk: FULL/);

    // E-Stop on a full disk: accepted, held, and enforced
    const on = await cli(home, ['estop', 'on']);
    expect(on.stderr).toBe('');
    expect(on.code).toBe(0);
    expect((await cliJson<Status>(home, ['estop', 'status'])).estop).toBe(true);
    const stopped = await w.client.callTool({ name: 'echo', arguments: { text: 'during-estop' } });
    expect(decisionOf(stopped)?.decidedBy).toBe('estop');
    expect(processAlive(daemon.proc.pid!)).toBe(true);

    // room again: E-Stop reaches the disk, the disk is no longer full, and every call that ran is journaled
    rmSync(filler);
    await waitFor(async () => (await cliJson<Status>(home, ['status'])).diskFull == null, 20_000, 'the disk to be writable again');
    const ran = executedCalls(fx.log, 'echo').map((e) => String((e.arguments as { text: string }).text));
    expect(ran).not.toContain('during-estop');
    const journaled = () => {
      const db = new Database(join(home, 'airlock.db'), { readonly: true, fileMustExist: true });
      try {
        const rows = db.prepare("SELECT arguments FROM journal WHERE tool = 'echo'").all() as { arguments: string }[];
        const texts = new Set(rows.map((r) => String((JSON.parse(r.arguments) as { text: string }).text)));
        const estop = (db.prepare("SELECT value FROM settings WHERE key = 'estop'").get() as { value: string } | undefined)?.value;
        return { missing: ran.filter((t) => !texts.has(t)).length, estop };
      } finally {
        db.close();
      }
    };
    await waitFor(() => journaled().missing === 0 && journaled().estop === 'on', 20_000, 'the journal and E-Stop on disk').catch(() => {});
    expect(journaled()).toEqual({ missing: 0, estop: 'on' });
    expect(ran.length).toBeGreaterThan(20);

    // and it holds across a restart
    await daemon.stop();
    await startDaemon(home);
    expect((await cliJson<Status>(home, ['estop', 'status'])).estop).toBe(true);
  }, 120_000);
});
