/**
 * `airlock wrap`: what an MCP client starts in place of a server. The server is spawned before the relay's
 * modules load, so its start-up overlaps ours: the client waits for the slower of the two, not their sum.
 */
import { spawnUpstream } from '../../wrap/upstream.js';
import { parse } from '../args.js';
import { UsageError } from '../errors.js';

const USAGE = 'usage: airlock wrap --name NAME [--client CLIENT] [--trust-read-only-hints] -- COMMAND [ARG...]';

export async function run(argv: string[]): Promise<number> {
  const rest = argv.slice(1);
  const dashDash = rest.indexOf('--');
  if (dashDash === -1) throw new UsageError(`${USAGE} (the server command goes after --)`);
  const { values } = parse(
    rest.slice(0, dashDash),
    { name: { type: 'string' }, client: { type: 'string' }, 'trust-read-only-hints': { type: 'boolean' } },
    false,
  );
  const [command, ...args] = rest.slice(dashDash + 1);
  if (!values.name) throw new UsageError(`${USAGE} (--name is required)`);
  if (!command) throw new UsageError(`${USAGE} (no server command after --)`);
  const child = await spawnUpstream(command, args);
  // a spawn failure is reported on the next tick: hold it until the relay is loaded and listening
  let spawnError: NodeJS.ErrnoException | undefined;
  const early = (err: NodeJS.ErrnoException) => (spawnError = err);
  child.on('error', early);
  const { runWrapper } = await import('../../wrap/run-wrapper.js');
  child.off('error', early);
  const opts = { server: values.name, client: values.client ?? 'unknown', trustFlag: values['trust-read-only-hints'] === true, command, args };
  return runWrapper(opts, child, spawnError);
}
