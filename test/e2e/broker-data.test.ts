/**
 * The broker's data under stress from outside: a second broker on the same data dir, a database that lost its
 * contents, file modes, and an unauthenticated peer flooding the socket. Real daemon, real CLI.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { brokerAddress } from '../../proxy-core/src/ipc/paths.js';
import {
  CLI,
  cleanup,
  cli,
  cliJson,
  connectWrapped,
  executedCalls,
  fixture,
  onCleanup,
  startDaemon,
  tempDir,
  textOf,
  waitFor,
  waitForSessions,
  waitForTicket,
} from '../helpers/airlock.js';

afterEach(cleanup);

interface EventItem {
  type: string;
  detail: unknown;
}

const mode = (p: string) => statSync(p).mode & 0o777;

describe('a second broker on the same data dir', () => {
  test('refuses in one line and leaves the running broker\'s sessions, tickets and journal alone', async () => {
    const home = tempDir();
    await startDaemon(home);
    const fx = fixture(home);
    const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
    await waitForSessions(home, 1);
    const call = w.client.callTool({ name: 'write_note', arguments: { text: 'kept' } });
    const ticket = await waitForTicket(home, 'write_note');

    const second = await cli(home, ['daemon']);
    expect(second.code).not.toBe(0);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^airlock: another Airlock broker is already running/);

    // what is on disk, not only what the first broker holds in memory
    const db = new Database(join(home, 'airlock.db'), { readonly: true });
    const open = db.prepare('SELECT COUNT(*) AS n FROM sessions WHERE ended_at IS NULL').get() as { n: number };
    const ticketRow = db.prepare('SELECT ended_at, resolution FROM tickets WHERE id = ?').get(ticket.id);
    db.close();
    expect(open.n).toBe(1);
    expect(ticketRow).toEqual({ ended_at: null, resolution: null });

    const status = await cliJson<{ sessions: unknown[] }>(home, ['status']);
    expect(status.sessions).toHaveLength(1);
    const pending = await cliJson<{ id: string }[]>(home, ['pending']);
    expect(pending.map((t) => t.id)).toEqual([ticket.id]);
    const events = await cliJson<EventItem[]>(home, ['history', '--events']);
    expect(events.filter((e) => e.type === 'broker-restart')).toEqual([]);

    expect((await cli(home, ['approve', ticket.id])).code).toBe(0);
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('kept');
    expect(executedCalls(fx.log, 'write_note')).toHaveLength(1);
  });
});

describe('two brokers started at the same moment on a fresh data dir', () => {
  test('exactly one runs; the other exits with one line', async () => {
    const home = tempDir();
    const start = () =>
      new Promise<{ running: boolean; stderr: string; proc: ChildProcess }>((resolve) => {
        const proc = spawn(process.execPath, [CLI, 'daemon'], { env: { ...process.env, AIRLOCK_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
        onCleanup(
          () =>
            new Promise<void>((done) => {
              if (proc.exitCode !== null || proc.signalCode !== null) return done();
              proc.once('exit', () => done());
              proc.kill('SIGTERM');
            }),
        );
        let err = '';
        proc.stderr!.on('data', (d: Buffer) => {
          err += d.toString();
          if (err.includes('broker running')) resolve({ running: true, stderr: err, proc });
        });
        proc.once('exit', () => resolve({ running: false, stderr: err, proc }));
      });
    const results = await Promise.all([start(), start(), start()]);
    expect(results.filter((r) => r.running)).toHaveLength(1);
    for (const loser of results.filter((r) => !r.running)) {
      expect(loser.stderr.trim().split('\n')).toHaveLength(1);
      expect(loser.stderr).toMatch(/already (running|answering)/);
    }
    expect((await cli(home, ['status', '--json'])).code).toBe(0);
    const events = await cliJson<EventItem[]>(home, ['history', '--events']);
    expect(events.filter((e) => e.type === 'broker-restart')).toEqual([]);
  });
});

describe('a used data dir whose database lost its contents', () => {
  test('is refused with the file and the way back named; --restore-backup brings E-Stop back; --fresh-database keeps the damaged file', async () => {
    const home = tempDir();
    const db = join(home, 'airlock.db');
    const first = await startDaemon(home);
    expect((await cli(home, ['estop', 'on'])).code).toBe(0);
    // item 9: written by the daemon, all three files are private
    for (const p of [db, `${db}-wal`, `${db}-shm`]) expect(mode(p), p).toBe(0o600);
    await first.stop(); // a clean stop leaves a backup of the state it stopped with
    const backup = join(home, 'db-backups', 'airlock.db.bak');
    expect(mode(backup)).toBe(0o600);
    expect(readdirSync(join(home, 'db-backups'))).toEqual(['airlock.db.bak']);

    truncateSync(db, 0);
    const refused = await cli(home, ['daemon']);
    expect(refused.code).toBe(1);
    const lines = refused.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`the Airlock database ${db} is empty (0 bytes)`);
    expect(lines[0]).toContain(backup);
    expect(lines[0]).toContain('`airlock daemon --restore-backup`');
    expect(lines[0]).toContain('`airlock daemon --fresh-database`');

    const restored = await startDaemon(home, ['--restore-backup']);
    expect(restored.stderr()).toMatch(/restored the database from the backup of .*; the previous file is kept as .*airlock\.db\.damaged-/);
    expect((await cliJson<{ estop: boolean }>(home, ['estop', 'status'])).estop).toBe(true);
    const events = await cliJson<EventItem[]>(home, ['history', '--events']);
    expect(events.map((e) => e.type)).toContain('database-restored');
    await restored.stop();

    // random bytes: refused the same way, then an explicit fresh start
    const junk = randomBytes(32 * 1024);
    for (const f of [`${db}-wal`, `${db}-shm`]) if (existsSync(f)) truncateSync(f, 0);
    writeFileSync(db, junk);
    const damaged = await cli(home, ['daemon']);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toMatch(/is damaged \(file is not a database\)/);
    const fresh = await startDaemon(home, ['--fresh-database']);
    expect(fresh.stderr()).toMatch(/started with an empty database; the previous database is kept as /);
    expect((await cliJson<{ estop: boolean }>(home, ['estop', 'status'])).estop).toBe(false);
    const kept = readdirSync(home).filter((f) => /^airlock\.db\.damaged-.*Z$/.test(f));
    expect(kept).toHaveLength(2);
    expect(kept.map((f) => readFileSync(join(home, f))).some((b) => b.equals(junk))).toBe(true);
    // the backup that still had E-Stop on is kept too, not overwritten by the empty database's backups
    expect(readdirSync(join(home, 'db-backups')).some((f) => f.startsWith('airlock.db.bak.before-fresh-'))).toBe(true);
  });

  test('a recovery flag on a healthy database is refused and changes nothing', async () => {
    const home = tempDir();
    const d = await startDaemon(home);
    await cli(home, ['estop', 'on']);
    await d.stop();
    const r = await cli(home, ['daemon', '--fresh-database']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is healthy; --fresh-database only replaces a missing or damaged one/);
    await startDaemon(home);
    expect((await cliJson<{ estop: boolean }>(home, ['estop', 'status'])).estop).toBe(true);
  });
});

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]);
}

/** Write `total` bytes (newline-free junk, plus `tail`) as fast as the socket takes them; stop when cut off. */
function flood(path: string, total: number, tail: string): Promise<{ accepted: number; closedAfterMs: number; cutOff: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const started = Date.now();
    let sent = 0;
    let accepted = 0;
    let done = false;
    const finish = (cutOff: boolean) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ accepted, closedAfterMs: Date.now() - started, cutOff });
    };
    const pump = () => {
      while (!done && sent < total) {
        const last = sent + chunk.length >= total;
        const piece = last ? Buffer.concat([chunk.subarray(0, total - sent), Buffer.from(tail)]) : chunk;
        sent += chunk.length;
        const ok = socket.write(piece, (err) => {
          if (!err) accepted += piece.length;
        });
        if (!ok) return void socket.once('drain', pump);
      }
    };
    socket.on('connect', pump);
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    // everything written and the broker still holds the connection: not cut off
    const timer = setTimeout(() => finish(false), 4000);
    socket.on('close', () => clearTimeout(timer));
  });
}

