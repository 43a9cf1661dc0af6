/**
 * What approving a held call would do to a file: for a tool Airlock knows writes files (undo/file-tools.ts), read
 * the file it names, in the broker, and diff it against the content the call would leave. Reads are async and
 * bounded (a big file is refused, not read), so a preview never holds up the broker for others.
 *
 * A preview informs, it never decides: anything it cannot know for sure is said (an error, or a caveat), never
 * guessed. A relative path with no known working directory is such a thing; so is a path that names two files
 * (a `..` after a symlink: one to the kernel, another to a server that normalises the text first). A relative
 * path given to the reference filesystem server is read where that server puts it (filesystem-server-paths.ts).
 */
import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { MatchEnv } from '../../policy/arg-conditions.js';
import { argPaths, expandArgPath, pathApi, systemPathEnv } from '../../policy/path-resolve.js';
import type { FileTool, Preview, Ticket } from '../../protocol/api.js';
import { filesystemServerArgPaths } from '../filesystem-server-paths.js';
import { applyEdits, parseEdits } from './preview-edits.js';
import { fileDiff } from './preview-diff.js';

/** Files larger than this are not read for a preview. */
export const PREVIEW_FILE_LIMIT = 1024 * 1024;

export interface PreviewInput {
  ticket: Pick<Ticket, 'server' | 'tool' | 'arguments' | 'argsTruncated'>;
  fileTool: FileTool | undefined;
  /** The wrapper's working directory, when it sent one. */
  cwd: string | undefined;
  /** The command the wrapper started its server with (where the filesystem server's allowed folders are). */
  command?: readonly string[];
  /** The platform's rules and the home folder; the file system's calls default to the real ones. */
  env: Pick<MatchEnv, 'home' | 'platform'> & Partial<MatchEnv>;
}

/** An fs error in a few words: its code (ENOENT, EACCES, ...) or its message. */
function why(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
}

type FileText = { exists: false } | { exists: true; text: string; utf8: boolean } | { error: string };

/** Read a file for a preview: missing is fine, a folder, a device, a big or binary file is an error. */
export async function readForPreview(path: string): Promise<FileText> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false };
    return { error: `cannot read the file (${why(err)})` };
  }
  if (info.isDirectory()) return { error: 'the path is a folder, not a file' };
  if (!info.isFile()) return { error: 'not a regular file' };
  if (info.size > PREVIEW_FILE_LIMIT) return { error: 'file too large to preview' };
  // O_NONBLOCK: should the file have been swapped for a FIFO since the stat, opening it cannot hang
  const flags = process.platform === 'win32' ? constants.O_RDONLY : constants.O_RDONLY | constants.O_NONBLOCK;
  let handle;
  try {
    handle = await open(path, flags);
  } catch (err) {
    return { error: `cannot read the file (${why(err)})` };
  }
  try {
    // one byte past the limit tells a file that grew since the stat from one that fits
    const buf = Buffer.alloc(PREVIEW_FILE_LIMIT + 1);
    let total = 0;
    while (total < buf.length) {
      const { bytesRead } = await handle.read(buf, total, buf.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    if (total > PREVIEW_FILE_LIMIT) return { error: 'file too large to preview' };
    const bytes = buf.subarray(0, total);
    if (bytes.includes(0)) return { error: 'binary file' };
    let text: string;
    let utf8 = true;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      text = new TextDecoder('utf-8').decode(bytes);
      utf8 = false;
    }
    return { exists: true, text, utf8 };
  } catch (err) {
    return { error: `cannot read the file (${why(err)})` };
  } finally {
    await handle.close();
  }
}

type Change = (before: string) => { text: string; caveat?: string } | { error: string };

/** How the call turns the file's text into the new one, or why its arguments do not say. */
function newContent(fileTool: FileTool, args: Record<string, unknown>): Change | string {
  const value = args[fileTool.contentArg];
  if (fileTool.kind === 'write') return typeof value === 'string' ? () => ({ text: value }) : `"${fileTool.contentArg}" is not text`;
  const edits = parseEdits(value, fileTool.contentArg);
  if (typeof edits === 'string') return edits;
  return (before) => {
    const applied = applyEdits(before, edits);
    if (applied.applied === 0 && applied.missed.length > 0) {
      return { error: `none of the ${applied.missed.length} edit(s) matches the file exactly (the server may still match them ignoring whitespace, or refuse the call)` };
    }
    if (applied.missed.length === 0) return { text: applied.text };
    const which = applied.missed.map((i) => i + 1).join(', ');
    return { text: applied.text, caveat: `edit(s) ${which} do not match the file exactly and are not shown: the server may match them ignoring whitespace, or refuse the call` };
  };
}

