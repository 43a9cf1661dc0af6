/** `airlock rules [list|add|remove]`. */
import { describeConditions, describeRule } from '../../policy/decide.js';
import { grantKind, grantLeft } from '../../policy/grants.js';
import { isGrant } from '../../policy/rules.js';
import { parse } from '../args.js';
import { argConditions, call, print, printJson, table } from '../control.js';
import { UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv.slice(1), {
    json: { type: 'boolean' },
    server: { type: 'string' },
    tool: { type: 'string' },
    client: { type: 'string' },
    arg: { type: 'string', multiple: true },
    undoable: { type: 'boolean' },
    irreversible: { type: 'boolean' },
  });
  const verb = positionals[0] ?? 'list';
  if (verb === 'list') {
    const rules = await call('rules.list', {});
    // rows of the rules table without a good seal: an allow rule among them is not in force (db/seals.ts)
    const unsealed = ((await call('status', {})).integrity?.unsealed ?? []).filter((u) => u.table === 'rules');
    const ignored = unsealed.filter((u) => !u.applied);
    if (values.json) printJson(ignored.length ? { rules, ignored } : rules);
    else if (rules.length === 0 && ignored.length === 0) print('No rules: every call that is not trusted read-only asks.');
    else {
      const unsealedIds = new Set(unsealed.map((u) => u.key));
      const now = Date.now();
      const rows = rules.map((r) => [r.id, r.managed ? `${r.action} (managed)` : r.action, r.server, r.tool, r.client ?? '*', describeConditions(r), isGrant(r) ? `${grantKind(r)}, ${grantLeft(r, now)}` : '', unsealedIds.has(r.id) ? `${r.note ?? ''} (appeared without your approval; applied: it only tightens)`.trim() : r.note ?? '']);
      for (const u of ignored) rows.push([u.key, 'IGNORED', '', '', '', u.what, '', 'appeared in the database without your approval; not applied (airlock rules remove ' + u.key + ')']);
      print(table(['ID', 'ACTION', 'SERVER', 'TOOL', 'CLIENT', 'WHEN', 'ENDS', 'NOTE'], rows));
    }
    return 0;
  }
  if (verb === 'add') {
    const action = positionals[1];
    if ((action !== 'allow' && action !== 'deny' && action !== 'ask') || positionals.length > 2) {
      throw new UsageError(`usage: airlock rules add allow|deny|ask --server GLOB --tool GLOB [--client GLOB] [--arg NAME=VALUE]... [--undoable | --irreversible]`);
    }
    if (!values.server || !values.tool) throw new UsageError('rules add needs --server GLOB and --tool GLOB (use "*" for any)');
    if (values.undoable && values.irreversible) throw new UsageError('--undoable and --irreversible exclude each other: a rule applies to calls that can be undone, or to those that cannot');
    const args = argConditions(values.arg);
    const undoable = values.undoable ? true : values.irreversible ? false : undefined;
    const rule = await call('rules.add', { action, server: values.server, tool: values.tool, client: values.client, args, undoable });
    if (values.json) printJson(rule);
    else print(`Added rule ${rule.id}: ${describeRule(rule)}`);
    return 0;
  }
  if (verb === 'remove' || verb === 'rm') {
    const id = positionals[1];
    if (!id || positionals.length > 2) throw new UsageError('usage: airlock rules remove ID');
    await call('rules.remove', { id });
    if (values.json) printJson({ removed: id });
    else print(`Removed rule ${id}.`);
    return 0;
  }
  throw new UsageError(`unknown rules command "${verb}": use list, add or remove`);
}
