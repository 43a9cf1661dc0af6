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
