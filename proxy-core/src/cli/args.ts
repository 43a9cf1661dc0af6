/** node:util parseArgs with Airlock's error style: a bad flag is a one-line usage error. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  allowPositionals = true,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: boolean; strict: true }>> {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0] ?? 'bad arguments');
  }
}

/**
 * `parse` for a command whose positionals are ids that may begin with `-` (a call id is random base64url, so
 * one in 32 does): an argument that starts with `-` but is none of the command's options is taken as a
 * positional rather than refused as an unknown option. `--` still ends the options as usual.
 */
export function parseWithDashIds<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T): ReturnType<typeof parse<T>> {
  const flags: string[] = [];
  const positionals: string[] = [];
  const known = (arg: string): NonNullable<ParseArgsConfig['options']>[string] | undefined => {
    if (arg.startsWith('--')) {
      const name = arg.slice(2).split('=')[0]!;
      return Object.hasOwn(options, name) ? options[name] : undefined;
    }
    return Object.values(options).find((o) => o.short !== undefined && arg === `-${o.short}`);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    const option = arg.startsWith('-') && arg !== '-' ? known(arg) : undefined;
    if (!option) {
      positionals.push(arg);
      continue;
    }
    // a string option's value follows it, whatever it looks like (joined with `=`, which parseArgs takes as a
    // value even when it begins with `-`)
    if (option.type === 'string' && !arg.includes('=') && i + 1 < args.length) {
      const next = args[++i]!;
      flags.push(...(arg.startsWith('--') ? [`${arg}=${next}`] : [arg, next]));
    } else flags.push(arg);
  }
  return parse(positionals.length ? [...flags, '--', ...positionals] : flags, options);
}
