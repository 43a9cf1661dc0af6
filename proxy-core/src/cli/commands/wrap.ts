/**
 * `airlock wrap`: what an MCP client starts in place of a server. A local server is spawned before the relay's
 * modules load, so its start-up overlaps ours: the client waits for the slower of the two, not their sum.
 */
import { isAbsolute } from 'node:path';
import { parseWrapArgv, WrapArgvError, type WrapArgv } from '../../clients/wrapped.js';
import { type EarlyEvents, spawnUpstream, stdioUpstream, type Upstream } from '../../wrap/upstream.js';
import { declarationProblems, type InverseDecl, parseUndoSpec, UndoSpecError } from '../../policy/undo-spec.js';
import { locateBroker } from '../../ipc/system.js';
import { CliError, UsageError } from '../errors.js';

const SEE_HELP = 'see `airlock wrap --help`';

/**
 * A GUI client shows a server's stderr only in a log file, if anywhere: every failure of wrap leaves as one line
 * there starting with "airlock:" (main.ts prints it), and a non-zero exit.
 */
function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).join(' ') || 'unknown error';
}

export async function run(argv: string[]): Promise<number> {
  try {
    return await wrap(argv.slice(1));
  } catch (err) {
    if (err instanceof CliError) throw new CliError(`wrap: ${oneLine(err)}`, err.exitCode);
    throw new CliError(`wrap failed: ${oneLine(err)}`, 1);
  }
}

async function wrap(rest: string[]): Promise<number> {
  let values: WrapArgv;
  try {
    values = parseWrapArgv(rest);
  } catch (err) {
    if (err instanceof WrapArgvError) throw new UsageError(`${err.message}; ${SEE_HELP}`);
    throw err;
  }
  if (!values.name) throw new UsageError(`--name is required; ${SEE_HELP}`);
  // --home wins over AIRLOCK_HOME: protect writes it for clients that start servers without the user's env
  if (values.home !== undefined && (values.home === '' || !isAbsolute(values.home))) {
    throw new UsageError(`--home must be an absolute path (got "${values.home}")`);
  }
  const undo = undoDeclarations(values.undo);
  // before the server starts: a service marker that cannot be believed stops the wrapper here, with nothing spawned
  const located = locateBroker(values.home, process.env, (msg) => process.stderr.write(msg + '\n'));
  const common = {
    server: values.name,
    client: values.client ?? 'unknown',
    trustFlag: values.trustReadOnlyHints,
    located,
    ...(undo.length ? { undo } : {}),
  };

  if (values.url !== undefined) {
    if (values.command.length > 0 || values.dashDash) throw new UsageError('give either --url or a server command, not both');
    const { upstream, label } = await remote(values.url, values.header, values.transport ?? 'auto');
    const { runWrapper } = await import('../../wrap/run-wrapper.js');
    return runWrapper({ ...common, command: [label] }, upstream);
  }
  if (values.header.length || values.transport !== undefined) throw new UsageError('--header and --transport go with --url');
  const [command, ...args] = values.command;
  if (!command) throw new UsageError(`no server to wrap: give its command (after --), or --url; ${SEE_HELP}`);
  const child = await spawnUpstream(command, args);
  // What the server reports while the relay's modules load (a slow machine) is reported once: kept here for
  // the upstream, which would otherwise wait for an end that already happened.
  const early: EarlyEvents = {};
  const onError = (err: NodeJS.ErrnoException) => (early.error = err);
  const onClose = (code: number | null, signal: NodeJS.Signals | null) => (early.close = { code, signal });
  child.on('error', onError);
  child.on('close', onClose);
  // once the server is on its way, before the relay's modules load (wrap/v8-tuning.ts)
  (await import('../../wrap/v8-tuning.js')).tuneV8ForWrapper();
  const { runWrapper } = await import('../../wrap/run-wrapper.js');
  child.off('error', onError);
  child.off('close', onClose);
  // E-Stop may terminate the server; on release the wrapper starts the same command again
  return runWrapper({ ...common, command: [command, ...args] }, stdioUpstream(child, early, () => spawnUpstream(command, args)));
}

/**
 * `--undo` declarations, refused at start when one cannot be meant (malformed, a tool that names itself, a tool
 * declared twice). Whether the server lists both tools is checked once it has listed them (the broker journals a
 * refusal then).
 */
function undoDeclarations(specs: readonly string[]): InverseDecl[] {
  let decls: InverseDecl[];
  try {
    decls = specs.map((spec) => parseUndoSpec(spec));
  } catch (err) {
    if (err instanceof UndoSpecError) throw new UsageError(`--undo: ${err.message}; ${SEE_HELP}`);
    throw err;
  }
  const problems = declarationProblems(decls);
  if (problems.length) throw new UsageError(`--undo: ${problems.join('; ')}`);
  return decls;
}

async function remote(urlText: string, headerSpecs: string[], transport: string): Promise<{ upstream: Upstream; label: string }> {
  let url: URL;
  try {
    url = new URL(urlText);
  } catch {
    throw new UsageError(`--url "${urlText}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--url must be http:// or https://');
  // a token in the URL ends up in logs, process lists and the broker's record: MCP's authorization rules forbid it
  if (url.searchParams.has('access_token') || url.username || url.password) {
    throw new UsageError('--url must not carry credentials (access_token or user:password); pass a token with --header "Authorization: Bearer ${TOKEN}", TOKEN set in the environment');
  }
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