function relative(value: string, platform: NodeJS.Platform): boolean {
  return !(value === '~' || value.startsWith('~/') || pathApi(platform).isAbsolute(value));
}

/** The one file a call's path argument names, or why that is not known. */
function targetPath(target: string, fileTool: FileTool, input: PreviewInput): { path: string; caveat?: string } | { path?: string; reason: string } {
  const { cwd } = input;
  const env: MatchEnv = { ...systemPathEnv, ...input.env };
  const isRelative = relative(target, env.platform);
  let paths: string[] | null;
  let caveat: string | undefined;
  if (isRelative && fileTool.builtIn) {
    // the filesystem server takes a relative path from its allowed folders, never from its working directory
    const got = filesystemServerArgPaths(target, input.command ?? [], cwd, env);
    if ('why' in got) return { reason: `a relative path, and ${got.why}, so which file it names is not known` };
    paths = got.paths;
    caveat = `a relative path, read from the filesystem server's first allowed folder as it does (${got.absolute}); a client that gives the server roots changes that`;
  } else {
    const absolute = expandArgPath(target, env, cwd);
    if (absolute === null) return { reason: 'relative path and no working directory known' };
    paths = argPaths(absolute, env);
    if (paths === null) return { path: absolute, reason: 'cannot resolve the path (a symlink loop, or a folder on the way that cannot be read)' };
    if (isRelative) caveat = `a relative path, read from the wrapper's working directory (${cwd}): the server may resolve it otherwise`;
  }
  if (paths.length > 1) {
    return {
      path: paths[0]!,
      reason: `the path goes up (..) after a symlink, so it names two files: ${paths[0]} to the operating system, ${paths[1]} to a server that removes .. as text first; no diff is shown`,
    };
  }
  return caveat ? { path: paths[0]!, caveat } : { path: paths[0]! };
}

/** The preview of one held call. */
export async function previewCall(input: PreviewInput): Promise<Preview> {
  const { ticket, fileTool } = input;
  if (!fileTool) return { kind: 'none', reason: `Airlock does not know ${ticket.tool} of ${ticket.server} as a tool that writes files` };
  if (ticket.argsTruncated || typeof ticket.arguments !== 'object' || ticket.arguments === null) {
    return { kind: 'error', reason: 'the arguments were too large for the ticket to keep whole, so the new content is not known' };
  }
  const args = ticket.arguments as Record<string, unknown>;
  const target = args[fileTool.pathArg];
  if (typeof target !== 'string' || target === '' || target.includes('\0')) return { kind: 'error', reason: `the call names no file in "${fileTool.pathArg}"` };
  const where = targetPath(target, fileTool, input);
  if ('reason' in where) return { kind: 'error', ...(where.path ? { path: where.path } : {}), reason: where.reason };
  const path = where.path;

  const change = newContent(fileTool, args);
  if (typeof change === 'string') return { kind: 'error', path, reason: change };

  const file = await readForPreview(path);
  if ('error' in file) return { kind: 'error', path, reason: file.error };
  if (!file.exists && fileTool.kind === 'edit') return { kind: 'error', path, reason: 'the file does not exist, so its edits cannot apply' };
  const before = file.exists ? file.text : '';
  const result = change(before);
  if ('error' in result) return { kind: 'error', path, reason: result.error };
  const caveats: string[] = [];
  if (file.exists && !file.utf8) caveats.push('the file is not valid UTF-8 text: what is not is shown as replacement characters');
  if (where.caveat) caveats.push(where.caveat);
  if (result.caveat) caveats.push(result.caveat);
  const after = result.text;
  const diff = await fileDiff(path, before, after, file.exists);
  if (diff.whole) caveats.push('the change was too large to compare line by line in time: shown as the whole file replaced');
  return {
    kind: 'file',
    path,
    exists: file.exists,
    diff: diff.diff,
    added: diff.added,
    removed: diff.removed,
    truncated: diff.truncated,
    ...(caveats.length ? { caveat: caveats.join('; ') } : {}),
  };
}
