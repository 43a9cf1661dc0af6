/**
 * Will a call be undoable if it runs? One answer for the ticket the broker shows and for the rules the wrapper
 * decides in the same tick (`undoable` on a rule): a file tool whose path arguments all name absolute paths is
 * undone from a snapshot; a tool with a declared inverse is undone by calling it; anything else is not.
 *
 * A relative path is resolved by the server its own way (the filesystem server: against its allowed folders),
 * which Airlock cannot know, so such a call is not snapshotted rather than snapshotted at a guess.
 */
import { posix, win32 } from 'node:path';

export type UndoPlan = 'snapshot' | 'inverse' | null;

export interface UndoMeans {
  /** The tool's path arguments when Airlock snapshots its files (undefined: not a file tool). */
  pathArgs: readonly string[] | undefined;
  /** Is an inverse declared for this tool (`airlock wrap --undo`, or stored for the server)? */
  inverse: boolean;
}

export function plannedUndo(means: UndoMeans, args: Record<string, unknown>, absolute: (path: string) => boolean): UndoPlan {
  if (means.pathArgs) {
    const all = means.pathArgs.every((a) => {
      const v = Object.hasOwn(args, a) ? args[a] : undefined;
      return typeof v === 'string' && v !== '' && absolute(v);
    });
    return all ? 'snapshot' : null;
  }
  return means.inverse ? 'inverse' : null;
}

/** Does a path argument name an absolute path (`~` counts: it is the user's home)? */
export function namesAbsolutePath(value: string, platform: NodeJS.Platform = process.platform): boolean {
  if (value === '~' || value.startsWith('~/') || (platform === 'win32' && value.startsWith('~\\'))) return true;
  return (platform === 'win32' ? win32 : posix).isAbsolute(value);
}
