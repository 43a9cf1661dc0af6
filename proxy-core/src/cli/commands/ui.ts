/**
 * `airlock ui [--open] [--json]`: a fresh single-use sign-in link of the running broker's browser UI, asked
 * over the broker's socket (the CLI's secret is what entitles it). --open hands it to the OS's opener
 * (xdg-open, open, or the Windows URL handler) as one argument, with no shell in between.
 */
import { spawn } from 'node:child_process';
import { parse } from '../args.js';
import { call, print, printJson } from '../control.js';
import { CliError, UsageError } from '../errors.js';

/** The opener of this OS, as a program and its arguments (the URL last). */
export function opener(url: string, platform: NodeJS.Platform = process.platform): [string, string[]] {
  if (platform === 'darwin') return ['open', [url]];
  // `start` is a cmd builtin (a shell): the URL handler takes the URL as a plain argument instead
  if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', url]];
  return ['xdg-open', [url]];
}

function open(url: string): Promise<void> {
  const [cmd, args] = opener(url);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true, shell: false });
    child.once('error', (err) => reject(new CliError(`cannot open a browser with ${cmd}: ${err.message}; open the link printed above`)));
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv.slice(1), { open: { type: 'boolean' }, json: { type: 'boolean' } }, false);
  if (values.open && values.json) throw new UsageError('--open and --json exclude each other');
  const { url } = await call('ui.link', {});
  // the UI host hands out links on localhost only (where passkeys work): anything else is not its link
  if (!/^http:\/\/localhost:\d{1,5}\/\?token=[A-Za-z0-9_-]{43}$/.test(url)) throw new CliError('the broker answered with a link that is not its own');
  if (values.json) {
    printJson({ url });
    return 0;
  }
  print(url);
  print('This link signs in one browser, once, within 2 minutes.');
  if (values.open) await open(url);
  return 0;
}