describe('an unauthenticated peer on the broker socket', () => {
  test('is cut off after a few KiB, whether it sends 50 MB without a newline or as one line', async () => {
    const home = tempDir();
    const d = await startDaemon(home);
    const pid = d.proc.pid!;
    const { path } = brokerAddress(home);
    const before = rssKb(pid);
    const figures: Record<string, unknown> = { rssBeforeKb: before };

    for (const [name, tail] of [['no newline', ''], ['one line', '\n']] as const) {
      const r = await flood(path, 50 * 1024 * 1024, tail);
      figures[name] = { ...r, rssAfterKb: rssKb(pid) };
      expect(r.cutOff, name).toBe(true);
      // what the peer got into the socket before the broker closed it: the broker read at most 4 KiB of it,
      // the rest is the kernel's socket buffers (a few hundred KiB); nowhere near 50 MB
      expect(r.accepted, name).toBeLessThan(8 * 1024 * 1024);
      expect(r.closedAfterMs, name).toBeLessThan(3000);
      const status = await cli(home, ['status', '--json']);
      expect(status.code, name).toBe(0);
    }
    const after = rssKb(pid);
    console.error('unauthenticated flood', JSON.stringify(figures));
    expect(after - before).toBeLessThan(20 * 1024);
  });

  test('many small frames before authenticating are cut off at 4 KiB too', async () => {
    const home = tempDir();
    await startDaemon(home);
    const { path } = brokerAddress(home);
    const socket = connect(path);
    let received = '';
    socket.on('data', (b: Buffer) => (received += b.toString()));
    await new Promise<void>((r) => socket.once('connect', () => r()));
    let closed = false;
    socket.on('close', () => (closed = true));
    socket.on('error', () => {});
    const note = JSON.stringify({ t: 'note', m: 'x', p: 'y'.repeat(200) }) + '\n';
    for (let i = 0; i < 30 && !closed; i++) {
      socket.write(note);
      await new Promise((r) => setTimeout(r, 10));
    }
    await waitFor(() => closed, 3000, 'the broker to cut the connection');
    expect(received).toContain('"hello"');
    expect((await cli(home, ['status', '--json'])).code).toBe(0);
  });
});
