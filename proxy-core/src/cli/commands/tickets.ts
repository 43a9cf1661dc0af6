/** `airlock pending`, `airlock approve`, `airlock deny`. */
import { describeConditions } from '../../policy/decide.js';
import type { ArgCondition, Remember, Ticket } from '../../protocol/api.js';
import { parse } from '../args.js';
import { ago, argConditions, call, oneLine, print, printJson, table } from '../control.js';
import { UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === 'pending') {
    const { values, positionals } = parse(rest, { json: { type: 'boolean' }, full: { type: 'boolean' } });
    if (values.full || positionals.length > 0) return showWhole(single(positionals, 'pending'), values.json === true);
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
      for (const t of tickets.filter((x) => x.scopes?.length || x.undoable)) {
        print(`\n${t.id} may be allowed always, but only for calls with:`);
        for (const s of t.scopes ?? []) print(`  ${s.label}: airlock approve ${t.id} --always ${s.args.map((c) => `--arg ${shellQuote(argSpec(c))}`).join(' ')}`);
        if (t.undoable) print(`  calls Airlock can undo: airlock approve ${t.id} --always --undoable`);
      }
      for (const t of tickets.filter((x) => x.undoOf)) print(`\n${t.id}: an undo you asked for: ${t.tool} undoes call ${t.undoOf}; approve it to run the undo.`);
      for (const t of tickets.filter((x) => x.pinChange)) {
        print(`\n${t.id}: the definition of ${t.tool} changed since it was pinned (${t.pinChange!.fields.join(', ')}); every call asks until you accept it.`);
        print(`  see the change: airlock pins list ${shellQuote(t.server)}   accept it: airlock pins accept ${shellQuote(t.server)} ${shellQuote(t.tool)} --fingerprint ${t.pinChange!.current}`);
      }
      print('\nApprove with `airlock approve ID [--remember once|session|always]` (`--always --arg NAME=VALUE` for a scope), or `airlock deny ID`.');
    }
    return 0;
  }
  if (name === 'approve') {
    const { values, positionals } = parse(rest, {
      remember: { type: 'string' },
      always: { type: 'boolean' },
      arg: { type: 'string', multiple: true },
      undoable: { type: 'boolean' },
      'args-seen': { type: 'string' },
      for: { type: 'string' },
      calls: { type: 'string' },
      json: { type: 'boolean' },
    });
    const id = single(positionals, 'approve');
    if (values.always && values.remember !== undefined && values.remember !== 'always') throw new UsageError('--always is --remember always');
    // a grant (--for 15m, --calls 10) is an allow rule that ends by itself
    const grant = grantOf(values.for, values.calls);
    if (grant && values.remember !== undefined && values.remember !== 'always') throw new UsageError('--for and --calls make a grant: an allow rule that ends; they take no --remember');
    const remember = values.always || grant ? 'always' : (values.remember ?? 'once');
    if (remember !== 'once' && remember !== 'session' && remember !== 'always') throw new UsageError('--remember takes once, session or always');
    const args = argConditions(values.arg);
    if (args && remember !== 'always') throw new UsageError('--arg scopes an "always" approval: add --always');
    if (values.undoable && remember !== 'always') throw new UsageError('--undoable scopes an "always" approval: add --always');
    const seen = values['args-seen'];
    const out = await call('approve', { id, remember, ...(args ? { args } : {}), ...(values.undoable ? { undoable: true as const } : {}), ...(seen ? { argsSeen: seen } : {}), ...(grant ? { grant } : {}) });
    const when = describeConditions({ ...(args ? { args } : {}), ...(values.undoable ? { undoable: true } : {}) });
    const granted = grant ? [grant.seconds ? `for ${values.for}` : '', grant.calls ? `for the next ${grant.calls} calls` : ''].filter(Boolean).join(' and ') : '';
    if (values.json) printJson(out);
    else print(`Approved ${out.ticket.server}/${out.ticket.tool} (${id}, ${granted || describe(out.remember)}${when ? ` when ${when}` : ''}).`);
    return 0;
  }
  const { values, positionals } = parse(rest, { reason: { type: 'string' }, json: { type: 'boolean' } });
  const id = single(positionals, 'deny');
  const out = await call('deny', { id, reason: values.reason });
  if (values.json) printJson(out);
  else print(`Denied ${out.ticket.server}/${out.ticket.tool} (${id}).`);
  return 0;
}

