/** Public API of the client-config module: find MCP clients, list their servers, protect and restore them. */
export { CLIENTS, clientLocations, isClientId, type ClientInfo } from './known-clients.js';
export { discoverClient, discoverClients, readLocation, type ClientReport, type LocationReport } from './discover.js';
export { launcherFromEnv, LauncherError, type Launcher } from './launcher.js';
export {
  changeServers,
  ClientConfigError,
  protectServers,
  unprotectServers,
  type Action,
  type ChangeOutcome,
  type ChangeReport,
  type ChangeRequest,
  type ProtectRequest,
} from './rewrite.js';
export { resolveServerEntry, type ResolvedServer } from './resolve.js';
export { isClientRunning, systemProcessLister, type ProcessLister } from './running.js';
export { NO_LAUNCHER, watchClientConfigs, type ClientConfigEvent, type ConfigWatcher, type WatchOptions } from './watch.js';
export { parseWrapArgv, unwrap, wrapCommand, wrappedByHand, WrapArgvError, type WrapArgv } from './wrapped.js';
export { wrapperHome } from './rewrite.js';
export { isSecretName, REDACTED, redactArgs, redactCommand } from './redact.js';
export { changeClient, reportJson, restartAdvice, serverJson } from './report-json.js';
export { CLIENT_IDS } from './types.js';
export type { ClientId, ConfigLocation, DiscoverOptions, Format, Scope, ServerEntry, StdioCommand, Transport } from './types.js';
