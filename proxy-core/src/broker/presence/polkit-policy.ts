/**
 * Airlock's polkit action, dev.airlock.loosen: what a loosening step (approving a held call, adding an allow
 * rule, turning E-Stop off) asks polkit about. Its defaults ask the person at an active local session for
 * their own password (auth_self_keep: polkit then remembers the yes for that process for a few minutes), and
 * refuse everyone else (remote, inactive, no session: allow_any and allow_inactive no). The message names
 * Airlock and says what a yes does; it cannot show the statement itself, since polkit takes the detail that
 * would carry it only from a root caller (checkPolkit passes it then, for rules and for agents that show
 * details), so Airlock shows the statement where it asks.
 *
 * The text lives here, so an install writes what the code expects; build/polkit/dev.airlock.loosen.policy is the
 * same text for packages that ship it as a file (a test keeps the two equal).
 */
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const POLKIT_ACTION_ID = 'dev.airlock.loosen';

/** Where polkitd reads the actions packages ship. */
export const POLKIT_ACTIONS_DIR = '/usr/share/polkit-1/actions';

export const POLKIT_POLICY = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE policyconfig PUBLIC "-//freedesktop//DTD PolicyKit Policy Configuration 1.0//EN"
  "http://www.freedesktop.org/standards/PolicyKit/1/policyconfig.dtd">
<policyconfig>
  <vendor>Airlock</vendor>
  <action id="${POLKIT_ACTION_ID}">
    <description>Loosen Airlock's protection</description>
    <message>Airlock asks you, not a program, to confirm a change that loosens its protection of your tools</message>
    <defaults>
      <allow_any>no</allow_any>
      <allow_inactive>no</allow_inactive>
      <allow_active>auth_self_keep</allow_active>
    </defaults>
  </action>
</policyconfig>
`;

export interface PolicyInstall {
  installed: boolean;
  path: string;
  reason: string;
}

/**
 * Write the action to `dir` (polkitd's own by default), replacing the file in one rename so polkitd never reads
 * half of it. Only root may write there; anyone else is told so and nothing is written.
 */
export function installPolkitPolicy(dir: string = POLKIT_ACTIONS_DIR): PolicyInstall {
  const path = join(dir, `${POLKIT_ACTION_ID}.policy`);
  if (process.platform !== 'linux') return { installed: false, path, reason: `polkit is not used on ${process.platform}` };
  if (dir === POLKIT_ACTIONS_DIR && process.getuid?.() !== 0) {
    return { installed: false, path, reason: `writing ${path} needs root` };
  }
  const temp = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(temp, POLKIT_POLICY, { mode: 0o644 });
    // the umask may have narrowed it; polkitd reads it as its own user
    chmodSync(temp, 0o644);
    renameSync(temp, path);
  } catch (err) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // the folder itself is what failed: there is no temporary file to remove
    }
    return { installed: false, path, reason: `could not write ${path}: ${(err as Error).message}` };
  }
  return { installed: true, path, reason: `installed ${path}` };
}
