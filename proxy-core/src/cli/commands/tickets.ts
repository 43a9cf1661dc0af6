/** `airlock pending`, `airlock approve`, `airlock deny`. */
import type { Remember, Ticket } from '../../protocol/api.js';
import { parse } from '../args.js';
import { ago, call, oneLine, print, printJson, table } from '../control.js';
import { UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === 'pending') {
    const { values } = parse(rest, { json: { type: 'boolean' } }, false);
    const tickets = await call('pending', {});
    if (values.json) printJson(tickets);
    else if (tickets.length === 0) print('No pending tickets.');
    else {
      print(
        table(
          ['ID', 'CLIENT', 'SERVER', 'TOOL', 'CLASS', 'ARGUMENTS', 'WAITING'],
          tickets.map((t) => [t.id, t.client, t.server, t.tool, t.class, argumentsCell(t), ago(t.createdAt)]),
        ),
      );
      print('\nApprove with `airlock approve ID [--remember once|session|always]`, or `airlock deny ID`.');
    }
    return 0;
  }
  if (name === 'approve') {
    const { values, positionals } = parse(rest, { remember: { type: 'string' }, json: { type: 'boolean' } });
    const id = single(positionals, 'approve');
    const remember = values.remember ?? 'once';
    if (remember !== 'once' && remember !== 'session' && remember !== 'always') throw new UsageError('--remember takes once, session or always');
    const out = await call('approve', { id, remember });
    if (values.json) printJson(out);
    else print(`Approved ${out.ticket.server}/${out.ticket.tool} (${id}, ${describe(out.remember)}).`);
    return 0;
  }
  const { values, positionals } = parse(rest, { reason: { type: 'string' }, json: { type: 'boolean' } });
  const id = single(positionals, 'deny');
  const out = await call('deny', { id, reason: values.reason });
  if (values.json) printJson(out);
  else print(`Denied ${out.ticket.server}/${out.ticket.tool} (${id}).`);
  return 0;
}

/** One line of a ticket's arguments; cut arguments say so, with the size of the whole. */
function argumentsCell(t: Ticket): string {
  if (t.argsTruncated) return `${oneLine(String(t.arguments), 40)} (cut: ${t.argsBytes} chars in all)`;
  return oneLine(JSON.stringify(t.arguments));
}

function single(positionals: string[], verb: string): string {
  if (positionals.length !== 1 || !positionals[0]) throw new UsageError(`usage: airlock ${verb} ID`);
  return positionals[0];
}

function describe(remember: Remember): string {
  if (remember === 'session') return 'this tool, for this session';
  if (remember === 'always') return 'always: an allow rule was added';
  return 'this call only';
}
