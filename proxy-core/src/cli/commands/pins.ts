/** `airlock pins [list] [SERVER]`, `airlock pins accept SERVER [TOOL]`: pinned tool definitions (rug pulls). */
import { printable } from '../../classify/hidden-text.js';
import type { PinInfo } from '../../protocol/api.js';
import { parse } from '../args.js';
import { ago, call, print, printJson, table } from '../control.js';
import { UsageError } from '../errors.js';

const USAGE =
  'usage: airlock pins [list] [SERVER] [--json]\n' +
  '       airlock pins accept SERVER [TOOL] [--fingerprint SHA256] [--json]';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv.slice(1), { json: { type: 'boolean' }, fingerprint: { type: 'string' } });
  const [verb = 'list', ...rest] = positionals;
  if (verb === 'list' || verb === 'ls') {
    if (rest.length > 1 || values.fingerprint !== undefined) throw new UsageError(USAGE);
    const pins = await call('pins.list', rest[0] === undefined ? {} : { server: rest[0] });
    if (values.json) printJson(pins);
    else print(listing(pins, rest[0]));
    return 0;
  }
  if (verb === 'accept') {
    const [server, tool] = rest;
    if (!server || rest.length > 2) throw new UsageError(USAGE);
    if (values.fingerprint !== undefined && tool === undefined) throw new UsageError('--fingerprint names one definition: give the TOOL too');
    const out = await call('pins.accept', { server, ...(tool === undefined ? {} : { tool }), ...(values.fingerprint === undefined ? {} : { fingerprint: values.fingerprint }) });
    if (values.json) printJson(out);
    else if (out.accepted.length === 0) print(tool === undefined ? `No changed definitions for ${show(server)}.` : `${show(tool)} of ${show(server)} is listed as pinned: nothing to accept.`);
    else print(`Accepted the new definition of ${out.accepted.map((p) => show(p.tool)).join(', ')} (${show(server)}): calls are decided as before again.`);
    return 0;
  }
  throw new UsageError(USAGE);
}

function listing(pins: PinInfo[], server: string | undefined): string {
  if (pins.length === 0) return server === undefined ? 'No pinned tools yet: a tool is pinned the first time a wrapper lists it.' : `No pinned tools for ${show(server)}.`;
  const rows = pins.map((p) => [show(p.server), show(p.tool), p.status, p.fingerprint.slice(0, 12), p.status === 'changed' ? p.current.slice(0, 12) : '', ago(p.pinnedAt)]);
  const out = [table(['SERVER', 'TOOL', 'STATUS', 'PINNED', 'NOW', 'SINCE'], rows)];
  for (const p of pins) {
    if (p.status !== 'changed' || !p.change) continue;
    out.push('', `${show(p.server)}/${show(p.tool)} changed (${p.change.fields.join(', ')}); calls to it ask until you accept it:`);
    out.push(...p.change.diff.trimEnd().split('\n').map((line) => `  ${printable(line, 400)}`));
    out.push(`  accept: airlock pins accept ${shellWord(p.server)} ${shellWord(p.tool)} --fingerprint ${p.current}`);
  }
  return out.join('\n');
}

/** Server-supplied names, safe on a terminal. */
function show(name: string): string {
  return printable(name, 200);
}

function shellWord(s: string): string {
  return /^[\w.:@/+=-]+$/.test(s) ? s : `'${printable(s, 200).replace(/'/g, "'\\''")}'`;
}
