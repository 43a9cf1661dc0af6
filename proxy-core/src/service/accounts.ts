/**
 * Users and groups by name. Node has no getpwnam/getgrnam: the system's own tools answer (getent on Linux, which
 * also sees NSS/LDAP accounts; dscl on macOS), with /etc/group as the last word where getent is missing.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

export function assertAccountName(name: string, what: string): void {
  if (!NAME.test(name)) throw new Error(`${what} "${name}" is not a valid account name (lower-case letters, digits, _ and -, at most 32, not starting with a digit or -)`);
}

function quiet(cmd: string, args: string[]): string | null {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

/** A user's id, or null when there is no such user. */
export function userId(name: string): number | null {
  assertAccountName(name, 'the user');
  const out = quiet('id', ['-u', name]);
  return out === null ? null : Number(out.trim());
}

/** A group's id, or null when there is no such group. */
export function groupId(name: string, platform: NodeJS.Platform = process.platform): number | null {
  assertAccountName(name, 'the group');
  if (platform === 'darwin') {
    const out = quiet('dscl', ['.', '-read', `/Groups/${name}`, 'PrimaryGroupID']);
    const m = out && /PrimaryGroupID:\s*(\d+)/.exec(out);
    return m ? Number(m[1]) : null;
  }
  const line = quiet('getent', ['group', name]) ?? etcGroupLine(name);
  const gid = line?.split(':')[2];
  return gid !== undefined && /^\d+$/.test(gid.trim()) ? Number(gid.trim()) : null;
}

/** The members a group lists (not those whose primary group it is). */
export function groupMembers(name: string): string[] {
  assertAccountName(name, 'the group');
  const line = quiet('getent', ['group', name]) ?? etcGroupLine(name);
  const list = line?.trim().split(':')[3] ?? '';
  return list ? list.split(',') : [];
}

function etcGroupLine(name: string): string | null {
  try {
    return readFileSync('/etc/group', 'utf8').split('\n').find((l) => l.startsWith(`${name}:`)) ?? null;
  } catch {
    return null;
  }
}
