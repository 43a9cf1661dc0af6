/**
 * The broker's protocol, defined once: for every method, the schema of its parameters and of its result,
 * and who may call it (a wrapper, or a person's front end). Types are derived from these schemas, and the
 * broker validates everything it receives with the same schemas. The wrapper imports only the types (zod
 * costs ~65 ms to load, which a wrapper's start-up cannot afford); it reads what the broker sends it with the
 * strict fallbacks in `wrap/broker-link.ts`.
 */
import { z } from 'zod';
import { CLASS_ORDER } from '../classify/classify.js';
import { UserMethod, WrapperMethod } from './names.js';
import { LIMITS } from './limits.js';
import { InverseDeclSchema, SnapshotTotalsSchema, UndoableSchema, UndoInfoSchema, undoMethods } from './undo-api.js';

// ---- shared shapes ---------------------------------------------------------------------------------------

const text = (max: number) => z.string().min(1).max(max);
const ms = z.number().finite().nonnegative();

export const ToolClassSchema = z.enum(CLASS_ORDER as unknown as [string, ...string[]]).transform((c) => c as (typeof CLASS_ORDER)[number]);
export const DecidedBySchema = z.enum(['estop', 'rule', 'session', 'class', 'user', 'timeout', 'broker-down', 'cancelled', 'error']);
export const OutcomeSchema = z.enum(['pending', 'ok', 'tool-error', 'rpc-error', 'cancelled', 'unknown', 'not-run']);
export const RememberSchema = z.enum(['once', 'session', 'always']);
export const RuleActionSchema = z.enum(['allow', 'deny', 'ask']);

/** A condition on one named argument of a call (see policy/arg-conditions.ts for how each kind matches). */
export const ArgConditionSchema = z.discriminatedUnion('kind', [
  z.object({ arg: text(256), kind: z.literal('path'), glob: text(4096) }).strict(),
  z.object({ arg: text(256), kind: z.literal('glob'), glob: text(4096) }).strict(),
  z.object({ arg: text(256), kind: z.literal('exact'), value: z.union([z.string().max(4096), z.number().finite(), z.boolean(), z.null()]) }).strict(),
  z.object({ arg: text(256), kind: z.literal('range'), min: z.number().finite().optional(), max: z.number().finite().optional() }).strict(),
]);

export const RuleSchema = z.object({
  id: text(64),
  action: RuleActionSchema,
  server: text(LIMITS.name),
  tool: text(LIMITS.toolName),
  client: text(LIMITS.name).optional(),
  /** All must hold for the rule to apply to a call. */
  args: z.array(ArgConditionSchema).max(16).optional(),
  /**
   * Only calls Airlock can undo (true: a file snapshot or a declared inverse), or only calls that change
   * something and cannot be undone (false; see policy/undo-plan.ts).
   */
  undoable: z.boolean().optional(),
  createdAt: ms,
  note: z.string().max(LIMITS.reason).optional(),
});

export const PolicySnapshotSchema = z.object({
  version: z.number().int(),
  estop: z.boolean(),
  rules: z.array(RuleSchema),
  sessionAllows: z.array(z.string()),
  trustReadOnlyHints: z.boolean(),
  withdrawn: z.record(z.string(), z.string()),
  /** The broker's ticket timeout now: the wrapper waits on an ask that long plus a grace (a setting may change it). */
  ticketTimeoutSeconds: z.number().positive().optional(),
  /** How long a server may take to stop a call E-Stop cancelled before the wrapper terminates it (a setting). */
  estopGraceSeconds: z.number().nonnegative().optional(),
  /**
   * The pinned definition of each of the server's tools (tool -> fingerprint, see broker/pins.ts): a call to a
   * tool listed with another definition asks until the user accepts it. Null only as the wrapper's reading of
   * pins it could not read: then every tool is held.
   */
  pins: z.record(z.string(), z.string()).nullable().optional(),
  /** Tools whose files are snapshotted before a call (tool -> its path arguments): the wrapper waits only for these. */
  fileTools: z.record(z.string(), z.array(z.string())).optional(),
  /** Tools with a declared inverse in this session: with `fileTools`, what rules on `undoable` judge by. */
  inverseTools: z.array(z.string()).optional(),
  /** Why calls cannot be journaled now (the broker's disk is full): while set, every call is refused. */
  journalDown: z.string().optional(),
  /** The tripwire is on: a changing call is forwarded only with a place from the broker (`tripwire.budget`). */
  tripwire: z.boolean().optional(),
});

