/**
 * `airlock service install|uninstall|status` through the real CLI: --dry-run changes nothing, and install and
 * uninstall against a staged root (--root) make and remove the real accounts and the files they own. systemd is
 * not PID 1 here: its steps are reported skipped, and the unit is checked by systemd-analyze where it exists.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readServiceMarker } from '../../proxy-core/src/ipc/system.js';
import { cleanup, cli, onCleanup, tempDir } from '../helpers/airlock.js';
import { accountName, assertRoot, id } from '../helpers/accounts.js';

afterAll(cleanup);

const exists = (kind: 'passwd' | 'group', name: string) => spawnSync('getent', [kind, name]).status === 0;

describe('airlock service', () => {
  beforeAll(() => assertRoot());

  test('--dry-run prints every step and the unit, and does nothing', async () => {
    const user = accountName('ald');
    const r = await cli('/nonexistent', ['service', 'install', '--dry-run', '--user', user], { SUDO_USER: 'root' });
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout;
    expect(out).toMatch(/^run {4}groupadd --system airlock-users/m);
    expect(out).toContain(`useradd --system --user-group --no-create-home --home-dir /var/lib/airlock --shell /usr/sbin/nologin ${user}`);
    expect(out).toMatch(/^mkdir  \/var\/lib\/airlock \(0700 [a-z0-9]+:[a-z0-9]+\)$/m);
    expect(out).toContain('write  /etc/systemd/system/airlock.service (0644 root)');
    expect(out).toContain(`       | User=${user}`);
    expect(out).toMatch(/\| ExecStart=\S+node\S* \S+bin\/airlock\.js daemon --system --home \/var\/lib\/airlock --run-dir \/run\/airlock --users-group airlock-users$/m);
    expect(out).toContain('systemctl enable --now airlock.service');
    expect(out).toContain('write  /etc/airlock/service.json (0644 root)');
    // the marker is the last step: clients switch only once the service is there
    expect(out.trimEnd().split('\n').at(-1)).toMatch(/^write {2}\/etc\/airlock\/service\.json/);
    expect(exists('passwd', user)).toBe(false);
    expect(existsSync('/etc/airlock/service.json')).toBe(false);

    const un = await cli('/nonexistent', ['service', 'uninstall', '--dry-run', '--purge', '--user', user]);
    expect(un.code, un.stderr).toBe(0);
    expect(un.stdout.split('\n')[1]).toBe('remove /etc/airlock/service.json');
    expect(un.stdout).toContain('systemctl disable --now airlock.service');
    expect(un.stdout).toContain('remove /var/lib/airlock (and all it holds)');
  });

  test('the unit passes systemd-analyze verify', async () => {
    const r = await cli('/nonexistent', ['service', 'install', '--dry-run']);
    const unit = r.stdout.split('\n').filter((l) => l.startsWith('       |')).map((l) => l.replace(/^ {7}\| ?/, '')).join('\n');
    expect(unit).toMatch(/^\[Service\]$/m);
    const dir = tempDir();
    const file = join(dir, 'airlock.service');
    writeFileSync(file, unit);
    const analyze = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    if (analyze.error) {
      // no systemd-analyze on this machine: the unit's keys are checked against the ones it must have
      for (const key of ['User', 'Group', 'SupplementaryGroups', 'ExecStart', 'RuntimeDirectory', 'NoNewPrivileges', 'ProtectSystem', 'ProtectHome', 'ReadWritePaths']) {
        expect(unit, key).toMatch(new RegExp(`^${key}=\\S`, 'm'));
      }
      return;
    }
    // verify exits 0 on unknown keys and bad values: what it says is the verdict
    expect(analyze.stderr.trim()).toBe('');
    expect(analyze.status).toBe(0);
  });

  test('install and uninstall --purge against a staged root make and remove the accounts, folders, unit and marker', async () => {
    const user = accountName('ali');
    const group = 'airlock-users';
    // the users group is the real name: set up here only if the machine has none, and then removed by uninstall
    const hadGroup = exists('group', group);
    const person = accountName('alp');
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', person]);
    onCleanup(() => spawnSync('userdel', [person]));
    onCleanup(() => spawnSync('userdel', [user]));
    const root = tempDir('al-root-');

    const r = await cli('/nonexistent', ['service', 'install', '--root', root, '--user', user], { SUDO_USER: person });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/systemctl enable --now airlock\.service .*\[skipped: files are staged under --root\]/);
    expect(exists('passwd', user)).toBe(true);
    expect(execFileSync('id', ['-nG', user], { encoding: 'utf8' }).split(/\s+/)).toContain(group);
    expect(execFileSync('id', ['-nG', person], { encoding: 'utf8' }).split(/\s+/)).toContain(group);
    const dataDir = lstatSync(join(root, 'var/lib/airlock'));
    expect([dataDir.mode & 0o7777, dataDir.uid]).toEqual([0o700, id('-u', user)]);
    const unit = readFileSync(join(root, 'etc/systemd/system/airlock.service'), 'utf8');
    expect(unit).toContain(`User=${user}\n`);
    expect(lstatSync(join(root, 'etc/systemd/system/airlock.service')).mode & 0o777).toBe(0o644);
    // the marker is one a client believes, naming the accounts' real ids
    const marker = readServiceMarker(root);
    expect(marker).toEqual({ version: 1, user, uid: id('-u', user), usersGroup: group, gid: Number(execFileSync('getent', ['group', group], { encoding: 'utf8' }).split(':')[2]), dataDir: '/var/lib/airlock', runDir: '/run/airlock' });

    const status = await cli('/nonexistent', ['service', 'status', '--root', root, '--user', user]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`the Airlock service is installed: user ${user}`);
    expect(status.stdout).toContain('broker: not running');

    // again: nothing is made twice
    const again = await cli('/nonexistent', ['service', 'install', '--root', root, '--user', user], { SUDO_USER: person });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`note   the user ${user} exists`);

    const un = await cli('/nonexistent', ['service', 'uninstall', '--purge', '--root', root, '--user', user]);
    expect(un.code, un.stderr).toBe(0);
    expect(existsSync(join(root, 'etc/airlock/service.json'))).toBe(false);
    expect(existsSync(join(root, 'etc/systemd/system/airlock.service'))).toBe(false);
    expect(existsSync(join(root, 'var/lib/airlock'))).toBe(false);
    expect(exists('passwd', user)).toBe(false);
    expect(exists('group', user)).toBe(false);
    expect(exists('group', group)).toBe(false);
    expect((await cli('/nonexistent', ['service', 'status', '--root', root])).stdout).toContain('not installed');
    if (hadGroup) execFileSync('groupadd', ['--system', group]);
  });

  test('install refuses without root, and names what it would need', async () => {
    const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', process.execPath, join(import.meta.dirname, '../../bin/airlock.js'), 'service', 'install'], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('run it with sudo');
  });
});
