/**
 * `airlock wrap`: what an MCP client starts in place of a server. A local server is spawned before the relay's
 * modules load, so its start-up overlaps ours: the client waits for the slower of the two, not their sum.
 */
import { spawnUpstream, stdioUpstream, type Upstream } from '../../wrap/upstream.js';
import { parse } from '../args.js';
import { UsageError } from '../errors.js';

const SEE_HELP = 'see `airlock wrap --help`';

export async function run(argv: string[]): Promise<number> {
  const rest = argv.slice(1);
  const dashDash = rest.indexOf('--');
  const own = dashDash === -1 ? rest : rest.slice(0, dashDash);
  const { values } = parse(
    own,
    {
      name: { type: 'string' },
      client: { type: 'string' },
      'trust-read-only-hints': { type: 'boolean' },
      url: { type: 'string' },
      header: { type: 'string', multiple: true },
      transport: { type: 'string' },
    },
    false,
  );
  if (!values.name) throw new UsageError(`--name is required; ${SEE_HELP}`);
  const common = { server: values.name, client: values.client ?? 'unknown', trustFlag: values['trust-read-only-hints'] === true };

  if (values.url !== undefined) {
    if (dashDash !== -1) throw new UsageError('give either --url or a command after --, not both');
    const { upstream, label } = await remote(values.url, values.header ?? [], values.transport ?? 'auto');
    const { runWrapper } = await import('../../wrap/run-wrapper.js');
    return runWrapper({ ...common, command: [label] }, upstream);
  }
  if (values.header || values.transport) throw new UsageError('--header and --transport go with --url');
  const [command, ...args] = dashDash === -1 ? [] : rest.slice(dashDash + 1);
  if (!command) throw new UsageError(`no server to wrap: give its command after --, or --url; ${SEE_HELP}`);
  const child = await spawnUpstream(command, args);
  // a spawn failure is reported on the next tick: hold it until the relay is loaded and listening
  let spawnError: NodeJS.ErrnoException | undefined;
  const early = (err: NodeJS.ErrnoException) => (spawnError = err);
  child.on('error', early);
  const { runWrapper } = await import('../../wrap/run-wrapper.js');
  child.off('error', early);
  return runWrapper({ ...common, command: [command, ...args] }, stdioUpstream(child, spawnError));
}

async function remote(urlText: string, headerSpecs: string[], transport: string): Promise<{ upstream: Upstream; label: string }> {
  let url: URL;
  try {
    url = new URL(urlText);
  } catch {
    throw new UsageError(`--url "${urlText}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--url must be http:// or https://');
  if (transport !== 'auto' && transport !== 'http' && transport !== 'sse') throw new UsageError('--transport takes auto, http or sse');
  const { httpUpstream, parseHeader } = await import('../../wrap/upstream-http.js');
  const headers: Record<string, string> = {};
  for (const spec of headerSpecs) {
    try {
      const [name, value] = parseHeader(spec, process.env);
      headers[name] = value;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const log = (msg: string) => process.stderr.write(msg.endsWith('\n') ? msg : msg + '\n');
  // the URL without credentials or query is what the broker shows; header values are never shown
  const label = `${url.origin}${url.pathname}`;
  return { upstream: httpUpstream({ url, headers, transport, log }), label };
}
