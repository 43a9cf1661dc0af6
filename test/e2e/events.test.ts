/** `airlock events --follow --json`, as a user (or a UI) would run it: live, resumable, nothing lost or repeated. */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, expect, test } from 'vitest';
import { CLI, cleanup, cli, cliJson, connectWrapped, fixture, onCleanup, startDaemon, tempDir, waitFor, waitForTicket } from '../helpers/airlock.js';

afterEach(cleanup);

interface Event {
  seq: number;
  type: string;
  server: string | null;
  tool: string | null;
  detail: Record<string, unknown>;
}

function follow(home: string, since?: number): { proc: ChildProcess; events: Event[]; stderr: () => string } {
  const args = [CLI, 'events', '--follow', '--json', ...(since === undefined ? [] : ['--since', String(since)])];
  const proc = spawn(process.execPath, args, { env: { ...process.env, AIRLOCK_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  const events: Event[] = [];
  let buffered = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    let nl;
    while ((nl = buffered.indexOf('\n')) !== -1) {
      events.push(JSON.parse(buffered.slice(0, nl)) as Event);
      buffered = buffered.slice(nl + 1);
    }
  });
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  onCleanup(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  return { proc, events, stderr: () => err };
}

test('follow prints tickets, decisions and E-Stop live; a restart with --since misses nothing and repeats nothing', async () => {
  const home = tempDir();
  await startDaemon(home);
  const first = follow(home);
  const fx = fixture(home);
  const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env });
  const call = w.client.callTool({ name: 'write_note', arguments: { text: 'live' } });
  const ticket = await waitForTicket(home, 'write_note');
  await waitFor(() => first.events.some((e) => e.type === 'ticket-created'), 5000, 'the ticket event');
  expect(first.events.find((e) => e.type === 'ticket-created')).toMatchObject({ server: 'fixture', tool: 'write_note', detail: { ticket: { id: ticket.id } } });
  await cli(home, ['approve', ticket.id]);
  await call;
  await waitFor(() => first.events.some((e) => e.type === 'call' && e.detail.outcome === 'ok'), 5000, 'the call event');

  // the follower goes away; things keep happening
  first.proc.kill('SIGTERM');
  await new Promise((r) => first.proc.once('exit', r));
  const last = first.events.at(-1)!.seq;
  await cli(home, ['estop', 'on']);
  await cli(home, ['estop', 'off']);

  const second = follow(home, last);
  await waitFor(() => second.events.some((e) => e.type === 'estop-off'), 5000, 'the missed events');
  await cli(home, ['rules', 'add', 'deny', '--server', 'x', '--tool', 'y']);
  await waitFor(() => second.events.some((e) => e.type === 'rule-added'), 5000, 'a live event after the catch-up');

  const seqs = [...first.events, ...second.events].map((e) => e.seq);
  expect(new Set(seqs).size).toBe(seqs.length);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  expect(second.events[0]!.seq).toBe(last + 1);
  // what the two followers saw together is exactly what the broker stored
  const stored = (await cliJson<Event[]>(home, ['history', '--events', '--limit', '1000'])).map((e) => e.seq).reverse();
  expect(seqs).toEqual(stored.slice(0, seqs.length));
  expect(second.events.map((e) => e.type)).toEqual(expect.arrayContaining(['estop-on', 'estop-off', 'rule-added']));
  // without --follow, --since pages back to SEQ and prints what came after it, oldest first
  const once = await cli(home, ['events', '--since', String(last), '--limit', '2', '--json']);
  expect(once.code).toBe(0);
  expect(once.stdout.trim().split('\n').map((l) => (JSON.parse(l) as Event).seq)).toEqual([last + 1, last + 2]);
});

test('the stream ends with a clear line on stderr when the broker stops', async () => {
  const home = tempDir();
  const daemon = await startDaemon(home);
  const f = follow(home);
  await cli(home, ['estop', 'off']);
  await waitFor(() => f.events.length > 0, 5000, 'the first events');
  await daemon.stop();
  const code = f.proc.exitCode ?? (await new Promise<number | null>((r) => f.proc.once('exit', (c) => r(c))));
  expect(code).not.toBe(0);
  expect(f.stderr()).toMatch(/^airlock: the event stream ended: /m);
});
