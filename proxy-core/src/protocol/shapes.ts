/**
 * The shapes the broker's methods share: rules and their conditions, the policy a wrapper holds, a journaled
 * call, a ticket, a session, the broker's status and its events. Each feature's methods (methods/*.ts) build
 * on these; types are derived from the schemas (api.ts).
 */
import { z } from 'zod';
import { CLASS_ORDER } from '../classify/classify.js';
import { LIMITS } from './limits.js';
import { SnapshotTotalsSchema, UndoableSchema } from './undo-api.js';

export const text = (max: number) => z.string().min(1).max(max);
export const ms = z.number().finite().nonnegative();
/** What a method without parameters takes, and what one that only says "done" answers. */
export const Empty = z.object({}).strict();
export const Ok = z.object({ ok: z.literal(true) });

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
  /** A rule of the team policy file (broker/managed/): no one but its administrator can remove it. */
  managed: z.literal(true).optional(),
  /** A grant for a time: the rule ends at this instant (ms), to the second, in the wrapper as in the broker. */
  expiresAt: ms.optional(),
  /** A grant of N calls: how many are left (spent through the broker, one at a time, so racing wrappers never overspend). */
  calls: z.number().int().nonnegative().optional(),
  /** How many calls the grant gave at first (what "2 of 10 left" is said against). */
  callsGranted: z.number().int().positive().optional(),
});

/**
 * What an approval may grant beyond the call: a time (`seconds` from now, or `until` an instant), a number of
 * calls, or both. Either makes the approval an allow rule that ends by itself.
 */
export const GrantSchema = z
  .object({
    seconds: z.number().int().min(1).max(7 * 24 * 3600).optional(),
    until: ms.optional(),
    calls: z.number().int().min(1).max(1000).optional(),
  })
  .strict()
  .refine((g) => g.seconds !== undefined || g.until !== undefined || g.calls !== undefined, 'a grant needs seconds, until or calls')
  .refine((g) => g.seconds === undefined || g.until === undefined, 'a grant takes seconds or until, not both');

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
  /** The client's W3C trace context from the request's `_meta` (protocol/trace-context.ts), for the audit export. */
  traceparent: z.string().regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/).optional(),
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
  /**
   * When the client stopped waiting on the call (its wrapper answered "call again" before the client would give
   * up): the ticket stays open, and the same call made again gets the answer given here.
   */
  unwaitedAt: ms.optional(),
  /** The tool's own description, as its server listed it (words of the server's, not Airlock's: shown escaped). */
  description: z.string().max(4000).optional(),
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

/**
 * A stored row whose seal is missing or wrong (broker/db/seals.ts): a loosening one is ignored, a tightening
 * one (a deny rule) is applied, since it only makes Airlock stricter. `what`: "allow srv → tool".
 */
export const UnsealedRowSchema = z.object({
  table: z.string(),
  key: z.string(),
  what: z.string(),
  applied: z.boolean(),
});

/** Rows missing from the journal or the event stream that retention did not delete. */
export const LogGapSchema = z.object({
  log: z.enum(['journal', 'events']),
  /** Rows missing between the retention's low-water mark and the newest row. */
  missing: z.number().int().nonnegative(),
  /** Rows missing at the top: the newest seq is below the one the broker had recorded. */
  backwards: z.number().int().nonnegative(),
  from: z.number().int(),
  to: z.number().int(),
});

export const IntegritySchema = z.object({
  unsealed: z.array(UnsealedRowSchema),
  /** Tightening rows (deny and ask rules, stricter settings, E-Stop on) that were gone or changed: put back. */
  restored: z.array(z.string()),
  gaps: z.array(LogGapSchema),
  /** The sealed record of the tightening rows was gone: removals before this start cannot be told. */
  manifestMissing: z.boolean().optional(),
});

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
  /** Journal entries taken in (on disk) and not yet filed into the journal's tables: any read files them first. */
  journalPending: z.number().int().nonnegative().optional(),
  /** Whether loosening needs a presence proof, and the standing warning when it does not. */
  presence: z.object({ required: z.boolean(), warning: z.string().nullable() }).optional(),
  /** What the start-up check of the database found: rows without a good seal, tightening rows restored, gaps. */
  integrity: IntegritySchema.optional(),
  /** The team policy file (broker/managed/): which file, whether it is in force, why the last read was refused. */
  managed: z
    .object({ path: z.string().nullable(), state: z.enum(['none', 'ok', 'refused']), error: z.string().optional(), line: z.number().int().optional(), inForce: z.boolean() })
    .optional(),
  /** The audit export (broker/otlp/): where to, what waits in its queue, what was sent and dropped, the last failure. */
  otlp: z
    .object({
      endpoint: z.string(),
      protocol: z.string(),
      queued: z.number().int().nonnegative(),
      max: z.number().int().nonnegative(),
      dropped: z.number().int().nonnegative(),
      sent: z.number().int().nonnegative(),
      lastError: z.string().nullable(),
    })
    .optional(),
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

