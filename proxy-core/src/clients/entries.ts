/** Turning a parsed config document into the list of servers it declares, with transport and protection state. */
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { getAt, isRecord } from './docpath.js';
import { readCommand } from './edit.js';
import type { ClientId, CommandShape, ConfigLocation, DocPath, ServerEntry, Transport } from './types.js';
import { isOwnLauncher, otherHome, type Recognition } from './own-launcher.js';
import { unwrap, wrappedByHand } from './wrapped.js';
import { readRemote } from './remote.js';

/** Why an entry that already starts `airlock wrap`, but not as protect writes it, is left alone both ways. */
export const HAND_WRAPPED = 'it already starts `airlock wrap`, in a form protect does not write (by hand); edit it by hand';

/**
 * Where a client keeps an entry's command: Goose says `cmd`/`envs`, Zed's older format nests `command: {path}`,
 * Cline CLI 3.x nests `transport: {type, command, args, env}`, opencode gives `command` as one list.
 */
export function commandShape(client: ClientId, entry: unknown): CommandShape {
  if (client === 'goose') return { base: [], commandKey: 'cmd', argsKey: 'args', envKey: 'envs' };
  if (client === 'opencode') return { base: [], commandKey: 'command', argsKey: 'command', envKey: 'environment', combined: true };
  if (client === 'cline' && isRecord(entry) && isRecord(entry.transport)) {
    return { base: ['transport'], commandKey: 'command', argsKey: 'args', envKey: 'env' };
  }
  if (client === 'zed' && isRecord(entry) && isRecord(entry.command)) {
    return { base: ['command'], commandKey: 'path', argsKey: 'args', envKey: 'env' };
  }
  return { base: [], commandKey: 'command', argsKey: 'args', envKey: 'env' };
}

/** An address to show: scheme, host and path only, since query strings and user info often carry tokens. */
function safeUrl(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(not a valid URL)';
  }
}

function transportOf(client: ClientId, outer: Record<string, unknown>, shape: CommandShape): { transport: Transport; reason?: string; url?: string } {
  // Cline CLI's `transport` object holds what the others keep in the entry itself
  const inner = getAt(outer, shape.base);
  const entry = shape.base.length && isRecord(inner) ? inner : outer;
  const type = typeof entry.type === 'string' ? entry.type.toLowerCase().replace(/[-_]/g, '') : undefined;
  const url = safeUrl(entry.url ?? entry.serverUrl ?? entry.httpUrl ?? entry.uri);
  // opencode: `remote` tries streamable HTTP, then SSE
  if (type === 'http' || type === 'streamablehttp' || (client === 'opencode' && type === 'remote')) return { transport: 'http', url };
  if (type === 'sse') return { transport: 'sse', url };
  if (client === 'goose' && type !== undefined && type !== 'stdio') {
    return { transport: 'other', reason: `Goose "${String(entry.type)}" extension: nothing to wrap` };
  }
  if (shape.commandKey in entry && (shape.base.length === 0 || entry === inner)) return { transport: 'stdio' };
  if (typeof entry.httpUrl === 'string' || typeof entry.serverUrl === 'string') return { transport: 'http', url };
  if (typeof entry.url === 'string' || typeof entry.uri === 'string') {
    // Cline, Gemini CLI and Qwen Code read an untyped `url` as SSE; the others as streamable HTTP.
    const sse = client === 'cline' || client === 'gemini-cli' || client === 'qwen-code';
    return { transport: sse ? 'sse' : 'http', url };
  }
  return { transport: 'other', reason: `no "${shape.commandKey}" or URL` };
}

/** Why an entry that starts `… wrap …` is not protected, when its launcher is not Airlock's. */
export function lookAlikeReason(launcher: readonly string[]): { reason: string; stale: boolean } {
  const gone = launcher.find((w) => isAbsolute(w) && !existsSync(w));
  if (gone) return { reason: `looks wrapped, but its launcher ${gone} is gone: run \`airlock protect\` again`, stale: true };
  return { reason: `looks wrapped but does not run Airlock's launcher (it starts ${JSON.stringify(launcher[0] ?? '')})`, stale: false };
}

