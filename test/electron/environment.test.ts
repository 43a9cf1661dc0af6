/** What Protect writes as the launcher, packaged and from a checkout. */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { launcherFor, type LauncherFacts } from '../../electron/src/environment.js';

describe('what Protect writes as the launcher', () => {
  const facts: LauncherFacts = {
    platform: 'darwin',
    packaged: true,
    electron: true,
    execPath: '/Applications/Airlock.app/Contents/MacOS/Airlock',
    resourcesPath: '/Applications/Airlock.app/Contents/Resources',
    cli: '/Applications/Airlock.app/Contents/Resources/app.asar/electron/dist/cli.js',
    env: { PATH: '/usr/bin:/bin' },
  };

  test('packaged: the launcher in the resources, never the app binary', () => {
    expect(launcherFor(facts)).toEqual(['/Applications/Airlock.app/Contents/Resources/bin/airlock']);
    expect(launcherFor({ ...facts, platform: 'win32', resourcesPath: 'C:\\Airlock\\resources' })).toEqual([join('C:\\Airlock\\resources', 'bin', 'airlock.cmd')]);
  });

  test('a launcher the person set wins', () => {
    expect(launcherFor({ ...facts, env: { AIRLOCK_LAUNCHER: '["/opt/x"]' } })).toBeNull();
  });

  test('from a checkout: Node (this one under a test harness, else from PATH) and the checkout CLI', () => {
    expect(launcherFor({ ...facts, packaged: false, electron: false, execPath: '/usr/bin/node', cli: '/repo/electron/dist/cli.js' })).toEqual(['/usr/bin/node', '/repo/electron/dist/cli.js']);
    const dir = join(process.execPath, '..');
    expect(launcherFor({ ...facts, platform: 'linux', packaged: false, cli: '/repo/cli.js', env: { PATH: `/nowhere:${dir}` } })).toEqual([join(dir, 'node'), '/repo/cli.js']);
    // Electron's binary in a client config would start the app, not the wrapper: no launcher rather than that
    expect(launcherFor({ ...facts, platform: 'linux', packaged: false, env: { PATH: '/nowhere' } })).toBeNull();
  });
});
