/**
 * The clients and their servers, and the outcome of a protect or unprotect, as plain JSON: one shape for
 * `airlock clients --json` / `airlock protect --json` and for the broker's `clients.*` requests
 * (protocol/api.ts ClientConfigsSchema, ChangeReportSchema), so the CLI and the UI never disagree on it.
 */
import type { ChangeReportResult, ClientConfigs, ConfiguredServer } from '../protocol/api.js';
import type { ClientReport } from './discover.js';
import { entryWarning } from './entry-status.js';
import { CLIENTS } from './known-clients.js';
import { type Launcher, LauncherError } from './launcher.js';
import { redactArgs, redactCommand } from './redact.js';
import { type Action, type ChangeReport, type ChangeRequest, protectServers, unprotectServers } from './rewrite.js';
import type { ClientId, ServerEntry } from './types.js';

/** One server entry; secrets redacted, env as key names only. */
export function serverJson(s: ServerEntry): ConfiguredServer & { cwd?: string; envKeys: string[] } {
  return {
    name: s.name,
    transport: s.transport,
    protected: s.protected,
    protectable: !s.unprotectable,
    ...(s.unprotectable ? { reason: s.unprotectable } : {}),
    ...(s.original ? { command: redactCommand([s.original.command])[0], args: redactArgs(s.original.args) } : {}),
    ...(s.url ? { url: s.url } : {}),
    ...(s.cwd ? { cwd: s.cwd } : {}),
    envKeys: s.envKeys,
    ...(s.wrappedAs ? { wrappedAs: s.wrappedAs.name } : {}),
    ...(s.staleLauncher ? { staleLauncher: s.staleLauncher } : {}),
    ...(entryWarning(s) ? { warning: entryWarning(s) } : {}),
    ...(s.otherHome !== undefined ? { otherHome: s.otherHome } : {}),
    ...(s.loosening?.length ? { loosening: s.loosening } : {}),
  };
}

/** One client: the config files that exist, each with its servers or why it could not be read. */
export function reportJson(r: ClientReport): ClientConfigs {
  return {
    client: r.client,
    label: r.label,
    found: r.found,
    locations: r.locations
      .filter((l) => l.exists)
      .map((l) => ({
        path: l.location.path,
        scope: l.location.scope,
        format: l.location.format,
        ...(l.error ? { error: l.error } : {}),
        servers: l.servers.map(serverJson),
      })),
  };
}

/** What to tell the person once something changed: the client reads its config only when it starts servers. */
export function restartAdvice(client: ClientId, report: ChangeReport): string | undefined {
  const changed = report.outcomes.some((o) => o.result === 'protected' || o.result === 'unprotected');
  return changed ? `Restart ${CLIENTS[client].label} (or reload its MCP servers) to apply.` : undefined;
}

/**
 * Protect or unprotect, and report it whole: the outcomes, the backups, the warnings (also passed to
 * `req.warn` as they come) and the restart advice. Throws what rewrite.ts throws (ClientConfigError), and a
 * LauncherError for protect without a launcher: whoever composes the program must say what configs start.
 */
export async function changeClient(action: Action, req: ChangeRequest & { launcher?: Launcher | undefined }): Promise<ChangeReportResult> {
  const warnings: string[] = [];
  const warn = (m: string) => {
    warnings.push(m);
    req.warn?.(m);
  };
  const { launcher, ...rest } = req;
  let report: ChangeReport;
  if (action === 'unprotect') report = await unprotectServers({ ...rest, warn });
  else if (launcher) report = await protectServers({ ...rest, warn, launcher });
  else throw new LauncherError('protect needs a launcher: the command client configs should start Airlock with');
  const restart = restartAdvice(req.client, report);
  return { ...report, ...(restart ? { restart } : {}), warnings };
}
