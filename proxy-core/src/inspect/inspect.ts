/**
 * `airlock inspect` as a library call: start the server, run the listing pass and the execution pass under
 * one ExecutionPolicy, and return the report. The server is always closed (its whole process tree) at the end.
 */
import { inspectPrompts, inspectResources, inspectTools, toolListChanges, type ListingLimits, DEFAULT_LIMITS } from './listing.js';
import { Findings } from './findings.js';
import { resolveArgOverrides, type ArgOverride } from './arg-overrides.js';
import { scanText } from './poisoning.js';
import type { ExecutionPolicy } from './execution-policy.js';
import { probeTools } from './probe.js';
import { summarize, type InspectReport } from './report.js';
import { ServerConnection, type ServerEvent } from './connection.js';
import type { ServerCommand } from './server-process.js';

export interface InspectOptions {
  policy: ExecutionPolicy;
  argOverrides?: readonly ArgOverride[];
  /** Per-request timeout. */
  timeoutMs?: number;
  /** Calls per executed tool for the latency figure. */
  runs?: number;
  limits?: ListingLimits;
  /** Reported to the server as the client version. */
  clientVersion?: string;
  /** Aborting stops the inspection: the server's tree is stopped at once and the call rejects with the reason. */
  signal?: AbortSignal;
}

const CHANGE_NOTIFICATIONS = new Set(['notifications/tools/list_changed', 'notifications/resources/updated', 'notifications/resources/list_changed']);

function eventFindings(events: readonly ServerEvent[], readOnlyTools: ReadonlySet<string>, findings: Findings): void {
  const reported = new Set<string>();
  for (const e of events) {
    const running = e.during?.startsWith('tool:') ? e.during.slice(5) : undefined;
    const justRan = e.during === undefined && e.after?.startsWith('tool:') ? e.after.slice(5) : undefined;
    const key = `${e.kind} ${e.method} ${running ?? justRan ?? e.during ?? e.phase}`;
    if (reported.has(key)) continue;
    reported.add(key);
    if (e.kind === 'request') {
      const when = running !== undefined ? 'during the call' : e.during !== undefined ? `while ${e.during}` : 'outside any call';
      findings.add('info', `server asked the client for ${e.method} ${when}; refused (inspect offers no client capabilities)`, running);
      continue;
    }
    if (!CHANGE_NOTIFICATIONS.has(e.method)) continue;
    const tool = running ?? justRan;
    if (tool !== undefined) {
      // A read-only tool whose call changes the catalog or a resource contradicts its own claim.
      const severity = readOnlyTools.has(tool) ? 'error' : 'warning';
      const when = running !== undefined ? 'while this tool was running' : 'right after this tool returned';
      findings.add(severity, `server sent ${e.method} ${when}${readOnlyTools.has(tool) ? ', though the tool declares readOnlyHint: true' : ''}`, tool);
    } else {
      const when = e.during !== undefined ? `while ${e.during}` : e.phase === 'probe' ? 'between tool calls' : `during the ${e.phase} pass`;
      findings.add('warning', `server sent ${e.method} ${when}: what it lists may not be what it serves`);
    }
  }
}

/** `work`, or a rejection with the signal's reason as soon as it aborts (the work is left to fail on its own). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    if (signal.aborted) onAbort();
  });
}

/**
 * Inspect one server. Throws (with a one-line message) only when the inspection cannot run at all, or with
 * the signal's reason when it is aborted.
 */
export async function inspectServer(command: ServerCommand, options: InspectOptions): Promise<InspectReport> {
  const { signal } = options;
  signal?.throwIfAborted();
  const connection = await ServerConnection.open(command, options.timeoutMs ?? 10_000, options.clientVersion ?? '0.1.0', signal);
  try {
    return await untilAborted(inspectConnected(connection, options), signal);
  } finally {
    // after an abort, the requests still running fail at once on the closed connection
    await connection.close(signal?.aborted === true);
  }
}

async function inspectConnected(connection: ServerConnection, options: InspectOptions): Promise<InspectReport> {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const findings = new Findings();
  if (connection.server.instructions !== undefined) {
    for (const hit of scanText(connection.server.instructions, 'instructions')) {
      findings.add('critical', `possible tool poisoning in the server's instructions: ${hit.detail}`);
    }
  }
  connection.phase = 'listing';
  const { tools } = await inspectTools(connection, findings, limits);
  const names = tools.map((t) => t.name);
  for (const name of options.policy.unknownNames(names)) findings.add('warning', `--only/--deny names "${name}", which the server does not list`);
  const overrides = resolveArgOverrides(options.argOverrides ?? [], names);
  for (const o of overrides.unmatched) findings.add('warning', `--arg ${o.target}: no listed tool matches`);

  const { resources, templates } = await inspectResources(connection, findings, limits);
  const prompts = await inspectPrompts(connection, findings, limits);
  connection.phase = 'probe';
  const { executed, skipped } = await probeTools(connection, tools, { policy: options.policy, overrides: overrides.byTool, runs: options.runs ?? 3 }, findings);

  const readOnly = new Set(tools.filter((t) => t.verdict.class === 'read-only-unchecked' || t.verdict.class === 'read-only-trusted').map((t) => t.name));
  eventFindings(connection.events, readOnly, findings);
  // The catalog a client was shown may not be the one it ends up using; after a list_changed, compare.
  if (connection.events.some((e) => e.method === 'notifications/tools/list_changed') && !connection.serverExited) {
    connection.phase = 'final listing';
    const changes = await toolListChanges(connection, tools, limits);
    if (changes !== undefined && changes.length > 0) {
      findings.add('critical', `the tool list changed during the inspection: ${changes.join('; ')}`);
    }
  }
  if (connection.garbage.count > 0) {
    findings.add('error', `server wrote ${connection.garbage.count} line(s) to stdout that are not JSON-RPC (stdout must carry MCP messages only)`);
  }
  return summarize({
    server: { name: connection.server.name, version: connection.server.version, protocolVersion: connection.server.protocolVersion },
    policy: options.policy.describe(),
    tools: tools.map((t) => ({
      name: t.name,
      class: t.verdict.class,
      reasons: t.verdict.reasons,
      ...(t.verdict.declared !== undefined ? { annotations: t.verdict.declared } : {}),
    })),
    findings: findings.list,
    executed,
    skipped,
    resources,
    resourceTemplates: templates,
    prompts,
  });
}
