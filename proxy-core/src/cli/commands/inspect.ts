/**
 * `airlock inspect`: a check-up of one MCP server before protecting it. Exit 0 whenever the inspection ran,
 * findings or not; a CliError (one line on stderr, non-zero) when it could not run.
 */
import { parseArgs } from 'node:util';
import { parseArgOverride, type ArgOverride } from '../../inspect/arg-overrides.js';
import { ConfiguredServerError, configuredServerCommand } from '../../inspect/configured-server.js';
import { inspectServer } from '../../inspect/inspect.js';
import { ExecutionPolicy } from '../../inspect/execution-policy.js';
import { renderText } from '../../inspect/report.js';
import type { ServerCommand } from '../../inspect/server-process.js';
import { print, printJson } from '../control.js';
import { CliError, UsageError } from '../errors.js';

const USAGE = 'airlock inspect [OPTIONS] -- COMMAND [ARG...]  |  airlock inspect [OPTIONS] --client C --server NAME';

function list(values: readonly string[] | undefined): string[] {
  return (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

/** The original stdio command of a server in a client's config (inspect/configured-server.ts). */
async function serverFromClientConfig(clientId: string, serverName: string): Promise<ServerCommand> {
  try {
    return await configuredServerCommand(clientId, serverName, process.env);
  } catch (err) {
    if (err instanceof ConfiguredServerError && err.unknownClient) throw new UsageError(err.message);
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
}

export async function run(argv: string[]): Promise<number> {
  const rest = argv.slice(1);
  const dashDash = rest.indexOf('--');
  const own = dashDash === -1 ? rest : rest.slice(0, dashDash);
  const serverArgv = dashDash === -1 ? [] : rest.slice(dashDash + 1);

  let values;
  try {
    ({ values } = parseArgs({
      args: own,
      allowPositionals: false,
      strict: true,
      options: {
        json: { type: 'boolean' },
        'allow-mutations': { type: 'boolean' },
        'allow-destructive': { type: 'boolean' },
        only: { type: 'string', multiple: true },
        deny: { type: 'string', multiple: true },
        arg: { type: 'string', multiple: true },
        client: { type: 'string' },
        server: { type: 'string' },
        timeout: { type: 'string' },
      },
    }));
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)}; usage: ${USAGE}`);
  }

  const argOverrides: ArgOverride[] = [];
  for (const raw of values.arg ?? []) {
    try {
      argOverrides.push(parseArgOverride(raw));
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
  }
  let timeoutMs = 10_000;
  if (values.timeout !== undefined) {
    const seconds = Number(values.timeout);
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) throw new UsageError(`--timeout ${values.timeout}: expected seconds (0 < s <= 3600)`);
    timeoutMs = Math.round(seconds * 1000);
  }

  let command: ServerCommand;
  const fromClient = values.client !== undefined || values.server !== undefined;
  if (fromClient) {
    if (serverArgv.length > 0) throw new UsageError('give either --client/--server or -- COMMAND, not both');
    if (values.client === undefined || values.server === undefined) throw new UsageError('--client and --server go together');
    command = await serverFromClientConfig(values.client, values.server);
  } else {
    const [program, ...args] = serverArgv;
    if (program === undefined || program === '') throw new UsageError(`no server command; usage: ${USAGE}`);
    command = { command: program, args };
  }

  const policy = new ExecutionPolicy({
    allowMutations: values['allow-mutations'] === true,
    allowDestructive: values['allow-destructive'] === true,
    only: list(values.only),
    deny: list(values.deny),
  });

  // The server runs in its own process group, so Ctrl-C does not reach it: stop the inspection, which stops the
  // server's tree. Kept installed until the end, so a second Ctrl-C cannot kill us with the server still up.
  const interrupt = new AbortController();
  const onSignal = (): void => interrupt.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const report = await inspectServer(command, { policy, argOverrides, timeoutMs, clientVersion: '0.1.0', signal: interrupt.signal });
    if (values.json === true) printJson(report);
    else print(renderText(report));
    return 0;
  } catch (err) {
    if (interrupt.signal.aborted) throw new CliError('inspect interrupted; the server was stopped', 130);
    throw new CliError(err instanceof Error ? err.message : String(err));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
