/**
 * What `airlock service install` and `uninstall` do, as a list of steps: printed as they are by --dry-run, carried
 * out one by one by execute.ts. Which accounts exist already is asked when the plan is made, so a second install
 * makes nothing twice; the marker's user and group ids are read when it is written, after the accounts exist.
 */
import { dirname } from 'node:path';
import { launchdPlist } from './launchd.js';
import type { ServiceLayout } from './layout.js';
import { systemdUnit } from './systemd.js';

export type Step =
  /** A command; `manager` ones talk to systemd/launchd, and are skipped where none runs or under a staged root. */
  | { do: 'run'; argv: string[]; why: string; manager?: boolean }
  | { do: 'mkdir'; path: string; mode: number; owner: string; group: string }
  | { do: 'write'; path: string; mode: number; text: string }
  /** The service marker, with the ids of the service's user and users group as they are when it is written. */
  | { do: 'marker'; path: string; layout: ServiceLayout }
  | { do: 'remove'; path: string; recursive?: boolean }
  | { do: 'note'; text: string };

export interface PlanInput {
  layout: ServiceLayout;
  node: string;
  cli: string;
  /** The person who ran sudo: added to the users group. */
  person?: string;
  /** Which accounts exist now. */
  exists: { user: boolean; usersGroup: boolean; personInGroup: boolean };
}

export function installPlan(p: PlanInput): Step[] {
  return p.layout.platform === 'darwin' ? macInstall(p) : linuxInstall(p);
}

function personSteps(p: PlanInput, add: string[]): Step[] {
  if (!p.person) return [{ do: 'note', text: `no SUDO_USER: add each person who may use Airlock to the group ${p.layout.usersGroup} yourself` }];
  if (p.exists.personInGroup) return [{ do: 'note', text: `${p.person} is in ${p.layout.usersGroup} already` }];
  return [
    { do: 'run', argv: add, why: `let ${p.person} use the broker (takes effect at their next login)` },
  ];
}

function linuxInstall(p: PlanInput): Step[] {
  const l = p.layout;
  return [
    p.exists.usersGroup
      ? { do: 'note', text: `the group ${l.usersGroup} exists` }
      : { do: 'run', argv: ['groupadd', '--system', l.usersGroup], why: 'the people allowed to use the broker' },
    p.exists.user
      ? { do: 'note', text: `the user ${l.user} exists` }
      : { do: 'run', argv: ['useradd', '--system', '--user-group', '--no-create-home', '--home-dir', l.dataDir, '--shell', '/usr/sbin/nologin', l.user], why: "the broker's own user" },
    { do: 'run', argv: ['usermod', '--append', '--groups', l.usersGroup, l.user], why: 'the broker gives its socket to the users group' },
    ...personSteps(p, ['usermod', '--append', '--groups', l.usersGroup, p.person ?? '']),
    { do: 'mkdir', path: l.dataDir, mode: 0o700, owner: l.user, group: l.user },
    { do: 'write', path: l.unitPath, mode: 0o644, text: systemdUnit(l, p.node, p.cli) },
    { do: 'run', argv: ['systemctl', 'daemon-reload'], why: 'load the unit', manager: true },
    { do: 'run', argv: ['systemctl', 'enable', '--now', l.unitName], why: 'start the broker now and at every boot', manager: true },
    // last: clients switch to the service once it is there
    { do: 'mkdir', path: dirname(l.markerPath), mode: 0o755, owner: 'root', group: 'root' },
    { do: 'marker', path: l.markerPath, layout: l },
  ];
}

