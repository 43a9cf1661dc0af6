/**
 * `airlock` entry point: dispatch to a lazily loaded command. Errors end up as one line on stderr and a
 * non-zero exit code; stdout is left to the command (for `wrap` it belongs to the MCP client).
 */
import { spellOutHidden } from '../classify/hidden-text.js';
import { commands } from './commands/registry.js';
import { CliError } from './errors.js';

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
  if (name !== 'wrap') {
    process.stdout.on('error', (err: NodeJS.ErrnoException) => readerGone(err, name === 'daemon'));
    // stderr gone too (`airlock daemon 2>&1 | head -1`): there is nowhere left to say anything, and no reason to stop
    process.stderr.on('error', () => {});
  }
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
  const own = name === 'wrap' ? await wrapOwnArgs(rest) : beforeDashDash(rest);
  if (own.includes('--help') || own.includes('-h')) {
    process.stdout.write(`Usage: ${command.usage}\n`);
    return 0;
  }
  const mod = await command.load();
  return mod.run([name, ...rest]);
}

/**
 * stdout failed. A reader that went away (`airlock history | head`) is no error: the output is no longer wanted,
 * and the command ends quietly, as a pipe's writer does. The broker keeps running: its output is a courtesy, and
 * stopping it would refuse every call. Anything else is reported. (`wrap` handles its own stdout: the client's.)
 */
function readerGone(err: NodeJS.ErrnoException, keepRunning: boolean): void {
  if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') {
    if (!keepRunning) process.exit(0);
    return;
  }
  process.stderr.write(`airlock: writing the output failed: ${err.message}\n`);
  if (!keepRunning) process.exit(1);
}

/** `cmd -- x --help`: the --help belongs to x. */
function beforeDashDash(rest: string[]): string[] {
  const dashDash = rest.indexOf('--');
  return dashDash === -1 ? rest : rest.slice(0, dashDash);
}

/**
 * `wrap`'s own options end where the server command starts, with or without `--`: in
 * `airlock wrap --name db uvx mysql-mcp -h host`, the `-h` is the server's.
 */
async function wrapOwnArgs(rest: string[]): Promise<string[]> {
  const { parseWrapArgv } = await import('../clients/wrapped.js');
  try {
    const parsed = parseWrapArgv(rest, true);
    return rest.slice(0, parsed.dashDash ? parsed.commandAt - 1 : parsed.commandAt);
  } catch {
    // a malformed option: `wrap` itself reports it
    return beforeDashDash(rest);
  }
}

/** Settles once what was written to `stream` has been handed to the OS, or the stream is gone. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) resolve();
    else stream.write('', () => resolve());
  });
}

/**
 * A command is done when its run() settles: the process ends then, once stdout and stderr are flushed, even
 * if a handle is still open (`wrap`'s stdin, when the server left first). With readerGone, the program's only
 * process.exit: library code returns exit codes and leaves the process to whoever composed it.
 */
async function exit(code: number): Promise<never> {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

main(process.argv.slice(2)).then(
  (code) => exit(code),
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    // a broker's or a server's words may be in it: spelled out where a terminal would act on them
    process.stderr.write(`airlock: ${spellOutHidden(message)}\n`);
    return exit(err instanceof CliError ? err.exitCode : 1);
  },
);
