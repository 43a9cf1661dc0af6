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
});

export const SessionInfoSchema = z.object({
  id: z.string(),
  client: z.string(),
  server: z.string(),
  command: z.array(z.string()),
  pid: z.number(),
  since: ms,
});

export const BrokerStatusSchema = z.object({
  estop: z.boolean(),
  pending: z.number().int().nonnegative(),
  sessions: z.array(SessionInfoSchema),
  dataDir: z.string(),
  pid: z.number(),
  ticketTimeoutSeconds: z.number(),
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
    from: ms.optional(),
    to: ms.optional(),
  })
  .strict();

export const HistoryItemSchema = CallRecordSchema.extend({ seq: z.number().int().positive(), kind: z.literal('call') });

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
    params: z.object({ id: text(64), remember: RememberSchema.default('once') }).strict(),
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
      })
      .strict(),
    result: RuleSchema,
  },
  [UserMethod.rulesRemove]: { params: z.object({ id: text(64) }).strict(), result: Ok },
  [UserMethod.trustSet]: { params: z.object({ server: text(LIMITS.name), on: z.boolean() }).strict(), result: z.object({ server: z.string(), trust: z.boolean() }) },
  [UserMethod.trustList]: { params: Empty, result: z.array(z.string()) },
  [UserMethod.catalog]: {
    params: z.object({ server: text(LIMITS.name) }).strict(),
    result: z.array(z.object({ name: z.string(), class: z.string(), reasons: z.array(z.string()), declared: z.unknown() })),
  },
  [UserMethod.settingsGet]: { params: z.object({ key: text(64) }).strict(), result: z.object({ value: z.string().nullable() }) },
  [UserMethod.settingsSet]: { params: z.object({ key: text(64), value: text(64) }).strict(), result: Ok },
  [UserMethod.wrapperRequest]: {
    /** Ask one connected wrapper something through the broker (its status today; an inverse call later). */
    params: z.object({ sessionId: text(64), method: z.literal('wrapper.status') }).strict(),
    result: z.object({ sessionId: z.string(), answer: z.unknown() }),
  },
} as const;

// ---- what a wrapper may call -----------------------------------------------------------------------------

export const SessionOpenSchema = z.object({
  client: text(LIMITS.name),
  server: text(LIMITS.name),
  command: z.array(z.string().max(LIMITS.reason)).max(1000),
  pid: z.number().int().nonnegative(),
  trustFlag: z.boolean(),
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
  [WrapperMethod.journal]: { params: z.object({ entries: z.array(z.unknown()).max(10_000) }), result: z.object({ acked: z.number() }) },
  [WrapperMethod.catalogUpdate]: {
    params: z.object({ verdicts: z.array(z.unknown()).max(100_000).default([]), problems: z.array(z.unknown()).max(1000).default([]) }),
    result: Ok,
  },
  [WrapperMethod.observed]: {
    params: z.object({ contradictions: z.array(z.object({ tool: z.string().max(LIMITS.toolName), evidence: z.string() })).max(10_000) }),
    result: Ok,
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
