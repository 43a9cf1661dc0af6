/**
 * The one place that knows what a protected entry looks like:
 *   command = <launcher>, args = [...launcherArgs, 'wrap', '--name', N, '--client', C, '--', origCommand, ...origArgs]
 * Everything after the first `--` is the original command line, so an entry can be restored from the file alone.
 */
import type { ClientId, StdioCommand } from './types.js';
import type { Launcher } from './launcher.js';

export interface Unwrapped {
  /** Index of the `--` separator in args. */
  separator: number;
  name: string;
  client: string | undefined;
  /** The launcher words: command and the args before `wrap`. */
  launcher: string[];
  original: StdioCommand;
}

/** The args that go in front of the original command when protecting. */
export function wrapPrefix(launcher: Launcher, name: string, client: ClientId): string[] {
  // A name that starts with "-" would be read as an option: glue it to its flag.
  const nameArgs = name.startsWith('-') ? [`--name=${name}`] : ['--name', name];
  return [...launcher.argsPrefix, 'wrap', ...nameArgs, '--client', client, '--'];
}

/** The full wrapped command for a server. */
export function wrapCommand(launcher: Launcher, name: string, client: ClientId, original: StdioCommand): StdioCommand {
  return { command: launcher.command, args: [...wrapPrefix(launcher, name, client), original.command, ...original.args] };
}

const MAX_LAUNCHER_ARGS = 4;

/**
 * Recognise an entry written by protect, with any launcher (a moved checkout or a packaged app must still be
 * recognised, or protect would wrap twice). Returns null for anything else.
 */
export function unwrap(entry: StdioCommand): Unwrapped | null {
  const { command, args } = entry;
  const w = args.indexOf('wrap');
  if (w < 0 || w > MAX_LAUNCHER_ARGS) return null;
  const launcherWords = [command, ...args.slice(0, w)];
  if (!launcherWords.some((s) => /airlock/i.test(s))) return null;
  let name: string | undefined;
  let client: string | undefined;
  let i = w + 1;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    if (a === '--name') name = args[++i];
    else if (a.startsWith('--name=')) name = a.slice('--name='.length);
    else if (a === '--client') client = args[++i];
    else if (a.startsWith('--client=')) client = a.slice('--client='.length);
  }
  if (i >= args.length - 1 || args[i] !== '--' || name === undefined) return null;
  return { separator: i, name, client, launcher: launcherWords, original: { command: args[i + 1]!, args: args.slice(i + 2) } };
}