/**
 * One tools/call, as the wrapper's pipeline carries it and the journal keeps it: who, what, the verdict, the
 * decision and what made it, the outcome, and when each step happened. Arguments and result are JSON text,
 * cut at their limits and marked when cut.
 */
export const CallRecordSchema = z.object({
  id: text(128),
  sessionId: z.string().max(64).optional(),
  client: z.string().max(LIMITS.name),
  server: z.string().max(LIMITS.name),
  tool: z.string().max(LIMITS.toolName),
  arguments: z.string().max(LIMITS.argsShown),
  argsTruncated: z.boolean(),
  argsBytes: z.number().int().nonnegative().optional(),
  argsSha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  class: z.unknown().transform((v) => (typeof v === 'string' && (CLASS_ORDER as readonly string[]).includes(v) ? (v as (typeof CLASS_ORDER)[number]) : 'unclassifiable')),
  reasons: z.array(z.string().max(LIMITS.reason)).max(50),
  decision: z.enum(['allow', 'deny']),
  decidedBy: DecidedBySchema,
  detail: z.string().max(LIMITS.detail),
  ticketId: z.string().max(64).optional(),
  outcome: OutcomeSchema,
  /** The result (or JSON-RPC error) as JSON text, cut at its limit. */
  result: z.string().max(LIMITS.resultShown).optional(),
  resultTruncated: z.boolean().optional(),
  resultBytes: z.number().int().nonnegative().optional(),
  /** When the wrapper read the call (the journal's time of a call). */
  startedAt: ms,
  askedAt: ms.optional(),
  decidedAt: ms.optional(),
  forwardedAt: ms.optional(),
  finishedAt: ms.optional(),
  /** How long the server took: forwarded to finished (a human's wait is not in it). */
  durationMs: ms.optional(),
});

/** How a tool's definition differs from the one pinned for it (broker/pins.ts). */
export const PinChangeSchema = z.object({
  /** The parts that changed: title, description, inputSchema, outputSchema, annotations. */
  fields: z.array(z.string()),
  /** Each changed part as pinned and as listed now (JSON text but for strings; absent: the part is absent; cut at its limit). */
  before: z.record(z.string(), z.string()),
  after: z.record(z.string(), z.string()),
  /** Fingerprints of the pinned and of the new definition (`pins.accept` may name the one it accepts). */
  pinned: z.string(),
  current: z.string(),
  /** A unified diff of the changed parts, pinned to now. */
  diff: z.string(),
});

export const TicketSchema = z.object({
  id: text(64),
  sessionId: z.string(),
  callId: z.string().optional(),
  client: z.string(),
  server: z.string(),
  tool: z.string(),
  /** The arguments, or their JSON text cut at the limit when `argsTruncated`. */
  arguments: z.unknown(),
  argsTruncated: z.boolean(),
  argsBytes: z.number().int().nonnegative(),
  argsSha256: z.string(),
  class: ToolClassSchema,
  reasons: z.array(z.string()),
  createdAt: ms,
  /** When the ticket times out (denied): the card's countdown. */
  expiresAt: ms.optional(),
  /**
   * Narrower scopes an "always allow" from this ticket may take, proposed by the broker from the call's own
   * arguments (e.g. `path` under this call's folder), widest last. The whole tool is always offered besides.
   */
  scopes: z.array(z.object({ label: z.string(), args: z.array(ArgConditionSchema).min(1).max(16) })).max(8).optional(),
  /** The tool's definition changed since it was pinned: what changed (the call asks until the user accepts it). */
  pinChange: PinChangeSchema.optional(),
  /** Whether the call will be undoable if approved (a file snapshot, a declared inverse), or null: it will not. */
  undoable: UndoableSchema.optional(),
  /** The call is the declared inverse of this journaled call, run for an undo a person asked for. */
  undoOf: z.string().optional(),
});

