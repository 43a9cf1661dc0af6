/**
 * `airlock clients`, `airlock protect` and `airlock unprotect`: list the MCP clients on this machine and wrap
 * (or unwrap) their servers' entries so the client starts them through `airlock wrap`.
 */
import { parseArgs } from 'node:util';
import {
  changeClient,
  CLIENT_IDS,
  ClientConfigError,
  CLIENTS,
  discoverClients,
  isClientId,
  LauncherError,
  reportJson,
  type Action,
  type ClientId,
  type ClientReport,
  type Scope,
} from '../../clients/index.js';
import { entryState } from '../../clients/entry-status.js';
import { protectInLocalScope, SHARED_FILE_WARNING, sharedFileOutcomes } from '../../clients/claude-local.js';
import { print, printError, printJson } from '../control.js';
import { CliError, UsageError } from '../errors.js';
import { cliLauncher, ownLaunchers } from '../launcher.js';


function printReports(reports: ClientReport[]): void {
  const found = reports.filter((r) => r.found);
  for (const r of found) {
    print(`${r.label} (${r.client})`);
    for (const l of r.locations.filter((x) => x.exists)) {
      if (l.error) {
        print(`  ${l.location.path} [${l.location.scope}]: cannot read: ${l.error}`);
        continue;
      }
      print(`  ${l.location.path} [${l.location.scope}]${l.servers.length ? '' : ': no servers'}`);
      const width = Math.max(0, ...l.servers.map((s) => s.name.length));
      for (const s of l.servers) print(`    ${s.name.padEnd(width)}  ${s.transport.padEnd(5)}  ${entryState(s)}`);
    }
  }
  const missing = reports.filter((r) => !r.found).map((r) => r.client);
  if (found.length === 0) print('No MCP client configs found.');
  if (missing.length) print(`${found.length ? '\n' : ''}Not found: ${missing.join(', ')}`);
}

async function listClients(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { json: { type: 'boolean' }, project: { type: 'string' } },
    allowPositionals: false,
  });
  const reports = await discoverClients({ projectDir: values.project, launchers: ownLaunchers() });
  if (values.json) printJson(reports.map(reportJson));
  else printReports(reports);
  return 0;
}

const SCOPES: Scope[] = ['global', 'project', 'local'];

async function change(action: Action, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      all: { type: 'boolean' },
      project: { type: 'string' },
      scope: { type: 'string' },
      json: { type: 'boolean' },
      'user-scope': { type: 'boolean' },
    },
    allowPositionals: true,
  });
  const [client, ...servers] = positionals;
  if (client === undefined) throw new UsageError(`${action} needs a client: one of ${CLIENT_IDS.join(', ')}`);
  if (!isClientId(client)) throw new UsageError(`unknown client "${client}"; known: ${CLIENT_IDS.join(', ')}`);
  if (values.all && servers.length) throw new UsageError('give server names or --all, not both');
  if (!values.all && servers.length === 0) throw new UsageError(`${action} ${client} needs server names or --all`);
  const scope = values.scope;
  if (scope !== undefined && !SCOPES.includes(scope as Scope)) throw new UsageError(`--scope must be one of ${SCOPES.join(', ')}`);
  const id: ClientId = client;
  if (values['user-scope'] && (action !== 'protect' || id !== 'claude-code' || scope !== undefined)) {
    throw new UsageError('--user-scope goes with `protect claude-code` (it moves .mcp.json servers into your local scope), without --scope');
  }
  try {
    if (values['user-scope']) return await moveToLocal(servers, values.all === true, values.project, values.json === true);
    const report = await changeClient(action, {
      client: id,
      servers: values.all ? 'all' : servers,
      scope: scope as Scope | undefined,
      projectDir: values.project,
      warn: (m) => printError(`airlock: warning: ${m}`),
      // what counts as Airlock's own entry (to leave alone, or to put back) is this CLI's launchers
      launchers: ownLaunchers(),
      ...(action === 'protect' ? { launcher: cliLauncher() } : {}),
    });
    if (values.json) {
      printJson(report);
      return 0;
    }
    if (report.outcomes.length === 0) print(`${CLIENTS[id].label} has no servers to ${action}.`);
    for (const o of report.outcomes) {
      print(`${o.result.padEnd(11)} ${o.server}  (${o.scope}: ${o.path})${o.reason ? `: ${o.reason}` : ''}`);
    }
    for (const b of report.backups) print(`original saved to ${b}`);
    if (action === 'protect') for (const o of sharedFileOutcomes(report.outcomes)) printError(`airlock: warning: ${o.server} ${SHARED_FILE_WARNING}`);
    if (report.restart) print(report.restart);
    return 0;
  } catch (e) {
    if (e instanceof ClientConfigError || e instanceof LauncherError) throw new CliError(e.message, 1);
    throw e;
  }
}

/** `protect claude-code --user-scope`: the .mcp.json servers protected in the user's own local scope. */
async function moveToLocal(servers: string[], all: boolean, project: string | undefined, json: boolean): Promise<number> {
  const outcomes = await protectInLocalScope({
    servers: all ? 'all' : servers,
    projectDir: project,
    launchers: ownLaunchers(),
    launcher: cliLauncher(),
    warn: (m) => printError(`airlock: warning: ${m}`),
  });
  if (json) {
    printJson({ outcomes });
    return 0;
  }
  for (const o of outcomes) print(`${o.result.padEnd(11)} ${o.server}  (${o.scope}: ${o.path})${o.reason ? `: ${o.reason}` : ''}`);
  if (outcomes.some((o) => o.result === 'protected')) {
    print('.mcp.json is left as it was; Claude Code now starts these from your local scope, and skips the .mcp.json ones for you only.');
    print('Restart Claude Code (or reload its MCP servers) to apply.');
  }
  return 0;
}

/** Entry point for the three commands; argv[0] is the command name. */
export async function run(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  try {
    if (name === 'clients') return await listClients(args);
    if (name === 'protect' || name === 'unprotect') return await change(name, args);
  } catch (e) {
    // parseArgs reports unknown options with a TypeError carrying a code.
    if ((e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError((e as Error).message);
    throw e;
  }
  throw new UsageError(`unknown command "${String(name)}"`);
}
