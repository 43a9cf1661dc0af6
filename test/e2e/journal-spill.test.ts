/**
 * Executed calls are never lost from the journal, whatever happens to the broker: frozen, then killed, while
 * wrappers are busy; killed and started again and again under load; wrappers that exit while it is down; a flood
 * of refused calls while it is away. Ground truth is the fixture servers' own log of what they ran, compared with
 * the journal's rows on disk.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cleanup, cli, connectWrapped, decisionOf, executedCalls, fixture, startDaemon, tempDir, waitFor, waitForSessions, type Wrapped } from '../helpers/airlock.js';

afterEach(cleanup);

/** The texts of the echo calls each fixture ran. */
function ranTexts(logs: string[]): Set<string> {
  const out = new Set<string>();
  for (const log of logs) for (const e of executedCalls(log, 'echo')) out.add(String((e.arguments as { text?: unknown }).text));
  return out;
}

/** The texts of the echo calls the journal on disk holds (any outcome). */
function journaledTexts(home: string): Set<string> {
  const db = new Database(join(home, 'airlock.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare("SELECT arguments FROM journal WHERE tool = 'echo'").all() as { arguments: string }[];
    return new Set(rows.map((r) => String((JSON.parse(r.arguments) as { text?: unknown }).text)));
  } finally {
    db.close();
  }
}

/** Events of one type, from the database (the live stream's newest page is mostly 'call' events). */
function storedEvents(home: string, kind: string): { detail: Record<string, unknown> }[] {
  const db = new Database(join(home, 'airlock.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT detail FROM events WHERE kind = ? ORDER BY seq').all(kind) as { detail: string }[];
    return rows.map((r) => ({ detail: JSON.parse(r.detail) as Record<string, unknown> }));
  } finally {
    db.close();
  }
}

const missing = (home: string, logs: string[]) => {
  const held = journaledTexts(home);
  return [...ranTexts(logs)].filter((t) => !held.has(t));
};

/** Calls echo one after another with a unique text until stopped; counts the refusals it got. */
function load(w: Wrapped, name: string) {
  let stop = false;
  let refused = 0;
  let n = 0;
  const done = (async () => {
    while (!stop) {
      try {
        const r = await w.client.callTool({ name: 'echo', arguments: { text: `${name}-${++n}` } });
        if (decisionOf(r)?.decision === 'deny') refused++;
      } catch {
        refused++;
      }
    }
  })();
  return {
    get refused() {
      return refused;
    },
    stop: () => {
      stop = true;
      return done;
    },
  };
}

async function killNow(pid: number, proc: { exitCode: number | null; signalCode: string | null; once(e: 'exit', f: () => void): unknown }): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  process.kill(pid, 'SIGKILL');
  await exited;
}