export const SessionInfoSchema = z.object({
  id: z.string(),
  client: z.string(),
  server: z.string(),
  command: z.array(z.string()),
  pid: z.number(),
  since: ms,
});

/** Who turned E-Stop on (a person, or the tripwire, which says why) and when. */
export const EstopCauseSchema = z.object({ by: z.enum(['user', 'tripwire']), reason: z.string().max(LIMITS.reason).optional(), at: ms.optional() });

export const BrokerStatusSchema = z.object({
  estop: z.boolean(),
  /** Why E-Stop is on; null when it is off (or was turned on before Airlock kept the cause). */
  estopCause: EstopCauseSchema.nullable().optional(),
  pending: z.number().int().nonnegative(),
  sessions: z.array(SessionInfoSchema),
  dataDir: z.string(),
  pid: z.number(),
  ticketTimeoutSeconds: z.number(),
  /** What undo's file snapshots take, and their caps. */
  snapshots: SnapshotTotalsSchema.optional(),
  /** Set while the disk refuses writes: every call is refused (it could not be journaled). */
  diskFull: z.object({ since: ms, error: z.string() }).nullable().optional(),
  /** Journal entries no copy of survived, ever (`executed`: of calls that reached their server). */
  journalLost: z.object({ executed: z.number().int().nonnegative(), notRun: z.number().int().nonnegative() }).optional(),
});

/** One entry of the broker's event stream; `seq` comes from the database and orders every event. */
export const BrokerEventSchema = z.object({
  seq: z.number().int().positive(),
  at: ms,
  type: z.string(),
  server: z.string().nullable(),
  tool: z.string().nullable(),
  detail: z.unknown(),
});


// ---- the UI's shapes: clients and their servers, check-ups, previews, settings ---------------------------

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

/** A tool that writes files: which argument names the file and which holds the new content. */
export const FileToolSchema = z.object({
  server: text(LIMITS.name),
  tool: text(LIMITS.toolName),
  kind: z.enum(['write', 'edit']),
  pathArg: text(256),
  /** For `write`: the argument with the whole new content. For `edit`: the argument with `[{oldText,newText}]`. */
  contentArg: text(256),
  /** Built in (server-filesystem) rather than declared by the user. */
  builtIn: z.boolean().optional(),
});

/** A tool's pinned definition: `pinned`, `changed` (listed since with another definition: held) or `removed`. */
export const PinInfoSchema = z.object({
  server: z.string(),
  tool: z.string(),
  status: z.enum(['pinned', 'changed', 'removed']),
  /** The pinned (accepted) definition's fingerprint. */
  fingerprint: z.string(),
  /** When it was first seen or last accepted. */
  pinnedAt: ms,
  /** The fingerprint of the definition last listed, and when. */
  current: z.string(),
  seenAt: ms,
  /** For a changed definition: what changed. */
  change: PinChangeSchema.optional(),
});

export const CatalogToolSchema = z.object({
  name: z.string(),
  class: z.string(),
  reasons: z.array(z.string()),
  /** The annotations exactly as declared. */
  declared: z.unknown(),
  /** A read-only claim withdrawn on evidence: that evidence. */
  withdrawn: z.string().optional(),
  /** The rules that name this tool (or match it by glob), in the order they are weighed. */
  rules: z.array(RuleSchema),
  /** How it writes files, when Airlock knows (previews and snapshots use it). */
  fileTool: FileToolSchema.optional(),
  /** Its pinned definition, and what changed when the server now lists another one. */
  pin: PinInfoSchema.optional(),
});

