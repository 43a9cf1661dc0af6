/** `airlock rules [list|add|remove]`. */
import { parse } from '../args.js';
import { call, print, printJson, table } from '../control.js';
import { UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv.slice(1), {
    json: { type: 'boolean' },
    server: { type: 'string' },
    tool: { type: 'string' },
    client: { type: 'string' },
  });
  const verb = positionals[0] ?? 'list';
  if (verb === 'list') {
    const rules = await call('rules.list', {});
    if (values.json) printJson(rules);
    else if (rules.length === 0) print('No rules: every call that is not trusted read-only asks.');
    else print(table(['ID', 'ACTION', 'SERVER', 'TOOL', 'CLIENT', 'NOTE'], rules.map((r) => [r.id, r.action, r.server, r.tool, r.client ?? '*', r.note ?? ''])));
    return 0;
  }
  if (verb === 'add') {
    const action = positionals[1];
    if ((action !== 'allow' && action !== 'deny' && action !== 'ask') || positionals.length > 2) {
      throw new UsageError('usage: airlock rules add allow|deny|ask --server GLOB --tool GLOB [--client GLOB]');
    }
    if (!values.server || !values.tool) throw new UsageError('rules add needs --server GLOB and --tool GLOB (use "*" for any)');
    const rule = await call('rules.add', { action, server: values.server, tool: values.tool, client: values.client });
    if (values.json) printJson(rule);
    else print(`Added rule ${rule.id}: ${rule.action} server=${rule.server} tool=${rule.tool}${rule.client ? ` client=${rule.client}` : ''}`);
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