describe('the broker frozen and then killed under load', () => {
  test('calls the servers ran meanwhile reach the journal, even from wrappers that exited before it came back', async () => {
    const home = tempDir();
    const daemon = await startDaemon(home);
    const fixtures = [0, 1, 2].map(() => fixture(home));
    const wrapped: Wrapped[] = [];
    for (const fx of fixtures) wrapped.push(await connectWrapped({ home, trust: true, command: fx.command, args: fx.args, env: fx.env }));
    await waitForSessions(home, 3);
    const loads = wrapped.map((w, i) => load(w, `w${i}`));
    const logs = fixtures.map((f) => f.log);
    await waitFor(() => ranTexts(logs).size >= 30, 20_000, 'calls to run');

    // frozen: the socket stays open, so each wrapper goes on forwarding what its policy allows until its heartbeat
    // gives up on the broker; those calls run, and the broker never acknowledges their entries
    const frozenAt = ranTexts(logs).size;
    process.kill(daemon.proc.pid!, 'SIGSTOP');
    await waitFor(() => loads.every((l) => l.refused > 0), 20_000, 'every wrapper to refuse calls (broker down)');
    expect(ranTexts(logs).size).toBeGreaterThan(frozenAt);
    for (const l of loads) await l.stop();
    // the wrappers leave while the broker is away
    for (const w of wrapped) await w.close();
    await killNow(daemon.proc.pid!, daemon.proc);

    await startDaemon(home);
    const ran = ranTexts(logs).size;
    await waitFor(() => missing(home, logs).length === 0, 20_000, 'the journal to hold every call that ran').catch(() => {});
    expect({ ran, missing: missing(home, logs).length }).toEqual({ ran, missing: 0 });
    // the spill files were taken in and removed
    const taken = storedEvents(home, 'spill-taken');
    expect(taken.length).toBeGreaterThan(0);
    expect(taken.filter((e) => e.detail.error !== undefined)).toEqual([]);
  }, 90_000);

  test('killed and started again 6 times under load: every call a server ran is journaled, a denied tool never ran, and each wrapper answers after the last start', async () => {
    const home = tempDir();
    let daemon = await startDaemon(home);
    await cli(home, ['rules', 'add', 'deny', '--server', 'fixture', '--tool', 'write_note']);
    const fixtures = [0, 1].map(() => fixture(home));
    const wrapped: Wrapped[] = [];
    for (const fx of fixtures) wrapped.push(await connectWrapped({ home, trust: true, command: fx.command, args: fx.args, env: fx.env }));
    await waitForSessions(home, 2);
    const logs = fixtures.map((f) => f.log);
    const loads = wrapped.map((w, i) => load(w, `w${i}`));
    // beside the allowed calls, calls of the denied tool, through every kill and start
    let denying = true;
    let deniedTries = 0;
    const denied = wrapped.map(async (w, i) => {
      for (let n = 0; denying; n++, deniedTries++) await w.client.callTool({ name: 'write_note', arguments: { text: `denied-${i}-${n}` } }).catch(() => {});
    });
    for (let round = 0; round < 6; round++) {
      // some calls run while it is up, then it dies in the middle of them
      const before = ranTexts(logs).size;
      await waitFor(() => ranTexts(logs).size >= before + 10, 20_000, `calls to run (round ${round})`);
      await killNow(daemon.proc.pid!, daemon.proc);
      daemon = await startDaemon(home);
    }
    denying = false;
    for (const l of loads) await l.stop();
    await Promise.all(denied);
    // each wrapper is back with the last broker: a call is answered and runs
    for (const [i, w] of wrapped.entries()) {
      await waitFor(async () => {
        await w.client.callTool({ name: 'echo', arguments: { text: `after-${i}` } });
        return ranTexts([logs[i]!]).has(`after-${i}`);
      }, 20_000, `wrapper ${i} to run a call again`);
    }
    const ran = ranTexts(logs).size;
    await waitFor(() => missing(home, logs).length === 0, 20_000, 'the journal to hold every call that ran').catch(() => {});
    expect({ ran, missing: missing(home, logs).length }).toEqual({ ran, missing: 0 });
    expect(deniedTries).toBeGreaterThan(20);
    expect(logs.flatMap((log) => executedCalls(log, 'write_note'))).toEqual([]);
  }, 120_000);

  test('a flood of refused calls while it is down pushes no executed call out; what is not kept is counted and reported', async () => {
    const home = tempDir();
    const daemon = await startDaemon(home);
    const fx = fixture(home);
    // a small memory bound, so that a few hundred refused calls overflow it
    const w = await connectWrapped({ home, trust: true, command: fx.command, args: fx.args, env: { ...fx.env, AIRLOCK_JOURNAL_MEMORY_ENTRIES: '100' } });
    await waitForSessions(home, 1);
    const l = load(w, 'w');
    await waitFor(() => ranTexts([fx.log]).size >= 20, 20_000, 'calls to run');
    process.kill(daemon.proc.pid!, 'SIGSTOP');
    await waitFor(() => l.refused > 0, 20_000, 'the wrapper to refuse calls (broker down)');
    await l.stop();
    // 300 refused calls: three times what memory keeps
    const flood = await Promise.all(Array.from({ length: 300 }, (_, i) => w.client.callTool({ name: 'echo', arguments: { text: `flood-${i}` } })));
    expect(flood.every((r) => decisionOf(r)?.decision === 'deny')).toBe(true);
    await killNow(daemon.proc.pid!, daemon.proc);

    await startDaemon(home);
    const logs = [fx.log];
    await waitFor(() => missing(home, logs).length === 0, 20_000, 'the journal to hold every call that ran').catch(() => {});
    expect({ missing: missing(home, logs).length }).toEqual({ missing: 0 });
    expect([...ranTexts(logs)].some((t) => t.startsWith('flood-'))).toBe(false);
    const client = await BrokerClient.connect({ dir: home, role: 'cli' });
    try {
      await waitFor(async () => ((await client.call('status', {})).journalLost?.notRun ?? 0) > 0, 20_000, 'the lost entries to be reported');
      const status = await client.call('status', {});
      expect(status.journalLost?.executed).toBe(0);
      expect(status.journalLost!.notRun).toBeGreaterThanOrEqual(200);
      const lost = storedEvents(home, 'journal-lost');
      expect(lost.length).toBeGreaterThan(0);
      expect(lost.map((e) => e.detail.executed)).toEqual(lost.map(() => 0));
    } finally {
      client.close();
    }
  }, 90_000);
});