/** What approving a ticket would do to a file: a unified diff against the file on disk, read by the broker. */
export const PreviewSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none'), reason: z.string() }),
  z.object({
    kind: z.literal('file'),
    /** The absolute path the server will write (after `~`, the wrapper's cwd and symlinks). */
    path: z.string(),
    exists: z.boolean(),
    /** Unified diff, old to new (`---`/`+++` headers, `@@` hunks). Empty when nothing changes. */
    diff: z.string(),
    added: z.number().int().nonnegative(),
    removed: z.number().int().nonnegative(),
    /** The diff was cut at its limit. */
    truncated: z.boolean(),
    /** Said when the preview may differ from what the server will do (fuzzy edit, file changed, ...). */
    caveat: z.string().optional(),
  }),
  z.object({ kind: z.literal('error'), path: z.string().optional(), reason: z.string() }),
]);

export const SettingInfoSchema = z.object({
  key: z.string(),
  value: z.string(),
  fallback: z.string(),
  /** Values it takes: a list, or whole numbers from min to max. */
  values: z.union([z.array(z.string()), z.object({ min: z.number(), max: z.number() })]),
  help: z.string(),
});

const Empty = z.object({}).strict();
const Ok = z.object({ ok: z.literal(true) });

// ---- what a person's front end may call ------------------------------------------------------------------

export const HistoryQuerySchema = z
  .object({
    limit: z.number().int().min(1).max(10_000).default(50),
    /** Only entries older than this cursor (the `nextCursor` of a previous page). */
    before: z.number().int().positive().optional(),
    server: z.string().max(LIMITS.name).optional(),
    client: z.string().max(LIMITS.name).optional(),
    tool: z.string().max(LIMITS.toolName).optional(),
    decision: z.enum(['allow', 'deny']).optional(),
    decidedBy: DecidedBySchema.optional(),
    outcome: OutcomeSchema.optional(),
    /** A substring of the tool, the arguments or the detail. */
    text: z.string().min(1).max(200).optional(),
    /** One call, by its id. */
    id: text(128).optional(),
    /** Leave out each call's arguments and result (a list shows neither, and each may be 64 KB): items say `summary: true`. */
    summary: z.boolean().optional(),
    from: ms.optional(),
    to: ms.optional(),
  })
  .strict();

export const HistoryItemSchema = CallRecordSchema.extend({
  seq: z.number().int().positive(),
  kind: z.literal('call'),
  /** Asked for as a summary: `arguments` is empty and `result` left out (fetch the call by `id` for them). */
  summary: z.literal(true).optional(),
  /** Whether and how the call can be undone (set by the broker's history; absent on a bare store row). */
  undo: UndoInfoSchema.optional(),
});

export const EventsQuerySchema = z
  .object({
    limit: z.number().int().min(1).max(10_000).default(50),
    before: z.number().int().positive().optional(),
    server: z.string().max(LIMITS.name).optional(),
  })
  .strict();

