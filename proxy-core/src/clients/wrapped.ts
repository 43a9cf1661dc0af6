/**
 * The one place that knows what a protected entry looks like:
 *   command = <launcher>,
 *   args = [...launcherArgs, 'wrap', '--name', N, '--client', C, ('--home', DIR,) '--', origCommand, ...origArgs]
 * Everything after the first `--` is the original command line, so an entry can be restored from the file alone.
 * `--home` names a data dir that is not the default one: clients that start servers with a scrubbed environment
 * would lose AIRLOCK_HOME, and the wrapper would look for the broker in the wrong place.
 */
import type { ClientId, StdioCommand } from './types.js';
import type { Launcher } from './launcher.js';

export interface Unwrapped {
  /** Index in args of the last word before the server command: the `--`, or the last of wrap's own options. */
  separator: number;
  name: string;
  client: string | undefined;
  /** The data dir given with --home, if any. */
  home: string | undefined;
  /** The launcher words: command and the args before `wrap`. */
  launcher: string[];
  original: StdioCommand;
  /** Flags that loosen what Airlock asks (see looseningFlags). */
  loosening: string[];
}

/** `--opt value`, or `--opt=value` when the value would be read as an option. */
function option(flag: string, value: string): string[] {
  return value.startsWith('-') ? [`${flag}=${value}`] : [flag, value];
}

/**
 * The args that go in front of the original command when protecting; `home` only for a non-default data dir.
 * No `--` unless the server command itself starts with `-`: launchers that read a client config and add their own
 * options after the entry's args (the MCP Inspector's `--config`) take a `--` as the end of theirs, and the wrapper
 * takes its first non-option word as the server command anyway.
 */
export function wrapPrefix(launcher: Launcher, name: string, client: ClientId, home: string | undefined, serverCommand: string): string[] {
  const end = serverCommand.startsWith('-') ? ['--'] : [];
  return [...launcher.argsPrefix, 'wrap', ...option('--name', name), '--client', client, ...(home === undefined ? [] : option('--home', home)), ...end];
}

/** The full wrapped command for a server. */
export function wrapCommand(launcher: Launcher, name: string, client: ClientId, original: StdioCommand, home?: string): StdioCommand {
  return { command: launcher.command, args: [...wrapPrefix(launcher, name, client, home, original.command), original.command, ...original.args] };
}

/** Options of `airlock wrap` that take a value (the next argument, or glued with `=`). */
const VALUE_OPTIONS = new Set(['name', 'client', 'home', 'url', 'header', 'transport', 'undo']);
/** Options of `airlock wrap` that take none. */
const FLAG_OPTIONS = new Set(['trust-read-only-hints']);

/** `airlock wrap`'s own arguments, and the server command line that follows them. */
export interface WrapArgv {
  name?: string;
  client?: string;
  home?: string;
  url?: string;
  header: string[];
  transport?: string;
  /** `--undo TOOL=INVERSE[:result][:ARG=PATH,...]`, each as given (wrap/undo-spec.ts reads them). */
  undo: string[];
  trustReadOnlyHints: boolean;
  /** The server's command and args: everything after `--`, or from the first argument that is not an option. */
  command: string[];
  /** Index in argv where the command starts (argv.length when there is none). */
  commandAt: number;
  /** True when a `--` came before the command. */
  dashDash: boolean;
}

export class WrapArgvError extends Error {
  override name = 'WrapArgvError';
}

/**
 * Parse what follows `wrap`. Launchers that drop `--` (the MCP Inspector CLI) start
 * `airlock wrap --name ev node server.js`: the first argument that is not an option of wrap (nor the value of
 * one) starts the server command, and everything after it is the server's, options included. `lenient`
 * skips options it does not know instead of refusing them (for reading entries that have a `--`).
 */
