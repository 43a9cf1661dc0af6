/**
 * proxy-core's public entry: what a front end (the desktop app's main process, a test harness) may use.
 * Everything here is plain Node; nothing imports Electron or UI code.
 */
export { Broker, type BrokerOptions } from './broker/broker.js';
export { startBroker, AUTO_PROTECT_KEY, type RunningBroker, type StartOptions } from './daemon/start.js';
/** What `protect` and auto-protect write into client configs: the composer (CLI, desktop app) supplies it. */
export type { Launcher } from './clients/launcher.js';
export { Store } from './broker/db/store.js';
export { DatabaseRefused, type DatabaseRecovery } from './broker/db/database.js';
export {
  CLASS_ORDER,
  classifyTool,
  classifyTools,
  isReadOnlyClass,
  stricter,
  verdictFor,
  type Catalog,
  type ClassifyOptions,
  type ToolClass,
  type Verdict,
} from './classify/classify.js';
export { decide, type DecidedBy, type PolicyDecision, type PolicySnapshot } from './policy/decide.js';
export type { Rule, RuleAction } from './policy/rules.js';
export { Channel, IpcError } from './ipc/channel.js';
export { BrokerUnavailable, connectBroker, type Role } from './ipc/connect.js';
export { brokerAddress, dataDir, databasePath } from './ipc/paths.js';
/** The broker's protocol: schemas and types for every method, the event union, names, settings and limits. */
export * from './protocol/api.js';
export type { CallSummary, EventDetails, EventType, TypedBrokerEvent } from './protocol/events.js';
export * from './protocol/names.js';
export { SETTINGS, settingProblem, type SettingKey } from './protocol/settings.js';
export { LIMITS } from './protocol/limits.js';
export { BrokerClient, type FollowHandlers } from './ipc/client.js';
export { type Clock, systemClock } from './util/clock.js';
export * as clients from './clients/index.js';
export { inspectServer, type InspectOptions } from './inspect/inspect.js';
export { ExecutionPolicy, NO_ANNOTATIONS_REASON, type ExecutionPolicyOptions } from './inspect/execution-policy.js';
export { validateStructuredContent } from './util/json-schema.js';
export { spellOutHidden } from './classify/hidden-text.js';
/** What the UI codes against, whoever hosts it (the browser host, the desktop app's preload). */
export type { AirlockApi, ApiErrorShape, EventHandlers, HostInfo, StreamState, UiMethod } from './protocol/ui-contract.js';
/** Whether a broker answers for a data dir: the desktop app attaches to it rather than starting its own. */
export { probeBroker } from './broker/server.js';
/** The MAC of the desktop app's presence proofs (Touch ID, a click it saw), under the key it handed its broker. */
export { appProofMac } from './broker/presence/presence.js';
