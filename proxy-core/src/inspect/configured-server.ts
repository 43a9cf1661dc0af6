/**
 * A check-up of a server as a client's config starts it (`airlock inspect --client C --server S`, and the
 * broker's `inspect` request): the original, unwrapped command with its env and cwd, under an execution policy
 * (read-only by default). Shared so the CLI and the UI run the very same check-up.
 */
import type { Env } from '../ipc/paths.js';
import type { ArgOverride } from './arg-overrides.js';
import { ExecutionPolicy } from './execution-policy.js';
import { inspectServer } from './inspect.js';
import type { InspectReport } from './report.js';
import type { ServerCommand } from './server-process.js';

/** The client or the server named is not one that can be inspected; `unknownClient` says which. */
export class ConfiguredServerError extends Error {
  override name = 'ConfiguredServerError';
  constructor(
    message: string,
    readonly unknownClient = false,
  ) {
    super(message);
  }
}

/** The original stdio command of a server in a client's config, resolved with `env` (HOME and friends). */
export async function configuredServerCommand(clientId: string, serverName: string, env: Env): Promise<ServerCommand> {
  // Loaded only here: it brings in every client's config format.
  const clients = await import('../clients/index.js');
  if (!clients.isClientId(clientId)) throw new ConfiguredServerError(`unknown client "${clientId}"; one of: ${clients.CLIENT_IDS.join(', ')}`, true);
  let entry;
  try {
    entry = await clients.resolveServerEntry(clientId, serverName, { env });
  } catch (err) {
    throw new ConfiguredServerError(err instanceof Error ? err.message : String(err));
  }
  return { command: entry.command, args: entry.args, env: entry.env, ...(entry.cwd !== undefined ? { cwd: entry.cwd } : {}) };
}

export interface ConfiguredInspectOptions {
  client: string;
  server: string;
  env: Env;
  /** Default: read-only tools only. */
  policy?: ExecutionPolicy;
  argOverrides?: readonly ArgOverride[];
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Inspect a configured server; throws ConfiguredServerError when it cannot be found, else what inspectServer throws. */
export async function inspectConfiguredServer(o: ConfiguredInspectOptions): Promise<InspectReport> {
  const command = await configuredServerCommand(o.client, o.server, o.env);
  return inspectServer(command, {
    policy: o.policy ?? new ExecutionPolicy(),
    ...(o.argOverrides ? { argOverrides: o.argOverrides } : {}),
    timeoutMs: o.timeoutMs,
    clientVersion: '0.1.0',
    ...(o.signal ? { signal: o.signal } : {}),
  });
}
