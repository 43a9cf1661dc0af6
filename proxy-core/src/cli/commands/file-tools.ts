/** `airlock file-tools [list|set|remove]`: which tools write files, so a held call can be previewed as a diff. */
import { parse } from '../args.js';
import { call, print, printJson, table } from '../control.js';
import { UsageError } from '../errors.js';

const USAGE =
  'usage: airlock file-tools [list] [--json]\n' +
  '       airlock file-tools set SERVER TOOL write|edit --path-arg NAME --content-arg NAME\n' +
  '       airlock file-tools remove SERVER TOOL';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv.slice(1), {
    json: { type: 'boolean' },
    'path-arg': { type: 'string' },
    'content-arg': { type: 'string' },
  });
  const [verb = 'list', ...rest] = positionals;
  if (verb === 'list' && rest.length === 0) {
    const tools = await call('file-tools.list', {});
    if (values.json) printJson(tools);
    else if (tools.length === 0) print('No file tools: declare one with `airlock file-tools set`.');
    else print(table(['SERVER', 'TOOL', 'KIND', 'PATH', 'CONTENT', 'FROM'], tools.map((t) => [t.server, t.tool, t.kind, t.pathArg, t.contentArg, t.builtIn ? 'built in' : 'you'])));
    return 0;
  }
  if (verb === 'set') {
    const [server, tool, kind] = rest;
    if (!server || !tool || (kind !== 'write' && kind !== 'edit') || rest.length > 3) throw new UsageError(USAGE);
    const pathArg = values['path-arg'];
    const contentArg = values['content-arg'];
    if (!pathArg || !contentArg) throw new UsageError('file-tools set needs --path-arg NAME and --content-arg NAME');
    const set = await call('file-tools.set', { server, tool, kind, pathArg, contentArg });
    if (values.json) printJson(set);
    else print(`${set.tool} of ${set.server} writes files: ${set.kind === 'write' ? 'the whole content' : 'edits'} in "${set.contentArg}", the file in "${set.pathArg}".`);
    return 0;
  }
  if (verb === 'remove' || verb === 'rm') {
    const [server, tool] = rest;
    if (!server || !tool || rest.length > 2) throw new UsageError(USAGE);
    await call('file-tools.remove', { server, tool });
    if (values.json) printJson({ removed: { server, tool } });
    else print(`${tool} of ${server} is no longer a declared file tool.`);
    return 0;
  }
  throw new UsageError(USAGE);
}
