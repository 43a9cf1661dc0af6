/**
 * `airlock daemon --app-key-fd N`: the key the app hands the broker it starts, read from a real pipe (fd 3 of
 * the child, as the app opens it). A good key makes the app's proofs verifiable; anything else stops the
 * daemon with the reason, before it serves.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Writable } from 'node:stream';
import { afterEach, expect, test } from 'vitest';
import { appProofMac } from '../../proxy-core/src/broker/presence/presence.js';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cleanup, CLI, onCleanup, tempDir } from '../helpers/airlock.js';

afterEach(cleanup);

/** The daemon with `text` on its fd 3 (then closed); resolves once it serves, or with its exit and last words. */
function daemonWithKey(home: string, text: string | null): Promise<{ running: boolean; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'daemon', '--app-key-fd', '3'], { env: { ...process.env, AIRLOCK_HOME: home }, stdio: ['ignore', 'ignore', 'pipe', text === null ? 'ignore' : 'pipe'] });
  onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  });
  if (text !== null) (child.stdio[3] as Writable).end(text);
  let stderr = '';
  return new Promise((resolve) => {
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (/broker running/.test(stderr)) resolve({ running: true, stderr });
    });
    child.once('exit', () => resolve({ running: false, stderr }));
  });
}

test('a key on a real pipe: the broker checks app proofs with it, and only with it', async () => {
  const home = tempDir();
  const key = randomBytes(32);
  expect((await daemonWithKey(home, `${key.toString('hex')}\n`)).running).toBe(true);
  const c = await BrokerClient.connect({ dir: home, role: 'app' });
  onCleanup(() => c.close());
  expect((await c.call('presence.status', {})).kinds).toEqual(expect.arrayContaining(['touch-id', 'app-click']));
  // a rule that loosens: a MAC under another key is refused, one under this key passes
  const params = { action: 'allow' as const, server: 'fixture', tool: 'write_note' };
  const first = await c.call('presence.challenge', { method: 'rules.add', params });
  const wrong = appProofMac(randomBytes(32), 'app-click', Buffer.from(first.challenge, 'base64url'));
  await expect(c.callWithProof('rules.add', params, { kind: 'app-click', challenge: first.id, mac: wrong })).rejects.toMatchObject({ code: 'presence-refused' });
  const second = await c.call('presence.challenge', { method: 'rules.add', params });
  // a Touch ID MAC is not a click's: the kind is part of what is signed
  const asTouch = appProofMac(key, 'touch-id', Buffer.from(second.challenge, 'base64url'));
  await expect(c.callWithProof('rules.add', params, { kind: 'app-click', challenge: second.id, mac: asTouch })).rejects.toMatchObject({ code: 'presence-refused' });
  const third = await c.call('presence.challenge', { method: 'rules.add', params });
  const right = appProofMac(key, 'app-click', Buffer.from(third.challenge, 'base64url'));
  expect(await c.callWithProof('rules.add', params, { kind: 'app-click', challenge: third.id, mac: right })).toMatchObject({ action: 'allow', tool: 'write_note' });
});

test('anything but a key on the pipe, or no pipe at all: the daemon does not start, and says why', async () => {
  const bad = await daemonWithKey(tempDir(), 'not a key\n');
  expect(bad).toMatchObject({ running: false, stderr: expect.stringContaining("fd 3 did not hold the app's key") });
  const short = await daemonWithKey(tempDir(), 'ab'.repeat(16));
  expect(short).toMatchObject({ running: false, stderr: expect.stringContaining("did not hold the app's key") });
  const none = await daemonWithKey(tempDir(), null);
  expect(none).toMatchObject({ running: false, stderr: expect.stringContaining("cannot read the app's key from fd 3") });
});
