/**
 * `airlock wrap` from its arguments to its exit code, without the registry of the other commands: what both
 * entries run for `wrap` (main.ts, and wrap-entry.ts, which the build bundles so that a wrapper loads one file
 * before it spawns its server, and one more after).
 */
import { parseWrapArgv } from '../clients/wrapped.js';
import { WRAP_USAGE } from './commands/wrap-usage.js';
import { run } from './commands/wrap.js';

/** `rest`: the arguments after `wrap`. */
export async function wrapMain(rest: string[]): Promise<number> {
  const own = wrapOwnArgs(rest);
  if (own.includes('--help') || own.includes('-h')) {
    process.stdout.write(`Usage: ${WRAP_USAGE}\n`);
    return 0;
  }
  return run(['wrap', ...rest]);
}

/**
 * `wrap`'s own options end where the server command starts, with or without `--`: in
 * `airlock wrap --name db uvx mysql-mcp -h host`, the `-h` is the server's.
 */
function wrapOwnArgs(rest: string[]): string[] {
  try {
    const parsed = parseWrapArgv(rest, true);
    return rest.slice(0, parsed.dashDash ? parsed.commandAt - 1 : parsed.commandAt);
  } catch {
    // a malformed option: `wrap` itself reports it
    const dashDash = rest.indexOf('--');
    return dashDash === -1 ? rest : rest.slice(0, dashDash);
  }
}
