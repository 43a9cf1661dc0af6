/**
 * `airlock` entry point: dispatch to a lazily loaded command. Errors end up as one line on stderr and a
 * non-zero exit code (exit.ts); stdout is left to the command (for `wrap` it belongs to the MCP client).
 */
import { commands } from './commands/registry.js';
import { CliError } from './errors.js';
import { exitWith, readerGone } from './exit.js';

function help(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    'Airlock: every MCP tool call that changes something waits for a human yes.',
    '',
    'Usage: airlock COMMAND [OPTIONS]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `airlock COMMAND --help` for a command\'s options.',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  // the same as wrap-entry.ts, bin/airlock.js's entry for `wrap` when the build's bundle is fresh
  if (name === 'wrap') return (await import('./wrap-main.js')).wrapMain(rest);
  process.stdout.on('error', (err: NodeJS.ErrnoException) => readerGone(err, name === 'daemon'));
  // stderr gone too (`airlock daemon 2>&1 | head -1`): there is nowhere left to say anything, and no reason to stop
  process.stderr.on('error', () => {});
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(help() + '\n');
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write('airlock 0.1.0\n');
    return 0;
  }
  const command = commands[name];
  if (!command) throw new CliError(`unknown command "${name}"; run \`airlock --help\``, 2);
  const own = beforeDashDash(rest);
  if (own.includes('--help') || own.includes('-h')) {
    process.stdout.write(`Usage: ${command.usage}\n`);
    return 0;
  }
  const mod = await command.load();
  return mod.run([name, ...rest]);
}

/** `cmd -- x --help`: the --help belongs to x. */
function beforeDashDash(rest: string[]): string[] {
  const dashDash = rest.indexOf('--');
  return dashDash === -1 ? rest : rest.slice(0, dashDash);
}

exitWith(main(process.argv.slice(2)));