export const userApi = {
  [UserMethod.status]: { params: Empty, result: BrokerStatusSchema },
  [UserMethod.pending]: { params: Empty, result: z.array(TicketSchema) },
  [UserMethod.approve]: {
    params: z
      .object({
        id: text(64),
        remember: RememberSchema.default('once'),
        /** With `always`: the rule holds only for calls whose arguments meet these (e.g. one of the ticket's `scopes`). */
        args: z.array(ArgConditionSchema).min(1).max(16).optional(),
        /** With `always`: the rule holds only for calls Airlock can undo (offered when the ticket is `undoable`). */
        undoable: z.literal(true).optional(),
        /**
         * For a ticket whose arguments were cut (`argsTruncated`): the `argsSha256` of the whole arguments the
         * person was shown (`ticket.arguments`, `airlock pending ID --full`). Without it such a call is not allowed.
         */
        argsSeen: z.string().regex(/^[0-9a-f]{64}$/).optional(),
      })
      .strict(),
    result: z.object({ ok: z.literal(true), ticket: TicketSchema, remember: RememberSchema }),
  },
  [UserMethod.deny]: {
    params: z.object({ id: text(64), reason: z.string().max(LIMITS.reason).optional() }).strict(),
    result: z.object({ ok: z.literal(true), ticket: TicketSchema }),
  },
  [UserMethod.estop]: { params: z.object({ on: z.boolean() }).strict(), result: z.object({ estop: z.boolean() }) },
  [UserMethod.history]: {
    params: HistoryQuerySchema,
    result: z.object({ calls: z.array(HistoryItemSchema), nextCursor: z.number().int().nullable() }),
  },
  [UserMethod.events]: {
    params: EventsQuerySchema,
    result: z.object({ events: z.array(BrokerEventSchema), nextCursor: z.number().int().nullable() }),
  },
  [UserMethod.subscribe]: {
    /** Every event after `since` (0: from the start of what the journal keeps), then live ones, in order. */
    params: z.object({ since: z.number().int().nonnegative().default(0) }).strict(),
    result: z.object({ subscription: z.string(), head: z.number().int().nonnegative() }),
  },
  [UserMethod.unsubscribe]: { params: z.object({ subscription: z.string() }).strict(), result: Ok },
  [UserMethod.rulesList]: { params: Empty, result: z.array(RuleSchema) },
  [UserMethod.rulesAdd]: {
    params: z
      .object({
        action: RuleActionSchema,
        server: text(LIMITS.name),
        tool: text(LIMITS.toolName),
        client: text(LIMITS.name).optional(),
        args: z.array(ArgConditionSchema).max(16).optional(),
        undoable: z.boolean().optional(),
      })
      .strict(),
    result: RuleSchema,
  },
  [UserMethod.rulesRemove]: { params: z.object({ id: text(64) }).strict(), result: Ok },
  [UserMethod.trustSet]: { params: z.object({ server: text(LIMITS.name), on: z.boolean() }).strict(), result: z.object({ server: z.string(), trust: z.boolean() }) },
  [UserMethod.trustList]: { params: Empty, result: z.array(z.string()) },
  [UserMethod.catalog]: {
    params: z.object({ server: text(LIMITS.name) }).strict(),
    result: z.array(CatalogToolSchema),
  },
  [UserMethod.settingsGet]: { params: z.object({ key: text(64) }).strict(), result: z.object({ value: z.string().nullable() }) },
  [UserMethod.settingsSet]: { params: z.object({ key: text(64), value: text(64) }).strict(), result: Ok },
  [UserMethod.wrapperRequest]: {
    /** Ask one connected wrapper something through the broker (its status today; an inverse call later). */
    params: z.object({ sessionId: text(64), method: z.literal('wrapper.status') }).strict(),
    result: z.object({ sessionId: z.string(), answer: z.unknown() }),
  },
  [UserMethod.settingsList]: { params: Empty, result: z.array(SettingInfoSchema) },
  /** The MCP clients found on the broker's machine and their servers, protected or not. */
  [UserMethod.clientsList]: { params: Empty, result: z.array(ClientConfigsSchema) },
  [UserMethod.protect]: { params: ChangeParams, result: ChangeReportSchema },
  [UserMethod.unprotect]: { params: ChangeParams, result: ChangeReportSchema },
  /** A check-up of a configured server (`airlock inspect --client C --server S`): read-only unless the person allows more. */
  [UserMethod.inspect]: {
    params: z.object({ client: text(64), server: text(LIMITS.name), timeoutSeconds: z.number().min(1).max(300).default(20) }).strict(),
    result: InspectReportSchema,
  },
  [UserMethod.preview]: { params: z.object({ id: text(64) }).strict(), result: PreviewSchema },
  /**
   * A page of a held call's whole arguments, from the wrapper that holds the call (a ticket carries only their
   * first LIMITS.argsShown characters): a person reads them all before a cut call can be allowed.
   */
  [UserMethod.ticketArguments]: {
    params: z.object({ id: text(64), offset: z.number().int().nonnegative().default(0) }).strict(),
    result: z.object({ text: z.string(), offset: z.number().int().nonnegative(), total: z.number().int().nonnegative(), argsSha256: z.string() }),
  },
  [UserMethod.fileToolsList]: { params: Empty, result: z.array(FileToolSchema) },
  [UserMethod.fileToolsSet]: { params: FileToolSchema.omit({ builtIn: true }).strict(), result: FileToolSchema },
  [UserMethod.fileToolsRemove]: { params: z.object({ server: text(LIMITS.name), tool: text(LIMITS.toolName) }).strict(), result: Ok },
  /** Undo one journaled call: its files put back from their snapshots, or its declared inverse called. */
  [UserMethod.undo]: undoMethods.undo,
  [UserMethod.undoLast]: undoMethods.undoLast,
  /** Undo every call of a wrapper session that can be, newest first; one that fails does not stop the rest. */
  [UserMethod.rollback]: undoMethods.rollback,
  [UserMethod.inversesList]: undoMethods.inversesList,
  [UserMethod.inversesSet]: undoMethods.inversesSet,
  [UserMethod.inversesRemove]: undoMethods.inversesRemove,
  /** Pinned tool definitions, of one server or all; changed ones first. */
  [UserMethod.pinsList]: { params: z.object({ server: text(LIMITS.name).optional() }).strict(), result: z.array(PinInfoSchema) },
  /**
   * Accept the definitions a server lists now in place of the pinned ones (every changed tool, or one); the
   * hold is lifted in every wrapper of the server before this answers. With `fingerprint`, only if the tool's
   * new definition is still that one (what the person looked at).
   */
  [UserMethod.pinsAccept]: {
    params: z.object({ server: text(LIMITS.name), tool: text(LIMITS.toolName).optional(), fingerprint: z.string().regex(/^[0-9a-f]{64}$/).optional() }).strict(),
    result: z.object({ accepted: z.array(PinInfoSchema) }),
  },
  /** A fresh sign-in link of the UI host (single-use, short-lived); bad-state when the broker serves no UI. */
  [UserMethod.uiLink]: { params: Empty, result: z.object({ url: z.string() }) },
} as const;