/** Describe one entry object found at `path`; `r` says which launchers and data dir are this Airlock's. */
export function describeEntry(location: ConfigLocation, name: string, path: DocPath, entry: unknown, r: Recognition): ServerEntry {
  const client = location.client;
  const shape = commandShape(client, entry);
  const base: ServerEntry = { client, location, name, path, transport: 'other', protected: false, shape, envKeys: [] };
  if (!isRecord(entry)) return { ...base, unprotectable: 'the entry is not an object' };
  const env = entry[shape.envKey] ?? getAt(entry, [...shape.base, shape.envKey]);
  const envKeys = isRecord(env) ? Object.keys(env) : [];
  const cwd = typeof entry.cwd === 'string' ? entry.cwd : undefined;
  const t = transportOf(client, entry, shape);
  const out: ServerEntry = { ...base, envKeys, cwd, transport: t.transport, url: t.url };
  if (name.trim() === '') return { ...out, unprotectable: 'the server has no name' };
  if (t.transport === 'http' || t.transport === 'sse') {
    const spec = readRemote(location.format, entry, shape, t.transport);
    return typeof spec === 'string' ? { ...out, unprotectable: spec } : out;
  }
  if (t.transport !== 'stdio') return { ...out, unprotectable: t.reason };
  const cmd = readCommand(entry, shape);
  if (typeof cmd === 'string') return { ...out, unprotectable: cmd };
  const un = unwrap(cmd);
  const byHand = un ? null : wrappedByHand(cmd);
  const words = un?.launcher ?? byHand?.launcher;
  if (words && !isOwnLauncher(words, r)) {
    // something else runs: protect wraps it whole (or, its launcher gone, rewrites it); nothing is trusted to it
    const { reason, stale } = lookAlikeReason(words);
    return { ...out, written: cmd, original: stale && un ? un.original : cmd, lookAlike: reason, ...(stale && un ? { lookAlikeStale: true } : {}) };
  }
  if (un) {
    const elsewhere = otherHome(un.home, r);
    const staleLauncher = un.launcher.find((w) => isAbsolute(w) && !existsSync(w));
    return {
      ...out,
      written: cmd,
      original: un.original,
      protected: elsewhere === undefined,
      wrappedAs: { name: un.name, client: un.client, ...(un.home !== undefined ? { home: un.home } : {}) },
      ...(staleLauncher ? { staleLauncher } : {}),
      ...(elsewhere !== undefined ? { otherHome: elsewhere } : {}),
      ...(un.loosening.length ? { loosening: un.loosening } : {}),
    };
  }
  if (byHand) {
    const elsewhere = otherHome(byHand.home, r);
    // a remote server protect rewrote: unprotect rebuilds the remote entry (remote.ts)
    const remote = byHand.original === undefined && byHand.name !== undefined;
    return {
      ...out,
      ...(byHand.url !== undefined ? { url: safeUrl(byHand.url) } : {}),
      written: cmd,
      ...(byHand.original ? { original: byHand.original } : {}),
      protected: elsewhere === undefined,
      ...(elsewhere !== undefined ? { otherHome: elsewhere } : {}),
      ...(byHand.loosening.length ? { loosening: byHand.loosening } : {}),
      ...(remote ? { remoteWrapped: true } : { unprotectable: HAND_WRAPPED }),
      wrappedAs: { name: byHand.name ?? name, client: byHand.client, ...(byHand.home !== undefined ? { home: byHand.home } : {}) },
    };
  }
  return { ...out, written: cmd, original: cmd };
}

/** Every server a parsed document declares at `location`; throws a message when the servers key is malformed. */
export function describeServers(location: ConfigLocation, doc: unknown, r: Recognition, serversPath: DocPath = location.serversPath): ServerEntry[] {
  const servers = getAt(doc, serversPath);
  if (servers === undefined || servers === null) return [];
  if (location.layout === 'list') {
    if (!Array.isArray(servers)) throw new Error(`"${serversPath.join('.')}" is not a list`);
    const seen = new Map<string, number>();
    const out = servers.map((item, i) => {
      const name = isRecord(item) && typeof item.name === 'string' ? item.name : `#${i + 1}`;
      seen.set(name, (seen.get(name) ?? 0) + 1);
      const e = describeEntry(location, name, [...serversPath, i], item, r);
      return isRecord(item) && typeof item.name === 'string' ? e : { ...e, unprotectable: e.unprotectable ?? 'the entry has no name' };
    });
    return out.map((e) => ((seen.get(e.name) ?? 0) > 1 ? { ...e, unprotectable: e.unprotectable ?? 'another entry has the same name' } : e));
  }
  if (!isRecord(servers)) throw new Error(`"${serversPath.join('.')}" is not an object`);
  return Object.entries(servers).map(([name, entry]) => describeEntry(location, name, [...serversPath, name], entry, r));
}
