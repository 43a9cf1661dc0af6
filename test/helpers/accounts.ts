/**
 * Real accounts for the hardened-mode tests: system users and groups made with useradd/groupadd (the machine and
 * CI run as root) and removed by the next cleanup(), and processes run as one of them with setpriv.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { CLI, type CliResult, onCleanup } from './airlock.js';

/** Throws when the tests cannot make accounts: they must fail there, never pass by doing nothing. */
export function assertRoot(): void {
  if (process.getuid?.() !== 0) throw new Error('the hardened-mode tests make real users and groups: run them as root (CI does)');
}

/** A name unique to this run, short enough for every tool (32 characters at most). */
export function accountName(prefix: string): string {
  return `${prefix}${randomBytes(4).toString('hex')}`;
}

export function id(flag: '-u' | '-g', name: string): number {
  return Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
}

export function groupIdOf(name: string): number {
  return Number(execFileSync('getent', ['group', name], { encoding: 'utf8' }).split(':')[2]);
}

export function makeGroup(name: string): number {
  execFileSync('groupadd', ['--system', name]);
  onCleanup(() => execFileSync('groupdel', [name], { stdio: 'ignore' }));
  return groupIdOf(name);
}

/** A system user with a group of its own name, in `groups` as well. */
export function makeUser(name: string, groups: string[] = []): number {
  execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  // userdel takes the user's own group with it
  onCleanup(() => execFileSync('userdel', [name], { stdio: 'ignore' }));
  if (groups.length) execFileSync('usermod', ['--append', '--groups', groups.join(','), name]);
  assertCheckoutReachable(name);
  return id('-u', name);
}

/**
 * These tests run this checkout's CLI as another user: one that cannot read it would fail them with a module not
 * found far from the cause, so it fails here, saying which directory is closed to other users.
 */
export function assertCheckoutReachable(user: string): void {
  try {
    execFileSync('setpriv', [`--reuid=${user}`, `--regid=${user}`, '--init-groups', '--', 'test', '-r', CLI], { stdio: 'ignore' });
  } catch {
    const closed: string[] = [];
    for (let dir = dirname(CLI); dir !== dirname(dir); dir = dirname(dir)) if ((statSync(dir).mode & 0o001) === 0) closed.push(dir);
    const where = closed.length > 0 ? ` (closed to other users: ${closed.reverse().join(', ')})` : '';
    throw new Error(`these tests run Airlock as the user ${user}, who cannot read ${CLI}${where}: run them from a checkout other users can reach`);
  }
}

/** The command prefix that runs what follows as `user`, with its groups. */
export function asUser(user: string): string[] {
  return ['setpriv', `--reuid=${user}`, `--regid=${user}`, '--init-groups', '--'];
}

/** Run a command as `user`; its exit code and output. */
export function runAs(user: string, argv: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const full = [...asUser(user), ...argv];
  return new Promise((resolve) => {
    execFile(full[0]!, full.slice(1), { env: { PATH: process.env.PATH, ...env }, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `airlock ARGS` as `user`. */
export function cliAs(user: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runAs(user, [process.execPath, CLI, ...args], env);
}
