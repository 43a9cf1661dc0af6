/**
 * Remote (URL) entries: protect turns one into a command entry that starts `airlock wrap --url`, and unprotect
 * turns it back. Header values stay out of the command line (any process can read another's argv): each moves
 * into the entry's env as a variable of its own, and the wrapper is given `--header "Name: ${VAR}"`, which it
 * expands from its env. The entry's original text is kept beside the config's backup, so unprotect puts back the
 * very bytes; without it (another machine, a data dir wiped) the entry is rebuilt from what the wrapped one says.
 */
import { findNodeAtLocation, parseTree, type Node } from 'jsonc-parser';
import { getAt, isRecord, sameData } from './docpath.js';
import { ConfigEditError, type FormatSyntax } from './formats/syntax.js';
import type { Launcher } from './launcher.js';
import type { ClientId, CommandShape, DocPath, Format, Transport } from './types.js';
import type { WrapArgv } from './wrapped.js';
import { isSecretName } from './redact.js';

/** What a remote entry asks for: where, with which headers, over which transport (undefined: the wrapper tries both). */
export interface RemoteSpec {
  url: string;
  headers: [string, string][];
  transport?: 'http' | 'sse';
}

const URL_KEYS = ['url', 'httpUrl', 'serverUrl', 'uri'];
/** What a remote entry says that a command entry must not: its address, headers and remote type. */
const REMOTE_KEYS = new Set([...URL_KEYS, 'headers', 'type', 'transportType']);
/** Where a wrapped entry keeps what protect wrote: dropped again when the remote entry is rebuilt. */
const COMMAND_KEYS = new Set(['command', 'args', 'env', 'environment', 'type']);

/** The object that holds the entry's address: the entry itself, or Cline CLI's `transport`. */
function holder(entry: Record<string, unknown>, shape: CommandShape): Record<string, unknown> {
  const inner = getAt(entry, shape.base);
  return shape.base.length && isRecord(inner) ? inner : entry;
}

/** Read a remote entry, or say why protect cannot rewrite it. */
export function readRemote(format: Format, entry: Record<string, unknown>, shape: CommandShape, transport: Transport): RemoteSpec | string {
  if (format !== 'json' && format !== 'jsonc') return `remote server in a ${format.toUpperCase()} file: protect does not rewrite these yet; wrap it by hand with \`airlock wrap --url\``;
  const h = holder(entry, shape);
  const key = URL_KEYS.find((k) => typeof h[k] === 'string');
  const url = key === undefined ? undefined : (h[key] as string);
  if (url === undefined) return 'remote server without a URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'its URL is not a valid URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `its URL is ${parsed.protocol}, not http(s)`;
  // the URL goes on the wrapper's command line, which other processes can read: a secret in it would show there
  const secretParam = [...parsed.searchParams.keys()].find((k) => isSecretName(k));
  if (parsed.username || parsed.password || secretParam !== undefined) {
    return `its URL carries ${secretParam !== undefined ? `a secret (${secretParam}=…)` : 'credentials'}, which the wrapper's command line would show; move it into a header and protect again`;
  }
  const headers: [string, string][] = [];
  if (h.headers !== undefined) {
    if (!isRecord(h.headers)) return '"headers" is not an object';
    for (const [name, value] of Object.entries(h.headers)) {
      if (typeof value !== 'string') return `header ${name} is not a string`;
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return `"${name}" is not a valid header name`;
      if (/[\r\n]/.test(value)) return `header ${name} has a line break in its value`;
      headers.push([name, value]);
    }
  }
  // an explicit type, or a key that names the transport (Gemini and Qwen: httpUrl is HTTP, url is SSE)
  // Cline, Gemini and Qwen read an untyped `url` as SSE (transportOf): said as plainly as a type
  const typed = typeof h.type === 'string' || key !== 'url' || transport === 'sse';
  return { url, headers, ...(typed && (transport === 'http' || transport === 'sse') ? { transport } : {}) };
}

