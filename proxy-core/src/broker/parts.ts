/**
 * The broker's parts as the features' method handlers reach them (tickets/api.ts, rules-api.ts, ...): the
 * Broker facade builds them once and is itself this view of them.
 */
import type { Launcher } from '../clients/launcher.js';
import type { Env } from '../ipc/paths.js';
import type { MatchEnv } from '../policy/arg-conditions.js';
import type { Clock } from '../util/clock.js';
import type { ServerCatalogs } from './catalogs.js';
import type { ClientConfigsApi } from './client-configs.js';
import type { EstopSwitch } from './estop.js';
import type { EventBus, RecordEvent } from './events.js';
import type { FileTools } from './undo/file-tools.js';
import type { Inspections } from './inspections.js';
import type { JournalSafety } from './journal-safety.js';
import type { JournalWriter } from './journal-writer.js';
import type { Pins } from './pins.js';
import type { RuleBook } from './rule-book.js';
import type { Sessions } from './sessions.js';
import type { Presence, PresenceOptions } from './presence/presence.js';
import type { Store } from './db/store.js';
import type { TicketTimeout } from './tickets/timeout.js';
import type { Tickets } from './tickets/tickets.js';
import type { Undo } from './undo/undo.js';
import type { OtlpExporter } from './otlp/exporter.js';
import type { ManagedOptions, ManagedPolicyApi } from './managed/api.js';

export interface BrokerOptions {
  store: Store;
  dataDir: string;
  /** The ticket timeout given at start (the daemon's --ticket-timeout); without one, the ticket-timeout setting. */
  ticketTimeoutSeconds?: number;
  /** How long a wrapper may take to apply a policy push before it is cut off (and so fails closed). */
  ackTimeoutMs?: number;
  clock?: Clock;
  /** The environment whose HOME, APPDATA, ... locate the MCP clients' configs (default process.env). */
  env?: Env;
  /** What protect writes into client configs to start Airlock (given by the composer); without one, protect is refused. */
  launcher?: Launcher;
  /** How path arguments are judged (home, platform, real paths): the system's unless a test says otherwise. */
  matchEnv?: MatchEnv;
  /**
   * Presence proofs (presence/presence.ts). Default: required, polkit asked where it exists. `required: false`
   * is `airlock daemon --no-presence`, the person's choice.
   */
  presence?: Partial<Pick<PresenceOptions, 'required' | 'appKey' | 'polkit' | 'polkitAvailable'>>;
  /** The team policy file: an override path for tests and hardened set-ups (managed/api.ts). */
  managed?: ManagedOptions;
  /** How many records the audit export's queue keeps while the collector is away (otlp/setup.ts). */
  otlpQueueMax?: number;
}

export interface BrokerParts {
  readonly options: BrokerOptions;
  readonly presence: Presence;
  readonly store: Store;
  readonly clock: Clock;
  readonly bus: EventBus;
  readonly sessions: Sessions;
  readonly tickets: Tickets;
  readonly catalogs: ServerCatalogs;
  readonly fileTools: FileTools;
  readonly pins: Pins;
  readonly undo: Undo;
  readonly safety: JournalSafety;
  readonly journalWriter: JournalWriter;
  readonly ticketTimeout: TicketTimeout;
  readonly clientConfigs: ClientConfigsApi;
  readonly inspections: Inspections;
  readonly matchEnv: MatchEnv;
  readonly ruleBook: RuleBook;
  readonly estop: EstopSwitch;
  /** Where `ui.link` gets a fresh sign-in link: the UI host, once it runs (daemon/start.ts). */
  readonly uiLinks: (() => string) | null;
  readonly record: RecordEvent;
  /** The audit export (otlp/). */
  readonly otlp: OtlpExporter;
  /** The team policy (managed/). */
  readonly managed: ManagedPolicyApi;
}
