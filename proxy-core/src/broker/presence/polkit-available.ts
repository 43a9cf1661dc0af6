/** Whether polkit can be asked here: Linux with `pkcheck` on the PATH (whether polkitd answers is pkcheck's to say). */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export function polkitAvailable(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
  if (platform !== 'linux') return false;
  for (const dir of (env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, 'pkcheck'), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}