function macInstall(p: PlanInput): Step[] {
  const l = p.layout;
  const base = dirname(l.dataDir);
  return [
    p.exists.usersGroup
      ? { do: 'note', text: `the group ${l.usersGroup} exists` }
      : { do: 'run', argv: ['dseditgroup', '-o', 'create', '-r', 'Airlock users', l.usersGroup], why: 'the people allowed to use the broker' },
    ...(p.exists.user
      ? [{ do: 'note', text: `the user ${l.user} exists` } as Step]
      : [
          { do: 'run', argv: ['dseditgroup', '-o', 'create', '-r', 'Airlock broker', l.user], why: "the broker's own group" } as Step,
          // sysadminctl picks a free id below 500 for a role account (a name starting with _)
          { do: 'run', argv: ['sysadminctl', '-addUser', l.user, '-roleAccount', '-shell', '/usr/bin/false', '-home', '/var/empty', '-fullName', 'Airlock broker'], why: "the broker's own user" } as Step,
        ]),
    { do: 'run', argv: ['dseditgroup', '-o', 'edit', '-a', l.user, '-t', 'user', l.usersGroup], why: 'the broker gives its socket to the users group' },
    ...personSteps(p, ['dseditgroup', '-o', 'edit', '-a', p.person ?? '', '-t', 'user', l.usersGroup]),
    { do: 'mkdir', path: base, mode: 0o755, owner: 'root', group: 'wheel' },
    { do: 'mkdir', path: l.dataDir, mode: 0o700, owner: l.user, group: l.user },
    { do: 'mkdir', path: l.runDir, mode: 0o750, owner: l.user, group: l.usersGroup },
    { do: 'mkdir', path: dirname(l.logPath!), mode: 0o750, owner: 'root', group: 'wheel' },
    { do: 'write', path: l.unitPath, mode: 0o644, text: launchdPlist(l, p.node, p.cli) },
    { do: 'run', argv: ['launchctl', 'bootstrap', 'system', l.unitPath], why: 'start the broker now and at every boot', manager: true },
    { do: 'mkdir', path: dirname(l.markerPath), mode: 0o755, owner: 'root', group: 'wheel' },
    { do: 'marker', path: l.markerPath, layout: l },
  ];
}

/** Without `purge`, the data dir (journal, rules) and the accounts are kept, so a reinstall goes on where it was. */
export function uninstallPlan(l: ServiceLayout, purge: boolean, exists: { user: boolean; usersGroup: boolean }): Step[] {
  const linux = l.platform === 'linux';
  const stop: Step[] = linux
    ? [
        { do: 'run', argv: ['systemctl', 'disable', '--now', l.unitName], why: 'stop the broker and drop it from boot', manager: true },
        { do: 'remove', path: l.unitPath },
        { do: 'run', argv: ['systemctl', 'daemon-reload'], why: 'forget the unit', manager: true },
      ]
    : [
        { do: 'run', argv: ['launchctl', 'bootout', `system/${l.unitName}`], why: 'stop the broker and drop it from boot', manager: true },
        { do: 'remove', path: l.unitPath },
      ];
  const steps: Step[] = [
    // first: clients stop looking for the service before it goes
    { do: 'remove', path: l.markerPath },
    ...stop,
  ];
  if (!linux) steps.push({ do: 'remove', path: l.runDir, recursive: true });
  if (!purge) {
    steps.push({ do: 'note', text: `kept: the data dir ${l.dataDir}, the user ${l.user} and the group ${l.usersGroup} (--purge removes them)` });
    return steps;
  }
  steps.push({ do: 'remove', path: l.dataDir, recursive: true });
  if (linux) {
    if (exists.user) steps.push({ do: 'run', argv: ['userdel', l.user], why: "remove the broker's user (and its own group)" });
    if (exists.usersGroup) steps.push({ do: 'run', argv: ['groupdel', l.usersGroup], why: 'remove the users group' });
  } else {
    if (exists.user) {
      steps.push({ do: 'run', argv: ['sysadminctl', '-deleteUser', l.user], why: "remove the broker's user" });
      steps.push({ do: 'run', argv: ['dseditgroup', '-o', 'delete', l.user], why: "remove the broker's group" });
    }
    if (exists.usersGroup) steps.push({ do: 'run', argv: ['dseditgroup', '-o', 'delete', l.usersGroup], why: 'remove the users group' });
  }
  return steps;
}

/** A step as --dry-run prints it (the paths are the target system's). */
export function describeStep(s: Step): string {
  const mode = (m: number) => m.toString(8).padStart(4, '0');
  switch (s.do) {
    case 'run':
      return `run    ${s.argv.join(' ')}    # ${s.why}${s.manager ? ' (only where the service manager runs)' : ''}`;
    case 'mkdir':
      return `mkdir  ${s.path} (${mode(s.mode)} ${s.owner}:${s.group})`;
    case 'write':
      return `write  ${s.path} (${mode(s.mode)} root)\n${s.text.replace(/^/gm, '       | ')}`;
    case 'marker':
      return `write  ${s.path} (0644 root): ${markerPreview(s.layout)}`;
    case 'remove':
      return `remove ${s.path}${s.recursive ? ' (and all it holds)' : ''}`;
    case 'note':
      return `note   ${s.text}`;
  }
}

function markerPreview(l: ServiceLayout): string {
  return JSON.stringify({ version: 1, user: l.user, uid: `<uid of ${l.user}>`, usersGroup: l.usersGroup, gid: `<gid of ${l.usersGroup}>`, dataDir: l.dataDir, runDir: l.runDir });
}
