/**
 * The service runs the code it is given as its own user: code a person may change is code an agent running as
 * that person may change, and the separation would be for show. So the Node binary and every file of the
 * installed Airlock must be root's and writable by root alone before the service is set up to run them.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { assertRootOwned } from '../ipc/system.js';

export class WritableCode extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WritableCode';
  }
}

/** The first entry under `dir` (itself included) that is not root's, or that others may write; null if none. */
export function firstWritable(dir: string): string | null {
  const pending = [dir];
  while (pending.length) {
    const p = pending.pop()!;
    const st = lstatSync(p);
    if (st.uid !== 0 || (!st.isSymbolicLink() && (st.mode & 0o022) !== 0)) return `${p} (uid ${st.uid}, mode ${(st.mode & 0o7777).toString(8)})`;
    if (st.isDirectory()) for (const name of readdirSync(p)) pending.push(join(p, name));
  }
  return null;
}

export function assertRootOnlyCode(node: string, packageRoot: string): void {
  try {
    assertRootOwned(node, 'the Node binary');
    assertRootOwned(packageRoot, 'the installed folder of Airlock');
  } catch (err) {
    throw new WritableCode(`${(err as Error).message}; the service would run code that someone other than root can change`);
  }
  const found = firstWritable(packageRoot);
  if (found) {
    throw new WritableCode(`${found} in ${packageRoot} can be changed by someone other than root, and the service would run it: install Airlock where only root can write (e.g. \`sudo npm install -g\`), then install the service from there`);
  }
}