// ---- what a wrapper may call -----------------------------------------------------------------------------

export const SessionOpenSchema = z.object({
  client: text(LIMITS.name),
  server: text(LIMITS.name),
  command: z.array(z.string().max(LIMITS.reason)).max(1000),
  pid: z.number().int().nonnegative(),
  trustFlag: z.boolean(),
  /** The wrapper's working directory (the server's too): relative paths in arguments are resolved against it. */
  cwd: z.string().max(4096).optional(),
  /** Its `--undo` declarations: inverses for this session (checked by the broker against the server's tools). */
  undo: z.array(InverseDeclSchema).max(256).optional(),
});

export const AskRequestSchema = z.object({
  callId: text(256),
  tool: text(LIMITS.toolName),
  arguments: z.unknown(),
  argsTruncated: z.boolean().optional(),
  argsBytes: z.number().int().nonnegative().optional(),
  argsSha256: z.string().optional(),
  class: z.unknown(),
  reasons: z.array(z.unknown()).max(200).default([]),
});

export const AskAnswerSchema = z.object({
  decision: z.enum(['allow', 'deny']),
  decidedBy: DecidedBySchema,
  ticketId: z.string(),
  reason: z.string(),
  remember: RememberSchema.optional(),
});

export const wrapperApi = {
  [WrapperMethod.sessionOpen]: {
    params: SessionOpenSchema,
    result: z.object({ sessionId: z.string(), policy: PolicySnapshotSchema, ticketTimeoutSeconds: z.number().optional() }),
  },
  [WrapperMethod.ask]: { params: AskRequestSchema, result: AskAnswerSchema },
  [WrapperMethod.journal]: {
    params: z.object({
      entries: z.array(z.unknown()).max(10_000),
      /** Entries the wrapper could not keep (memory full of refused calls, the spill refused by the disk). */
      lost: z.object({ notRun: z.number().int().nonnegative().max(1e9), executed: z.number().int().nonnegative().max(1e9) }).optional(),
    }),
    result: z.object({ acked: z.number() }),
  },
  [WrapperMethod.catalogUpdate]: {
    params: z.object({ verdicts: z.array(z.unknown()).max(100_000).default([]), problems: z.array(z.unknown()).max(1000).default([]) }),
    result: Ok,
  },
  [WrapperMethod.observed]: {
    params: z.object({ contradictions: z.array(z.object({ tool: z.string().max(LIMITS.toolName), evidence: z.string() })).max(10_000) }),
    result: Ok,
  },
  [WrapperMethod.prepare]: undoMethods.prepare,
  [WrapperMethod.budget]: {
    params: z.object({ used: z.number().int().min(0).max(1_000_000), want: z.number().int().min(0).max(10_000), waiting: z.boolean() }),
    result: z.object({ granted: z.number().int().min(0), refused: z.enum(['estop', 'busy']).optional() }),
  },
} as const;

