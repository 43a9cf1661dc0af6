/**
 * The MCP clients found on the broker's machine and their servers (protected or not), protecting and
 * unprotecting them, and check-ups of a configured server.
 */
import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { method } from '../method.js';
import { UserMethod } from '../names.js';
import { Empty, text } from '../shapes.js';

export const ScopeNameSchema = z.enum(['global', 'project', 'local']);

export const ConfiguredServerSchema = z.object({
  name: z.string(),
  transport: z.string(),
  protected: z.boolean(),
  protectable: z.boolean(),
  /** Why it cannot be protected. */
  reason: z.string().optional(),
  /** The server's own command (secrets redacted). */
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  url: z.string().optional(),
  /** Protected, but the launcher file the entry names is gone: protect again. */
  staleLauncher: z.string().optional(),
  /** The name the wrapper reports this server as (what the journal and rules call it). */
  wrappedAs: z.string().optional(),
  /** What is wrong with a wrapped-looking entry, or what it asks for that Airlock does not apply (clients/entry-status.ts). */
  warning: z.string().optional(),
  /** Another Airlock data dir the entry's wrapper reports to. */
  otherHome: z.string().optional(),
  /** Loosening wrap flags the entry gives (applied only when the person recorded the same choice). */
  loosening: z.array(z.string()).optional(),
});

export const ClientConfigsSchema = z.object({
  client: z.string(),
  label: z.string(),
  found: z.boolean(),
  locations: z.array(
    z.object({
      path: z.string(),
      scope: ScopeNameSchema,
      format: z.string(),
      /** Why the file could not be read; its servers are then unknown. */
      error: z.string().optional(),
      servers: z.array(ConfiguredServerSchema),
    }),
  ),
});

const ChangeParams = z
  .object({
    client: text(64),
    /** Server names, or every server of the client. */
    servers: z.union([z.array(text(LIMITS.name)).min(1).max(1000), z.literal('all')]),
    scope: ScopeNameSchema.optional(),
  })
  .strict();

export const ChangeReportSchema = z.object({
  outcomes: z.array(
    z.object({
      server: z.string(),
      scope: ScopeNameSchema,
      path: z.string(),
      result: z.enum(['protected', 'unprotected', 'unchanged', 'skipped']),
      reason: z.string().optional(),
    }),
  ),
  backups: z.array(z.string()),
  /** Said once when something changed: the client must restart (or reload) its servers. */
  restart: z.string().optional(),
  warnings: z.array(z.string()),
});

/** A check-up's report: `airlock inspect --json` (inspect/report.ts). */
export const InspectReportSchema = z.object({
  server: z.object({ name: z.string(), version: z.string(), protocolVersion: z.string() }),
  policy: z.string(),
  tools: z.array(z.object({ name: z.string(), class: z.string(), reasons: z.array(z.string()), annotations: z.unknown().optional() })),
  findings: z.array(z.object({ severity: z.string(), tool: z.string().optional(), message: z.string() })),
  executed: z.array(z.unknown()),
  skipped: z.array(z.unknown()),
  resources: z.array(z.unknown()),
  resourceTemplates: z.number(),
  prompts: z.array(z.unknown()),
  summary: z.object({
    toolsByClass: z.record(z.string(), z.number()),
    findingsBySeverity: z.record(z.string(), z.number()),
    executed: z.number(),
    skipped: z.number(),
  }),
});

/** Reading and rewriting client config files. */
const CONFIG_FILES_MS = 60_000;

export const clientsList = method({ name: UserMethod.clientsList, role: 'user', rights: 'read', params: Empty, result: z.array(ClientConfigsSchema), wait: CONFIG_FILES_MS });
export const protect = method({ name: UserMethod.protect, role: 'user', rights: 'tighten', params: ChangeParams, result: ChangeReportSchema, wait: CONFIG_FILES_MS });
export const unprotect = method({ name: UserMethod.unprotect, role: 'user', rights: 'loosen', params: ChangeParams, result: ChangeReportSchema, wait: CONFIG_FILES_MS });

/** A check-up of a configured server (`airlock inspect --client C --server S`): read-only unless the person allows more. */
export const inspect = method({
  name: UserMethod.inspect,
  role: 'user',
  rights: 'loosen',
  params: z.object({ client: text(64), server: text(LIMITS.name), timeoutSeconds: z.number().min(1).max(300).default(20) }).strict(),
  result: InspectReportSchema,
  // it runs the server for up to its own timeout, then reports
  wait: (p) => p.timeoutSeconds * 1000 + 15_000,
});

export const clientMethods = [clientsList, protect, unprotect, inspect] as const;