/**
 * `airlock pending ID --full`: a ticket's whole arguments, read page by page from the wrapper that holds the
 * call, so a person can read what a cut ticket will send; then how to allow exactly these.
 */
async function showWhole(id: string, json: boolean): Promise<number> {
  const ticket = (await call('pending', {})).find((t) => t.id === id);
  if (!ticket) throw new UsageError(`no pending ticket ${id} (see \`airlock pending\`)`);
  let text = ticket.argsTruncated ? '' : JSON.stringify(ticket.arguments ?? {});
  let sha = ticket.argsSha256;
  if (ticket.argsTruncated) {
    for (let offset = 0; ; ) {
      const page = await call('ticket.arguments', { id, offset });
      text += page.text;
      sha = page.argsSha256;
      offset += page.text.length;
      if (offset >= page.total || page.text.length === 0) break;
    }
  }
  if (json) {
    printJson({ id, arguments: text, argsSha256: sha });
    return 0;
  }
  print(`Arguments of ${id} (${ticket.server}/${ticket.tool}), ${text.length.toLocaleString('en-US')} characters, as the server will receive them:`);
  // a long run of spaces would push what follows it off the screen: it is counted instead
  for (const line of text.split('\n')) print(line.replace(/ {8,}/g, (run) => `[${run.length} spaces]`));
  if (ticket.argsTruncated) print(`\nTo allow exactly these arguments: airlock approve ${id} --args-seen ${sha}`);
  return 0;
}

/** One line of a ticket's arguments; cut arguments say so, with the size of the whole. */
function argumentsCell(t: Ticket): string {
  if (t.argsTruncated) return `${oneLine(String(t.arguments), 40)} (cut: ${t.argsBytes} chars in all; \`airlock pending ${t.id} --full\`)`;
  const text = JSON.stringify(t.arguments) ?? '';
  const cell = oneLine(text);
  // the table shows the start: where it cuts, it says how to read the rest
  return cell.endsWith('…') || cell.length < text.length ? `${cell} (${text.length} chars: \`airlock pending ${t.id} --full\`)` : cell;
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

/** A condition as `--arg NAME=VALUE` spells it (what parseArgCondition reads back). */
function argSpec(c: ArgCondition): string {
  if (c.kind === 'path' || c.kind === 'glob') return `${c.arg}=${c.glob}`;
  if (c.kind === 'range') return `${c.arg}=${c.min ?? ''}..${c.max ?? ''}`;
  return `${c.arg}=${typeof c.value === 'string' ? JSON.stringify(c.value) : String(c.value)}`;
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `--for 15m` (s, m, h; a bare number is seconds) and `--calls 10`, as an approval's grant. */
function grantOf(length: string | undefined, calls: string | undefined): { seconds?: number; calls?: number } | undefined {
  const grant: { seconds?: number; calls?: number } = {};
  if (length !== undefined) {
    const m = /^(\d+)\s*(s|m|h)?$/.exec(length.trim());
    if (!m) throw new UsageError('--for takes a length of time: 90s, 15m, 2h');
    grant.seconds = Number(m[1]) * (m[2] === 'h' ? 3600 : m[2] === 'm' ? 60 : 1);
  }
  if (calls !== undefined) {
    if (!/^\d+$/.test(calls) || Number(calls) < 1 || Number(calls) > 1000) throw new UsageError('--calls takes a number of calls, 1 to 1000');
    grant.calls = Number(calls);
  }
  return grant.seconds !== undefined || grant.calls !== undefined ? grant : undefined;
}