export function parseWrapArgv(argv: readonly string[], lenient = false): WrapArgv {
  const out: WrapArgv = { header: [], undo: [], trustReadOnlyHints: false, command: [], commandAt: argv.length, dashDash: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.command = argv.slice(i + 1);
      out.commandAt = i + 1;
      out.dashDash = true;
      return out;
    }
    if (!a.startsWith('-') || a === '-') {
      out.command = argv.slice(i);
      out.commandAt = i;
      return out;
    }
    const m = /^--([A-Za-z][\w-]*)(?:=([\s\S]*))?$/.exec(a);
    const key = m?.[1];
    if (key !== undefined && VALUE_OPTIONS.has(key)) {
      let value = m![2];
      if (value === undefined) {
        value = argv[i + 1];
        if (value === undefined || value === '--') throw new WrapArgvError(`option --${key} needs a value`);
        if (value.startsWith('-')) throw new WrapArgvError(`option --${key} needs a value; for one that starts with "-" write --${key}=${value}`);
        i++;
      }
      if (key === 'header') out.header.push(value);
      else if (key === 'undo') out.undo.push(value);
      else if (key === 'name') out.name = value;
      else if (key === 'client') out.client = value;
      else if (key === 'home') out.home = value;
      else if (key === 'url') out.url = value;
      else out.transport = value;
    } else if (key !== undefined && FLAG_OPTIONS.has(key)) {
      if (m![2] !== undefined) throw new WrapArgvError(`option --${key} takes no value`);
      out.trustReadOnlyHints = true;
    } else if (!lenient) {
      throw new WrapArgvError(`unknown option "${a}" (options of airlock wrap go before the server command)`);
    }
  }
  return out;
}

/**
 * The flags of a parsed wrap that would loosen what Airlock asks: trusting read-only hints, and declared
 * inverses (a call that can be undone may run under an "undoable" rule, and undo calls the inverse). The
 * broker applies them only when the person recorded the same choice (`airlock trust`, `airlock inverses`).
 */
export function looseningFlags(parsed: WrapArgv): string[] {
  return [...(parsed.trustReadOnlyHints ? ['--trust-read-only-hints'] : []), ...parsed.undo.map((u) => `--undo ${u}`)];
}

const MAX_LAUNCHER_ARGS = 4;

/** The launcher words and the args after `wrap`, when the entry starts `airlock wrap` at all. */
function wrapCall(entry: StdioCommand): { w: number; launcher: string[] } | null {
  const { command, args } = entry;
  const w = args.indexOf('wrap');
  if (w < 0 || w > MAX_LAUNCHER_ARGS) return null;
  const launcher = [command, ...args.slice(0, w)];
  if (!launcher.some((s) => /airlock/i.test(s))) return null;
  return { w, launcher };
}

/** The entry's `airlock wrap` call and its parsed arguments, when it has one that parses. */
function parsedWrap(entry: StdioCommand): { call: { w: number; launcher: string[] }; parsed: WrapArgv } | null {
  const call = wrapCall(entry);
  if (!call) return null;
  try {
    return { call, parsed: parseWrapArgv(entry.args.slice(call.w + 1), true) };
  } catch {
    return null;
  }
}

/**
 * Recognise an entry written by protect, with any launcher (a moved checkout or a packaged app must still be
 * recognised, or protect would wrap twice). Returns null for anything else.
 */
export function unwrap(entry: StdioCommand): Unwrapped | null {
  const found = parsedWrap(entry);
  if (!found) return null;
  const { call, parsed } = found;
  const [command, ...args] = parsed.command;
  // entries written before protect dropped the `--` keep it; both are protect's
  if (command === undefined || parsed.name === undefined || parsed.url !== undefined) return null;
  return {
    separator: call.w + parsed.commandAt,
    name: parsed.name,
    client: parsed.client,
    home: parsed.home,
    launcher: call.launcher,
    original: { command, args },
    loosening: looseningFlags(parsed),
  };
}

/**
 * An entry that starts `airlock wrap` but not with a server command protect can put back: no `--name` (by
 * hand), or `--url` (a remote server, which protect writes too: see remote.ts). It is already behind Airlock;
 * protect must not wrap it again.
 */
export function wrappedByHand(
  entry: StdioCommand,
): { name: string | undefined; client: string | undefined; home: string | undefined; launcher: string[]; loosening: string[]; original?: StdioCommand; url?: string } | null {
  const found = unwrap(entry) ? null : parsedWrap(entry);
  if (!found) return null;
  const { parsed, call } = found;
  const [command, ...args] = parsed.command;
  if (command === undefined && parsed.url === undefined) return null;
  return {
    name: parsed.name,
    client: parsed.client,
    home: parsed.home,
    launcher: call.launcher,
    loosening: looseningFlags(parsed),
    ...(command !== undefined ? { original: { command, args } } : {}),
    ...(parsed.url !== undefined ? { url: parsed.url } : {}),
  };
}
