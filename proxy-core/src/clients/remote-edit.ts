/**
 * One remote entry's protect or unprotect inside a file's text: a remote entry becomes `airlock wrap --url …`
 * (its original text kept in `originals`), a wrapped one goes back to the kept text while it is unchanged, or
 * is rebuilt from what it says.
 */
import { getAt, isRecord, sameData } from './docpath.js';
import type { RemoteOriginal } from './backup.js';
import { readCommand } from './edit.js';
import { describeEntry } from './entries.js';
import type { FormatSyntax } from './formats/syntax.js';
import { ConfigEditError } from './formats/syntax.js';
import type { Launcher } from './launcher.js';
import type { Recognition } from './own-launcher.js';
import { entryText, readRemote, rebuiltRemoteEntry, remoteWrap, replaceEntry, wrappedRemoteEntry } from './remote.js';
import type { ClientId, ServerEntry } from './types.js';
import { parseWrapArgv, wrapPrefix } from './wrapped.js';

export interface RemoteJob {
  syntax: FormatSyntax;
  client: ClientId;
  /** Present for protect: what the wrapped entry starts, and its --home. */
  protect?: { launcher: Launcher; home: string | undefined };
  /** The kept originals of this file, by entry path; changed in place. */
  originals: Record<string, RemoteOriginal>;
  r: Recognition;
}

function entryAt(job: RemoteJob, text: string, e: ServerEntry): Record<string, unknown> {
  const entry = getAt(job.syntax.parse(text), e.path);
  if (!isRecord(entry)) throw new ConfigEditError(`entry ${e.name} is not an object`);
  return entry;
}

/** Put the remote entry back: the kept text while the entry holds what protect wrote, else rebuilt. */
function restore(job: RemoteJob, text: string, e: ServerEntry, key: string): string {
  const entry = entryAt(job, text, e);
  const kept = job.originals[key];
  delete job.originals[key];
  if (kept && sameData(entry, kept.wrote)) return replaceEntry(text, job.syntax, e.path, { raw: kept.raw });
  const cmd = readCommand(entry, e.shape);
  if (typeof cmd === 'string') throw new ConfigEditError(cmd);
  const parsed = parseWrapArgv(cmd.args.slice(cmd.args.indexOf('wrap') + 1), true);
  if (parsed.url === undefined) throw new ConfigEditError(`${e.name} names no --url`);
  return replaceEntry(text, job.syntax, e.path, { value: rebuiltRemoteEntry(job.client, entry, e.shape, parsed) });
}

/** The text with entry `e` protected (or re-protected) or unprotected. */
export function changeRemote(job: RemoteJob, text: string, e: ServerEntry): string {
  const key = JSON.stringify(e.path);
  let out = text;
  let current = e;
  if (e.remoteWrapped) {
    out = restore(job, out, e, key);
    if (!job.protect) return out;
    current = describeEntry(e.location, e.name, e.path, entryAt(job, out, e), job.r);
  }
  if (!job.protect) return out;
  const entry = entryAt(job, out, current);
  const spec = readRemote(current.location.format, entry, current.shape, current.transport);
  if (typeof spec === 'string') throw new ConfigEditError(`${e.name}: ${spec}`);
  const { launcher, home } = job.protect;
  const ownEnv = getAt(entry, [...current.shape.base, current.shape.envKey]);
  const wrap = remoteWrap(spec, wrapPrefix(launcher, e.name, job.client, home, ''), isRecord(ownEnv) ? ownEnv : {});
  const wrote = wrappedRemoteEntry(job.client, entry, current.shape, launcher, wrap);
  // kept before the entry changes; an original already kept (protected, then edited by hand) is replaced
  job.originals[key] = { raw: entryText(out, e.path), wrote };
  return replaceEntry(out, job.syntax, e.path, { value: wrote });
}
