/**
 * `airlock clients`, `airlock protect` and `airlock unprotect`: list the MCP clients on this machine and wrap
 * (or unwrap) their servers' entries so the client starts them through `airlock wrap`.
 */
import { dirname, resolve } from 'node:path';
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
  type ChangeOutcome,
  type ClientReport,
  type Scope,
} from '../../clients/index.js';
import { entryState } from '../../clients/entry-status.js';
import { protectInLocalScope, sharedFileOutcomes, sharedFileWarning } from '../../clients/claude-local.js';
import { knownProjects } from '../../clients/projects.js';
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
  if (values.json) {
    printJson(reports.map(reportJson));
    return 0;
  }
  printReports(reports);
  await printProjects(values.project);
  return 0;
}

/** The other project folders the clients know, each with its project-scope configs (what `--all` also covers). */
async function printProjects(current: string | undefined): Promise<void> {
  const known = await knownProjects({ projectDir: current });
  if (known.projects.length === 0 && known.unreadable.length === 0) return;
  print('\nOther projects the clients know (`protect CLIENT --all` covers them too):');
  for (const p of known.projects) {
    if (!p.exists) {
      print(`  ${p.dir} (${p.sources.join(', ')}): folder gone`);
      continue;
    }
    const reports = await discoverClients({ projectDir: p.dir, launchers: ownLaunchers() });
    const files = reports.flatMap((r) => r.locations.filter((l) => l.exists && l.location.scope !== 'global').map((l) => ({ r, l })));
    print(`  ${p.dir} (${p.sources.join(', ')})${files.length ? '' : ': no project configs'}`);
    for (const { r, l } of files) {
      const what = l.error ? `cannot read: ${l.error}` : l.servers.map((s) => `${s.name} ${entryState(s)}`).join('; ') || 'no servers';
      print(`    ${r.label}: ${l.location.path} [${l.location.scope}]: ${what}`);
    }
  }
  for (const u of known.unreadable) print(`  cannot read ${u}`);
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
    // `--all` alone (and not --json, whose shape is one run's report): every project the clients know as well
    const everywhere = values.all === true && values.project === undefined && scope === undefined && !values.json;
    let report: Awaited<ReturnType<typeof changeClient>>;
    let others: ProjectRun[] | undefined;
    try {
      report = await changeClient(action, {
        client: id,
        servers: values.all ? 'all' : servers,
        scope: scope as Scope | undefined,
        projectDir: values.project,
        warn: (m) => printError(`airlock: warning: ${m}`),
        // what counts as Airlock's own entry (to leave alone, or to put back) is this CLI's launchers
        launchers: ownLaunchers(),
        ...(action === 'protect' ? { launcher: cliLauncher() } : {}),
      });
    } catch (e) {
      // none here, but another project may have one
      if (!(everywhere && e instanceof ClientConfigError && NOT_FOUND.test(e.message))) throw e;
      others = await otherProjects(action, id);
      if (!others.some((o) => o.outcomes.length || o.left)) throw e;
      report = { outcomes: [], backups: [], warnings: [] };
    }
    if (values.json) {
      printJson(report);
      return 0;
    }
    others ??= everywhere ? await otherProjects(action, id) : [];
    const outcomes = [...report.outcomes, ...others.flatMap((o) => o.outcomes)];
    if (outcomes.length === 0) print(`${CLIENTS[id].label} has no servers to ${action}.`);
    for (const o of outcomes) print(`${o.result.padEnd(11)} ${o.server}  (${o.scope}: ${o.path})${o.reason ? `: ${o.reason}` : ''}`);
    for (const b of [...report.backups, ...others.flatMap((o) => o.backups)]) print(`original saved to ${b}`);
    for (const o of others.filter((x) => x.left)) print(`left        ${o.dir}: ${o.left}`);
    for (const o of action === 'protect' ? sharedFileOutcomes(outcomes) : []) {
      const dir = dirname(o.path);
      const elsewhere = resolve(values.project ?? '.') === dir ? '' : ` --project ${JSON.stringify(dir)}`;
      printError(`airlock: warning: ${o.server} ${sharedFileWarning(`airlock protect claude-code --user-scope ${o.server}${elsewhere}`)}`);
    }
    if (report.restart || others.some((o) => o.outcomes.some((x) => x.result === 'protected' || x.result === 'unprotected'))) {
      print(report.restart ?? `Restart ${CLIENTS[id].label} (or reload its MCP servers) to apply.`);
    }
    return 0;
  } catch (e) {
    if (e instanceof ClientConfigError || e instanceof LauncherError) throw new CliError(e.message, 1);
    throw e;
  }
}

/** What changeServers says when a client has no config file at all. */
const NOT_FOUND = /^no .* config found/;

interface ProjectRun {
  dir: string;
  outcomes: ChangeOutcome[];
  backups: string[];
  /** Why the project was left (folder gone, a file that cannot be read or written). */
  left?: string;
}

/** `--all` in the other projects the clients know: their project-scope files (and Claude Code's local scope). */
async function otherProjects(action: Action, client: ClientId): Promise<ProjectRun[]> {
  const known = await knownProjects({});
  const out: ProjectRun[] = known.unreadable.map((u) => ({ dir: u.split(': ')[0]!, outcomes: [], backups: [], left: `cannot read: ${u.slice(u.indexOf(': ') + 2)}` }));
  for (const p of known.projects) {
    if (!p.exists) {
      out.push({ dir: p.dir, outcomes: [], backups: [], left: `folder gone (recorded by ${p.sources.join(', ')})` });
      continue;
    }
    const run: ProjectRun = { dir: p.dir, outcomes: [], backups: [] };
    for (const scope of client === 'claude-code' ? (['project', 'local'] as const) : (['project'] as const)) {
      try {
        const r = await changeClient(action, {
          client,
          servers: 'all',
          scope,
          projectDir: p.dir,
          warn: (m) => printError(`airlock: warning: ${m}`),
          launchers: ownLaunchers(),
          ...(action === 'protect' ? { launcher: cliLauncher() } : {}),
        });
        run.outcomes.push(...r.outcomes);
        run.backups.push(...r.backups);
      } catch (e) {
        // no config of this client at all: nothing there to do
        if (e instanceof ClientConfigError && NOT_FOUND.test(e.message)) continue;
        if (e instanceof ClientConfigError) run.left = e.message;
        else throw e;
      }
    }
    out.push(run);
  }
  return out;
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
