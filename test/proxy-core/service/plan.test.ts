import { describe, expect, test } from 'vitest';
import { serviceLayout } from '../../../proxy-core/src/service/layout.js';
import { describeStep, installPlan, uninstallPlan } from '../../../proxy-core/src/service/plan.js';

const fresh = { user: false, usersGroup: false, personInGroup: false };

describe('the install and uninstall plans', () => {
  test('Linux: accounts, data dir, unit, service manager, and the marker last', () => {
    const steps = installPlan({ layout: serviceLayout('linux'), node: '/usr/bin/node', cli: '/opt/airlock/bin/airlock.js', person: 'me', exists: fresh });
    const lines = steps.map((s) => describeStep(s).split('\n')[0]);
    expect(lines[0]).toContain('groupadd --system airlock-users');
    expect(lines).toContain('run    usermod --append --groups airlock-users me    # let me use the broker (takes effect at their next login)');
    expect(steps.at(-1)).toMatchObject({ do: 'marker', path: '/etc/airlock/service.json' });
  });

  test('what exists is not made again', () => {
    const steps = installPlan({ layout: serviceLayout('linux'), node: 'n', cli: 'c', person: 'me', exists: { user: true, usersGroup: true, personInGroup: true } });
    expect(steps.filter((s) => s.do === 'run' && /useradd|groupadd/.test(s.argv[0]!))).toEqual([]);
    expect(steps.filter((s) => s.do === 'note').map((s) => describeStep(s))).toEqual([
      'note   the group airlock-users exists',
      'note   the user airlock exists',
      'note   me is in airlock-users already',
    ]);
  });

  test('macOS: role account, kept run folder, the plist, launchctl bootstrap system', () => {
    const l = serviceLayout('darwin');
    const steps = installPlan({ layout: l, node: 'n', cli: 'c', exists: fresh });
    const runs = steps.flatMap((s) => (s.do === 'run' ? [s.argv.join(' ')] : []));
    expect(runs).toContain('sysadminctl -addUser _airlock -roleAccount -shell /usr/bin/false -home /var/empty -fullName Airlock broker');
    expect(runs).toContain('launchctl bootstrap system /Library/LaunchDaemons/com.airlock.broker.plist');
    expect(steps).toContainEqual({ do: 'mkdir', path: l.runDir, mode: 0o750, owner: '_airlock', group: 'airlock-users' });
    const un = uninstallPlan(l, false, { user: true, usersGroup: true }).map((s) => describeStep(s));
    expect(un[0]).toBe('remove /etc/airlock/service.json');
    expect(un).toContain('run    launchctl bootout system/com.airlock.broker    # stop the broker and drop it from boot (only where the service manager runs)');
    expect(un.at(-1)).toMatch(/^note {3}kept: the data dir/);
  });

  test('Windows is refused with a pointer to the README', () => {
    expect(() => serviceLayout('win32')).toThrow(/README's "Hardened mode"/);
  });
});
