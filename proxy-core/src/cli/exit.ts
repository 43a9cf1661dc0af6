/**
 * How the `airlock` program ends, for both of its entries (main.ts, and wrap-entry.ts for `airlock wrap`): a
 * command's exit code once stdout and stderr are flushed, an error as one line on stderr. The program's only
 * process.exit: library code returns exit codes and leaves the process to whoever composed it.
 */
import { CliError } from './errors.js';

/**
 * stdout failed. A reader that went away (`airlock history | head`) is no error: the output is no longer wanted,
 * and the command ends quietly, as a pipe's writer does. The broker keeps running: its output is a courtesy, and
 * stopping it would refuse every call. Anything else is reported. (`wrap` handles its own stdout: the client's.)
 */
export function readerGone(err: NodeJS.ErrnoException, keepRunning: boolean): void {
  if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') {
    if (!keepRunning) process.exit(0);
    return;
  }
  process.stderr.write(`airlock: writing the output failed: ${err.message}\n`);
  if (!keepRunning) process.exit(1);
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
 * if a handle is still open (`wrap`'s stdin, when the server left first).
 */
async function exit(code: number): Promise<never> {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

/** End the process with what `run` settles with: its exit code, or its error as one line and a non-zero code. */
export function exitWith(run: Promise<number>): void {
  run.then(
    (code) => exit(code),
    async (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      // a broker's or a server's words may be in it: spelled out where a terminal would act on them (the reader
      // loaded only here, so that `wrap` does not load it before it has spawned its server)
      const { spellOutHidden } = await import('../classify/hidden-text.js');
      process.stderr.write(`airlock: ${spellOutHidden(message)}\n`);
      return exit(err instanceof CliError ? err.exitCode : 1);
    },
  );
}
