import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { assertRootOwned, installedService, locateBroker, parseServiceMarker, readServiceMarker, ServiceMarkerError } from '../../../proxy-core/src/ipc/system.js';
import { cleanup, tempDir } from '../../helpers/airlock.js';

afterEach(cleanup);

const marker = { version: 1, user: 'airlock', uid: 990, usersGroup: 'airlock-users', gid: 991, dataDir: '/var/lib/airlock', runDir: '/run/airlock' };

/** A staged root holding a marker; the folders 0755 root's (tests run as root). */
function staged(text = JSON.stringify(marker)): string {
  const root = tempDir('al-m-');
  chmodSync(root, 0o755);
  mkdirSync(join(root, 'etc', 'airlock'), { recursive: true, mode: 0o755 });
  writeFileSync(join(root, 'etc', 'airlock', 'service.json'), text, { mode: 0o644 });
  return root;
}

describe('the service marker', () => {
  test('a root-owned marker is read; none is null', () => {
    expect(readServiceMarker(staged())).toEqual(marker);
    expect(readServiceMarker(tempDir())).toBeNull();
  });

  test('a marker, or a folder above it, that someone else may write is not believed', () => {
    const root = staged();
    chmodSync(join(root, 'etc', 'airlock'), 0o777);
    expect(() => readServiceMarker(root)).toThrow(/not trustworthy: .*etc\/airlock belongs to uid 0 with mode 777/);
    chmodSync(join(root, 'etc', 'airlock'), 0o755);
    chownSync(join(root, 'etc', 'airlock', 'service.json'), 65534, 65534);
    expect(() => readServiceMarker(root)).toThrow(/service\.json belongs to uid 65534/);
  });

  test('a sticky world-writable folder above (like /tmp) is fine; a non-sticky one is not', () => {
    const dir = tempDir();
    const sticky = join(dir, 's');
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    writeFileSync(join(sticky, 'f'), 'x', { mode: 0o644 });
    expect(() => assertRootOwned(join(sticky, 'f'), 'f')).not.toThrow();
    chmodSync(sticky, 0o777);
    expect(() => assertRootOwned(join(sticky, 'f'), 'f')).toThrow(ServiceMarkerError);
  });

  test('a damaged marker is refused, not taken as none', () => {
    expect(() => readServiceMarker(staged('{"version":1'))).toThrow(/not JSON/);
    expect(() => parseServiceMarker(JSON.stringify({ ...marker, runDir: 'run' }), 'm')).toThrow(/damaged/);
    expect(() => parseServiceMarker(JSON.stringify({ ...marker, uid: 0 }), 'm')).toThrow(/damaged/);
    expect(() => parseServiceMarker(JSON.stringify({ ...marker, user: '../x' }), 'm')).toThrow(/damaged/);
  });
});

describe('which broker a client uses', () => {
  test('without a service: --home, then AIRLOCK_HOME, then the default', () => {
    expect(locateBroker('/a', { AIRLOCK_HOME: '/b' }).endpoint.socketPath).toBe('/a/run/broker.sock');
    expect(locateBroker(undefined, { AIRLOCK_HOME: '/b' }).endpoint.socketPath).toBe('/b/run/broker.sock');
    expect(locateBroker(undefined, { HOME: '/h' }).dir).toBe('/h/.local/share/airlock');
  });

  test('with a service: its socket, whatever --home says, which is still where the spill goes', () => {
    const root = staged();
    const notes: string[] = [];
    const got = locateBroker('/home/me/.local/share/airlock', { AIRLOCK_SYSTEM_ROOT: root }, (m) => notes.push(m));
    expect(got.endpoint).toMatchObject({ socketPath: '/run/airlock/broker.sock', secretPath: '/run/airlock/secret', owner: 990 });
    expect(got.dir).toBe('/home/me/.local/share/airlock');
    expect(notes.join('')).toMatch(/service is installed: using its broker .*not the data dir \/home\/me/);
  });

  test('a staged root without a marker, or a relative one, is an error, never "no service"', () => {
    expect(() => installedService({ AIRLOCK_SYSTEM_ROOT: tempDir() })).toThrow(/no Airlock service marker/);
    expect(() => installedService({ AIRLOCK_SYSTEM_ROOT: 'x' })).toThrow(/absolute/);
  });
});
