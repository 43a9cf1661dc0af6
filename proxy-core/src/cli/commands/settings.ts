/** `airlock settings [KEY [VALUE]]`: the broker's switches, each checked against what it accepts. */
import { isSettingKey, SETTINGS, type SettingKey, settingProblem, settingValues } from '../../protocol/settings.js';
import { parse } from '../args.js';
import { call, print, printJson, table } from '../control.js';
import { UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv.slice(1), { json: { type: 'boolean' } });
  const [key, value] = positionals;
  if (positionals.length > 2) throw new UsageError('usage: airlock settings [KEY [VALUE]]');
  if (key !== undefined && !isSettingKey(key)) throw new UsageError(`unknown setting "${key}"; known: ${Object.keys(SETTINGS).join(', ')}`);
  if (key && value !== undefined) {
    const problem = settingProblem(key, value);
    if (problem) throw new UsageError(problem);
    await call('settings.set', { key, value });
    if (values.json) printJson({ [key]: value });
    else print(`${key} is now ${value}.`);
    return 0;
  }
  const keys = (key ? [key] : Object.keys(SETTINGS)) as SettingKey[];
  const current: Record<string, string> = {};
  for (const k of keys) current[k] = (await call('settings.get', { key: k })).value ?? SETTINGS[k].fallback;
  // what the team policy file holds is shown as such (changing it is refused)
  const managed = new Set((await call('settings.list', {})).filter((s) => s.managed).map((s) => s.key));
  if (values.json) printJson(current);
  else print(table(['SETTING', 'VALUE', 'TAKES', 'MEANING'], keys.map((k) => [k, managed.has(k) ? `${current[k]!} (managed)` : current[k]!, settingValues(k), SETTINGS[k].help])));
  return 0;
}
