/**
 * The broker's address: the data dir's own socket while the path is short enough; else, and for a named pipe,
 * a name carrying a digest of the data dir, so that two data dirs never share a broker.
 */
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { brokerAddress } from '../../../proxy-core/src/ipc/paths.js';

const digest = (dir: string) => createHash('sha256').update(dir).digest('hex').slice(0, 16);

test('a short data dir keeps its socket inside it; a deep one gets a folder in the temp dir named after its digest', () => {
  expect(brokerAddress('/home/a/.local/share/airlock', 'linux')).toEqual({ path: '/home/a/.local/share/airlock/run/broker.sock', folder: '/home/a/.local/share/airlock/run' });
  const deep = `/home/a/${'x'.repeat(120)}`;
  const other = `/home/a/${'y'.repeat(120)}`;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const folder = join(tmpdir(), `airlock-${uid}-${digest(deep)}`);
  expect(brokerAddress(deep, 'linux')).toEqual({ path: join(folder, 'broker.sock'), folder });
  expect(brokerAddress(other, 'linux').path).not.toBe(brokerAddress(deep, 'linux').path);
  // the same data dir always finds the same broker
  expect(brokerAddress(deep, 'linux')).toEqual(brokerAddress(deep, 'linux'));
});

test('a named pipe carries the digest of the data dir', () => {
  const { path, folder } = brokerAddress('C:\\Users\\a\\AppData\\Roaming\\Airlock', 'win32');
  expect(folder).toBeNull();
  expect(path).toMatch(new RegExp(`^\\\\\\\\\\.\\\\pipe\\\\airlock-[A-Za-z0-9_-]+-${digest('C:\\Users\\a\\AppData\\Roaming\\Airlock')}$`));
});
