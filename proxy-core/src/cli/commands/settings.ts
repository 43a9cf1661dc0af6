/** `airlock settings [KEY [VALUE]]`: the broker's few switches, each checked against what it accepts. */
import { parse } from '../args.js';
import { call, print, printJson, table } from '../control.js';
import { UsageError } from '../errors.js';

const KNOWN: Record<string, { values: string[]; fallback: string; help: string }> = {
  'auto-protect': {
    values: ['on', 'off'],
    fallback: 'off',
    help: 'wrap MCP servers that appear later in a client config, as soon as they appear',
  },
};

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv.slice(1), { json: { type: 'boolean' } });
  const [key, value] = positionals;
  if (positionals.length > 2) throw new UsageError('usage: airlock settings [KEY [VALUE]]');
  if (key !== undefined && !KNOWN[key]) throw new UsageError(`unknown setting "${key}"; known: ${Object.keys(KNOWN).join(', ')}`);
  if (key && value !== undefined) {
    const spec = KNOWN[key]!;
    if (!spec.values.includes(value)) throw new UsageError(`${key} takes ${spec.values.join(' or ')}`);
    await call('settings.set', { key, value });
    if (values.json) printJson({ [key]: value });
    else print(`${key} is now ${value}.`);
    return 0;
  }
  const keys = key ? [key] : Object.keys(KNOWN);
  const current: Record<string, string> = {};
  for (const k of keys) current[k] = (await call<{ value: string | null }>('settings.get', { key: k })).value ?? KNOWN[k]!.fallback;
  if (values.json) printJson(current);
  else print(table(['SETTING', 'VALUE', 'MEANING'], keys.map((k) => [k, current[k]!, KNOWN[k]!.help])));
  return 0;
}
