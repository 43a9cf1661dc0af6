import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { listenBroker } from '../../../proxy-core/src/broker/server.js';
import { Channel } from '../../../proxy-core/src/ipc/channel.js';
import { connectBroker } from '../../../proxy-core/src/ipc/connect.js';
import { brokerAddress, secretPath } from '../../../proxy-core/src/ipc/paths.js';
import { ensurePrivateDir, loadOrCreateSecret } from '../../../proxy-core/src/ipc/secret.js';

const dirs: string[] = [];
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function home(): string {
  const d = mkdtempSync(join(tmpdir(), 'al-auth-'));
  dirs.push(d);
  return d;
}

describe('broker socket handshake', () => {
  test('a peer that knows the secret gets in; the socket is 0600 in a 0700 folder', async () => {
    const dir = home();
    const secret = loadOrCreateSecret(dir);
    const roles: string[] = [];
    const l = await listenBroker(dir, secret, (ch, role) => {
      roles.push(role);
      ch.setHandlers({ request: () => 'pong' });
    });
    closers.push(() => l.close());
    const ch = await connectBroker({ dir, role: 'cli' });
    expect(await ch.request('ping')).toBe('pong');
    ch.destroy();
    expect(roles).toEqual(['cli']);
    const { statSync } = await import('node:fs');
    expect(statSync(l.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'run')).mode & 0o777).toBe(0o700);
    expect(statSync(secretPath(dir)).mode & 0o777).toBe(0o600);
  });

  test('a data dir too deep for a socket path listens in a 0700 folder of the temp dir, removed when the broker stops', async () => {
    const dir = join(home(), 'a'.repeat(60), 'b'.repeat(60));
    const secret = loadOrCreateSecret(dir);
    const { folder } = brokerAddress(dir);
    expect(folder!.startsWith(tmpdir())).toBe(true);
    const l = await listenBroker(dir, secret, (ch) => ch.setHandlers({ request: () => 'pong' }));
    const ch = await connectBroker({ dir, role: 'cli' });
    expect(await ch.request('ping')).toBe('pong');
    ch.destroy();
    const { existsSync, statSync } = await import('node:fs');
    expect(statSync(folder!).mode & 0o777).toBe(0o700);
    await l.close();
    expect(existsSync(folder!)).toBe(false);
  });

  test('the temp folder removed at stop is only ever an empty folder: a file put in it, or a symlink put in its place, is left as it is', async () => {
    const { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync: write } = await import('node:fs');
    // a file the agent put in the folder: the folder and the file stay
    const dir = join(home(), 'a'.repeat(60), 'c'.repeat(60));
    const l = await listenBroker(dir, loadOrCreateSecret(dir), () => {});
    const { folder } = brokerAddress(dir);
    write(join(folder!, 'theirs'), 'kept');
    await l.close();
    expect(readFileSync(join(folder!, 'theirs'), 'utf8')).toBe('kept');
    rmSync(folder!, { recursive: true, force: true });
    // the folder swapped for a symlink to an empty folder of the agent's: the symlink is not followed
    const dir2 = join(home(), 'a'.repeat(60), 'd'.repeat(60));
    const l2 = await listenBroker(dir2, loadOrCreateSecret(dir2), () => {});
    const folder2 = brokerAddress(dir2).folder!;
    const target = join(home(), 'target');
    mkdirSync(target);
    renameSync(folder2, `${folder2}.moved`);
    symlinkSync(target, folder2);
    closers.push(() => rmSync(folder2, { force: true }), () => rmSync(`${folder2}.moved`, { recursive: true, force: true }));
    await l2.close();
    expect(existsSync(target)).toBe(true);
    expect(existsSync(folder2)).toBe(true);
  });

  test('a peer with the wrong secret is refused', async () => {
    const dir = home();
    const secret = loadOrCreateSecret(dir);
    const l = await listenBroker(dir, secret, () => {
      throw new Error('must not be reached');
    });
    closers.push(() => l.close());
    writeFileSync(secretPath(dir), randomBytes(32).toString('hex') + '\n');
    await expect(connectBroker({ dir, role: 'wrapper' })).rejects.toThrow(/wrong secret/);
  });

  test('a listener that cannot prove the secret is not trusted by the client', async () => {
    const dir = home();
    loadOrCreateSecret(dir);
    const { path, folder } = brokerAddress(dir);
    ensurePrivateDir(folder!);
    // an impostor: answers the handshake without knowing the secret
    const server = createServer((socket) => {
      const ch = new Channel(socket);
      ch.setHandlers({ request: () => ({ proof: 'f'.repeat(64) }) });
      ch.notify('hello', { nonce: 'a'.repeat(32) });
    });
    await new Promise<void>((r) => server.listen(path, r));
    closers.push(() => new Promise<void>((r) => server.close(() => r())));
    await expect(connectBroker({ dir, role: 'cli' })).rejects.toThrow(/does not know the secret/);
  });

  test('a second broker on the same data dir refuses to start; a stale socket is cleaned up', async () => {
    const dir = home();
    const secret = loadOrCreateSecret(dir);
    const first = await listenBroker(dir, secret, () => {});
    await expect(listenBroker(dir, secret, () => {})).rejects.toThrow(/already running/);
    await first.close();
    // a crash: a process listening on the socket is killed, and its socket file stays behind
    const { path } = brokerAddress(dir);
    const { spawn } = await import('node:child_process');
    const { existsSync } = await import('node:fs');
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`]);
    await new Promise<void>((r) => child.stdout.once('data', () => r()));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(existsSync(path)).toBe(true);
    const second = await listenBroker(dir, secret, () => {});
    closers.push(() => second.close());
  });

  test('no secret file means no broker has run: a clear message', async () => {
    const dir = home();
    await expect(connectBroker({ dir, role: 'cli' })).rejects.toThrow(/not running/);
  });
});