/** The env variable a header's value moves into; unique within the entry's env. */
function headerVar(name: string, taken: Set<string>): string {
  const base = `AIRLOCK_HEADER_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
  let v = base;
  for (let i = 2; taken.has(v); i++) v = `${base}_${i}`;
  taken.add(v);
  return v;
}

/** The wrapper's args (after the launcher's) and the env holding the header values, beside the entry's own env. */
export function remoteWrap(spec: RemoteSpec, prefix: string[], own: Record<string, unknown> = {}): { args: string[]; env: Record<string, unknown> } {
  const env: Record<string, unknown> = { ...own };
  const taken = new Set(Object.keys(own));
  const args = [...prefix, '--url', spec.url];
  for (const [name, value] of spec.headers) {
    const v = headerVar(name, taken);
    env[v] = value;
    args.push('--header', `${name}: \${${v}}`);
  }
  if (spec.transport) args.push('--transport', spec.transport);
  return { args, env };
}

/** The command entry that replaces a remote one, in the client's own shape; the entry's other settings stay. */
export function wrappedRemoteEntry(client: ClientId, entry: Record<string, unknown>, shape: CommandShape, launcher: Launcher, wrap: { args: string[]; env: Record<string, unknown> }): Record<string, unknown> {
  const keep = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([k]) => !REMOTE_KEYS.has(k)));
  const env = Object.keys(wrap.env).length ? wrap.env : undefined;
  if (client === 'opencode') return { ...keep(entry), type: 'local', command: [launcher.command, ...wrap.args], ...(env ? { environment: env } : {}) };
  const cmd = { command: launcher.command, args: wrap.args, ...(env ? { env } : {}) };
  if (shape.base.length) return { ...entry, transport: { ...keep(holder(entry, shape)), type: 'stdio', ...cmd } };
  // Claude Code and VS Code name the stdio type; the others infer it from `command`
  const typed = client === 'claude-code' || client === 'vscode';
  return { ...keep(entry), ...(typed ? { type: 'stdio' } : {}), ...cmd };
}

/**
 * The remote entry a wrapped one stands for, rebuilt from its `--url`, `--header` and env (when the original
 * text is not kept); each header's `${VAR}` is filled from the entry's env, as the wrapper would.
 */
export function rebuiltRemoteEntry(client: ClientId, entry: Record<string, unknown>, shape: CommandShape, parsed: WrapArgv): Record<string, unknown> {
  const inner = holder(entry, shape);
  const envValue = inner[shape.envKey];
  const env = isRecord(envValue) ? envValue : {};
  const headers: Record<string, string> = {};
  const used = new Set<string>();
  for (const spec of parsed.header) {
    const colon = spec.indexOf(':');
    if (colon <= 0) throw new ConfigEditError(`--header "${spec}" is not "Name: value"`);
    headers[spec.slice(0, colon).trim()] = spec.slice(colon + 1).trim().replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, v: string) => {
      used.add(v);
      return typeof env[v] === 'string' ? env[v] : m;
    });
  }
  // the entry's own variables stay; the ones that only carried a header go back into the header
  const ownEnv = Object.fromEntries(Object.entries(env).filter(([k]) => !used.has(k)));
  const keptEnv = Object.keys(ownEnv).length && !shape.base.length ? { [shape.envKey]: ownEnv } : {};
  const url = parsed.url!;
  const t = parsed.transport === 'sse' || parsed.transport === 'http' ? parsed.transport : undefined;
  const hs = Object.keys(headers).length ? { headers } : {};
  const rest = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([k]) => !COMMAND_KEYS.has(k)));
  switch (client) {
    case 'opencode':
      return { ...rest(entry), type: 'remote', url, ...hs, ...keptEnv };
    case 'windsurf':
      return { ...rest(entry), serverUrl: url, ...hs, ...keptEnv };
    case 'gemini-cli':
    case 'qwen-code':
      return { ...rest(entry), ...(t === 'sse' ? { url } : { httpUrl: url }), ...hs, ...keptEnv };
    case 'cline': {
      const remote = { type: t === 'sse' ? 'sse' : 'streamableHttp', url, ...hs };
      return shape.base.length ? { ...entry, transport: remote } : { ...rest(entry), ...remote, ...keptEnv };
    }
    case 'claude-code':
    case 'vscode':
      return { ...rest(entry), type: t ?? 'http', url, ...hs, ...keptEnv };
    default:
      return { ...rest(entry), ...(t ? { type: t } : {}), url, ...hs, ...keptEnv };
  }
}

/** The entry's value node in a JSON/JSONC text. */
function valueNode(text: string, path: DocPath): Node {
  const root = parseTree(text, [], { allowTrailingComma: true, allowEmptyContent: true });
  const node = root && findNodeAtLocation(root, path);
  if (!node) throw new ConfigEditError(`entry ${path.join('.')} not found`);
  return node;
}

/** The raw text of the entry at `path`. */
export function entryText(text: string, path: DocPath): string {
  const node = valueNode(text, path);
  return text.slice(node.offset, node.offset + node.length);
}

/** JSON on one line, spaced as people write it: `{ "a": [1, 2] }`. */
function oneLine(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(oneLine).join(', ')}]`;
  if (isRecord(value)) {
    const items = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${oneLine(v)}`);
    return items.length ? `{ ${items.join(', ')} }` : '{}';
  }
  return JSON.stringify(value);
}

/** `value` as JSON laid out like the file: its indent unit, each line under the entry's own indent. */
function layout(text: string, node: Node, value: unknown): string {
  const at = node.offset;
  const unit = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const lead = /^[ \t]*/.exec(text.slice(lineStart))![0];
  const eol = /\r\n/.test(text) ? '\r\n' : '\n';
  // an entry written on one line stays on one line
  if (!text.slice(at, at + node.length).includes('\n')) return oneLine(value);
  return JSON.stringify(value, null, unit).split('\n').map((l, i) => (i === 0 ? l : lead + l)).join(eol);
}

/**
 * The text with the entry at `path` replaced by `raw` (kept original text) or by `value` laid out like the file;
 * refused unless the result parses to exactly the expected data.
 */
export function replaceEntry(text: string, syntax: FormatSyntax, path: DocPath, replacement: { raw: string } | { value: unknown }): string {
  const node = valueNode(text, path);
  const doc = syntax.parse(text);
  const newText = 'raw' in replacement ? replacement.raw : layout(text, node, replacement.value);
  const out = text.slice(0, node.offset) + newText + text.slice(node.offset + node.length);
  const expected = structuredClone(doc);
  const parent = getAt(expected, path.slice(0, -1));
  const value = 'raw' in replacement ? syntax.parse(replacement.raw) : replacement.value;
  if (!isRecord(parent) && !Array.isArray(parent)) throw new ConfigEditError(`entry ${path.join('.')} has no parent`);
  (parent as Record<string | number, unknown>)[path[path.length - 1]!] = value;
  let got: unknown;
  try {
    got = syntax.parse(out);
  } catch (err) {
    throw new ConfigEditError(`refusing an unsafe edit: the result would not parse (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!sameData(got, expected)) throw new ConfigEditError('refusing an unsafe edit: the result did not parse back to the expected data');
  return out;
}
