/** Reading a config file's exact bytes, and turning edited text back into bytes the same way. */
import { readFile, realpath, stat } from 'node:fs/promises';

export interface ConfigFile {
  /** The path as given, and the file it resolves to (dotfile managers symlink configs; write the target). */
  path: string;
  realPath: string;
  bytes: Buffer;
  /** The text without a byte-order mark. */
  text: string;
  bom: boolean;
  mode: number;
  uid: number;
  gid: number;
  mtimeMs: number;
}

/**
 * The largest client config Airlock reads. Real ones are a few KB; one of many MB is either not a config or
 * made to cost Airlock its memory and hours of rewriting, so it is refused (reported, never edited).
 */
export const MAX_CONFIG_BYTES = 8 * 1024 * 1024;

export class ConfigReadError extends Error {
  override name = 'ConfigReadError';
}

/** Read a config file; null if it does not exist. Throws ConfigReadError if it is not text we can round-trip. */
export async function readConfigFile(path: string): Promise<ConfigFile | null> {
  let realPath: string;
  try {
    realPath = await realpath(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigReadError(`cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const st = await stat(realPath);
    if (!st.isFile()) throw new ConfigReadError(`${path} is not a regular file`);
    const tooBig = () =>
      new ConfigReadError(`${path} is ${(st.size / 2 ** 20).toFixed(1)} MB, over the ${MAX_CONFIG_BYTES / 2 ** 20} MB Airlock reads in a client config; it was left alone (nothing in it is protected by Airlock)`);
    if (st.size > MAX_CONFIG_BYTES) throw tooBig();
    const bytes = await readFile(realPath);
    // it may have grown between the stat and the read
    if (bytes.length > MAX_CONFIG_BYTES) throw tooBig();
    const decoded = bytes.toString('utf8');
    // Editing a file that is not valid UTF-8 would silently replace its bad bytes: refuse instead.
    if (!Buffer.from(decoded, 'utf8').equals(bytes)) throw new ConfigReadError(`${path} is not valid UTF-8`);
    const bom = decoded.startsWith('\uFEFF');
    const text = bom ? decoded.slice(1) : decoded;
    return { path, realPath, bytes, text, bom, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, mtimeMs: st.mtimeMs };
  } catch (err) {
    if (err instanceof ConfigReadError) throw err;
    throw new ConfigReadError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/** The bytes to write for edited text, keeping the original's byte-order mark. */
export function encodeConfig(file: ConfigFile, text: string): Buffer {
  return Buffer.from((file.bom ? '\uFEFF' : '') + text, 'utf8');
}
