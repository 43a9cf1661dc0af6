/** `airlock trust SERVER on|off`: believe a server's read-only hints (a loosening only the user can make). */
import { parse } from '../args.js';
import { call, print, printJson } from '../control.js';
import { UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv.slice(1), { json: { type: 'boolean' } });
  if (positionals.length === 0) {
    const servers = await call('trust.list', {});
    if (values.json) printJson(servers);
    else print(servers.length ? `Read-only hints trusted for: ${servers.join(', ')}` : "No server's read-only hints are trusted.");
    return 0;
  }
  const [server, state] = positionals;
  if (!server || (state !== 'on' && state !== 'off') || positionals.length !== 2) throw new UsageError('usage: airlock trust SERVER on|off');
  const out = await call('trust.set', { server, on: state === 'on' });
  if (values.json) printJson(out);
  else print(out.trust ? `Read-only hints of ${server} are now trusted: its read-only tools run without asking.` : `Read-only hints of ${server} are no longer trusted.`);
  return 0;
}
