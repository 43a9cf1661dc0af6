/** `airlock estop on|off|status`. */
import { parse } from '../args.js';
import { call, print, printJson } from '../control.js';
import { UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv.slice(1), { json: { type: 'boolean' } });
  const verb = positionals[0] ?? 'status';
  if (positionals.length > 1 || !['on', 'off', 'status'].includes(verb)) throw new UsageError('usage: airlock estop on|off|status');
  const estop = verb === 'status' ? (await call('status', {})).estop : (await call('estop', { on: verb === 'on' })).estop;
  if (values.json) printJson({ estop });
  else print(estop ? 'E-Stop is ON: every tool call is refused until `airlock estop off`.' : 'E-Stop is off.');
  return 0;
}
