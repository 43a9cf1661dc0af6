/**
 * What the CLI prints. Text from a server, a client or a model never reaches the terminal raw: a tool named to
 * erase the line it is printed on, and arguments with C1 and bidi controls, are spelled out in every listing,
 * and the JSON output still reads back as the exact strings. And in a pipeline whose reader leaves early
 * (`airlock history | head`), a command ends quietly with exit 0 instead of a stack trace, while the broker,
 * whose output nobody reads any more, keeps running.
 */
import { spawn } from 'node:child_process';
import { afterEach, expect, test } from 'vitest';
import { cleanup, CLI, cli, connectWrapped, fixture, onCleanup, startDaemon, tempDir, waitFor, waitForTicket } from '../helpers/airlock.js';

afterEach(cleanup);

// what a terminal acts on or hides: ESC, CR, the one-byte CSI, bidi overrides, tag characters
const RAW = /[\u001b\r\u009b\u202a-\u202e\u2066-\u2069]|[\u{E0000}-\u{E007F}]/u;

test('a hostile tool name and arguments are spelled out in pending, history and events; --json reads back exact', async () => {
  const home = tempDir();
  await startDaemon(home);
  const fx = fixture(home, ['--catalog', 'terminal']);
  const w = await connectWrapped({ home, server: 'fixture', command: fx.command, args: fx.args, env: fx.env });
  // a call of a name with control characters is refused before anything else; a bidi override gets through
  const name = 'wipe\u202Eelif_daer';
  const text = 'ok\u009b31m\u202Eevil\u{E0041}';
  const call = w.client.callTool({ name, arguments: { text } });
  const ticket = await waitForTicket(home, name);

  const pending = await cli(home, ['pending']);
  expect(pending.stdout).not.toMatch(RAW);
  expect(pending.stdout).toContain('wipe\\u{202E}elif_daer');
  expect(pending.stdout).toContain('\\u{9B}31m\\u{202E}evil\\u{E0041}');
  const json = await cli(home, ['pending', '--json']);
  expect(json.stdout).not.toMatch(RAW);
  const [read] = JSON.parse(json.stdout) as { id: string; tool: string; arguments: { text: string } }[];
  expect(read).toMatchObject({ id: ticket.id, tool: name, arguments: { text } });

  // the refusal names the tool too: on stderr, spelled out
  const refused = await cli(home, ['approve', 'nope']);
  expect(refused.code).not.toBe(0);
  expect((await cli(home, ['deny', ticket.id, '--reason', 'looks like \u001b]0;a title\u0007'])).stdout).not.toMatch(RAW);
  await call;
  // the listing's own events name the tool whose name carries ESC and CR
  for (const args of [['history'], ['history', '--json'], ['history', '--events'], ['events'], ['events', '--json'], ['pins', 'list', 'fixture']]) {
    const out = await cli(home, args);
    expect([args, out.code, RAW.test(out.stdout)]).toEqual([args, 0, false]);
  }
  const history = JSON.parse((await cli(home, ['history', '--json'])).stdout) as { tool: string; arguments: string }[];
  expect(history[0]).toMatchObject({ tool: name, arguments: JSON.stringify({ text }) });
});

/** Run the CLI with its stdout (and stderr, if asked) closed by the reader before anything is written. */
function withReaderGone(home: string, args: string[], closeStderr = false) {
  const proc = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, AIRLOCK_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout.destroy();
  let stderr = '';
  if (closeStderr) proc.stderr.destroy();
  else proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, exited, stderr: () => stderr };
}

test('a command whose reader left ends with exit 0 and no stack trace', async () => {
  const home = tempDir();
  await startDaemon(home);
  for (const args of [['status'], ['rules'], ['history', '--limit', '500'], ['--help']]) {
    const run = withReaderGone(home, args);
    expect([args, await run.exited, run.stderr()]).toEqual([args, 0, ""]);
    expect(run.stderr()).toBe('');
  }
});

test('a broker whose stdout and stderr readers left keeps running and answers', async () => {
  const home = tempDir();
  const daemon = withReaderGone(home, ['daemon'], true);
  onCleanup(async () => {
    if (daemon.proc.exitCode === null) daemon.proc.kill('SIGTERM');
    await daemon.exited;
  });
  await waitFor(async () => (await cli(home, ['status'])).code === 0, 10_000, 'the broker to answer');
  expect((await cli(home, ['estop', 'on'])).code).toBe(0);
  expect((await cli(home, ['status'])).stdout).toMatch(/E-Stop: ON/);
  expect(daemon.proc.exitCode).toBeNull();
  // and stops cleanly when told, though the line it says on the way out has no reader
  daemon.proc.kill('SIGTERM');
  expect(await daemon.exited).toBe(0);
});

test('a call id that begins with a dash reaches the broker as an id, not as an unknown option', async () => {
  const home = tempDir();
  await startDaemon(home);
  const r = await cli(home, ['undo', '-Zk3pQr7Xa9bC:12']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('no call -Zk3pQr7Xa9bC:12 in the journal');
  expect(r.stderr).not.toMatch(/unknown option/i);
  const forced = await cli(home, ['undo', '-Zk3pQr7Xa9bC:12', '--force']);
  expect(forced.stderr).toContain('no call -Zk3pQr7Xa9bC:12 in the journal');
});
