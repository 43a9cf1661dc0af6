/**
 * The CLI in a pipeline whose reader leaves early (`airlock history | head`): a command ends quietly with exit
 * 0 instead of a stack trace, and the broker, whose output nobody reads any more, keeps running.
 */
import { spawn } from 'node:child_process';
import { afterEach, expect, test } from 'vitest';
import { cleanup, CLI, cli, onCleanup, startDaemon, tempDir, waitFor } from '../helpers/airlock.js';

afterEach(cleanup);

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
