/**
 * The broker's side of the MCP clients' configs, for a front end that cannot touch the files itself: list the
 * clients and their servers, protect and unprotect, by the same code as `airlock clients/protect/unprotect`
 * (clients/report-json.ts), with the environment and the launcher the composer gave the broker. A refusal is an
 * IpcError with the library's one-line message; a change is journaled.
 */
import { IpcError } from '../ipc/channel.js';
import {
  changeClient,
  CLIENT_IDS,
  ClientConfigError,
  discoverClients,
  isClientId,
  type Launcher,
  LauncherError,
  reportJson,
} from '../clients/index.js';
import type { Env } from '../ipc/paths.js';
import type { CheckedParamsOf, ClientConfigs, ChangeReportResult } from '../protocol/api.js';
import type { ConfigEventDetail } from '../protocol/events.js';
import { bad } from './validate.js';

export interface ClientConfigsOptions {
  /** Whose HOME, APPDATA, XDG_CONFIG_HOME... locate the config files. */
  env: Env;
  /** Where backups go and which data dir wrapped entries name. */
  dataDir: string;
  /** What protected entries start; without one the broker can unprotect but not protect. */
  launcher: Launcher | undefined;
  record(type: 'server-protected' | 'server-unprotected', server: string, detail: ConfigEventDetail): void;
}

export const NO_LAUNCHER_MESSAGE =
  'this Airlock was started without a launcher (the command a client config should start Airlock with), so it cannot protect servers; run `airlock protect` in a terminal';

export class ClientConfigsApi {
  constructor(private readonly o: ClientConfigsOptions) {}

  async list(): Promise<ClientConfigs[]> {
    return (await discoverClients({ env: this.o.env, dataDir: this.o.dataDir, ...(this.o.launcher ? { launchers: [this.o.launcher] } : {}) })).map(reportJson);
  }

  async change(action: 'protect' | 'unprotect', p: CheckedParamsOf<'clients.protect'>): Promise<ChangeReportResult> {
    if (!isClientId(p.client)) throw bad(`unknown client "${p.client}"; known: ${CLIENT_IDS.join(', ')}`);
    if (action === 'protect' && !this.o.launcher) throw new IpcError('bad-state', NO_LAUNCHER_MESSAGE);
    let report: ChangeReportResult;
    try {
      report = await changeClient(action, {
        client: p.client,
        servers: p.servers,
        ...(p.scope ? { scope: p.scope } : {}),
        env: this.o.env,
        dataDir: this.o.dataDir,
        launcher: this.o.launcher,
        // what counts as Airlock's own entry, to leave alone or to put back: the launcher this broker was given
        ...(this.o.launcher ? { launchers: [this.o.launcher] } : {}),
      });
    } catch (err) {
      if (err instanceof ClientConfigError) throw bad(err.message);
      if (err instanceof LauncherError) throw new IpcError('bad-state', err.message);
      throw err;
    }
    for (const o of report.outcomes) {
      if (o.result === 'protected' || o.result === 'unprotected') {
        this.o.record(o.result === 'protected' ? 'server-protected' : 'server-unprotected', o.server, {
          client: p.client,
          path: o.path,
          server: o.server,
          protected: o.result === 'protected',
          via: 'api',
        });
      }
    }
    return report;
  }
}
