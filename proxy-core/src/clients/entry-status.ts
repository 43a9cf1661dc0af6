/**
 * How a server entry's state is put into words, the same for `airlock clients` and the UI (report-json.ts):
 * protected only when it runs Airlock's launcher and reports to this data dir; a look-alike, an entry that
 * reports elsewhere, and loosening flags Airlock does not apply by themselves are each named.
 */
import type { ServerEntry } from './types.js';

/** Loosening flags and what applies them instead. */
export function looseningNote(s: Pick<ServerEntry, 'name' | 'loosening' | 'wrappedAs'>): string | undefined {
  if (!s.loosening?.length) return undefined;
  const name = s.wrappedAs?.name ?? s.name;
  return `its entry adds ${s.loosening.join(', ')}, which Airlock applies only once you chose the same (\`airlock trust ${name} on\`, \`airlock inverses\`)`;
}

/** What is wrong with the entry, or what it asks that is not applied; undefined when nothing is. */
export function entryWarning(s: ServerEntry): string | undefined {
  if (s.lookAlike) return s.lookAlike;
  if (s.otherHome !== undefined) return `reports to another Airlock data dir: ${s.otherHome}`;
  return looseningNote(s);
}

/** The one-line state `airlock clients` prints. */
export function entryState(s: ServerEntry): string {
  if (s.lookAlike || s.otherHome !== undefined) return `not protected: ${entryWarning(s)}`;
  const loose = looseningNote(s);
  const tail = loose ? `; ${loose}` : '';
  if (s.protected && s.staleLauncher) return `protected, but ${s.staleLauncher} is gone: run \`airlock protect\` again${tail}`;
  if (s.protected) return `protected${tail}`;
  if (s.unprotectable) return `not protectable: ${s.unprotectable}`;
  return 'not protected';
}