// ---- derived types ---------------------------------------------------------------------------------------

export type UserApi = typeof userApi;
export type UserMethodKey = keyof UserApi;
/** What a front end passes (defaults may be left out). */
export type ParamsOf<M extends UserMethodKey> = z.input<UserApi[M]['params']>;
/** What the broker's handler receives (defaults filled in). */
export type CheckedParamsOf<M extends UserMethodKey> = z.output<UserApi[M]['params']>;
export type ResultOf<M extends UserMethodKey> = z.output<UserApi[M]['result']>;

export type WrapperApi = typeof wrapperApi;
export type WrapperMethodKey = keyof WrapperApi;
export type WrapperParamsOf<M extends WrapperMethodKey> = z.output<WrapperApi[M]['params']>;
export type WrapperResultOf<M extends WrapperMethodKey> = z.output<WrapperApi[M]['result']>;

export type CallRecord = z.output<typeof CallRecordSchema>;
export type Ticket = z.output<typeof TicketSchema>;
export type Rule = z.output<typeof RuleSchema>;
export type EstopCause = z.output<typeof EstopCauseSchema>;
export type RuleAction = z.output<typeof RuleActionSchema>;
export type ArgCondition = z.output<typeof ArgConditionSchema>;
export type PolicySnapshotShape = z.output<typeof PolicySnapshotSchema>;
export type SessionInfo = z.output<typeof SessionInfoSchema>;
export type BrokerStatus = z.output<typeof BrokerStatusSchema>;
export type BrokerEvent = z.output<typeof BrokerEventSchema>;
export type HistoryItem = z.output<typeof HistoryItemSchema>;
export type HistoryQuery = z.input<typeof HistoryQuerySchema>;
export type SessionOpen = z.output<typeof SessionOpenSchema>;
export type AskRequest = z.input<typeof AskRequestSchema>;
export type AskAnswer = z.output<typeof AskAnswerSchema>;
export type Remember = z.output<typeof RememberSchema>;
export type Outcome = z.output<typeof OutcomeSchema>;
export type ClientConfigs = z.output<typeof ClientConfigsSchema>;
export type ConfiguredServer = z.output<typeof ConfiguredServerSchema>;
export type ChangeReportResult = z.output<typeof ChangeReportSchema>;
export type InspectReportResult = z.output<typeof InspectReportSchema>;
export type CatalogTool = z.output<typeof CatalogToolSchema>;
export type FileTool = z.output<typeof FileToolSchema>;
export type Preview = z.output<typeof PreviewSchema>;
export type SettingInfo = z.output<typeof SettingInfoSchema>;
export type PinChange = z.output<typeof PinChangeSchema>;
export type PinInfo = z.output<typeof PinInfoSchema>;
