/**
 * The journal and the event stream: pages of calls and of events, the live stream a front end follows, and the
 * entries a wrapper sends for its calls.
 */
import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { method, QUICK_MS } from '../method.js';
import { UserMethod, WrapperMethod } from '../names.js';
import { BrokerEventSchema, CallRecordSchema, DecidedBySchema, ms, Ok, OutcomeSchema, text } from '../shapes.js';
import { UndoInfoSchema } from '../undo-api.js';

export const HistoryQuerySchema = z
  .object({
    limit: z.number().int().min(1).max(10_000).default(50),
    /** Only entries older than this cursor (the `nextCursor` of a previous page). */
    before: z.number().int().positive().optional(),
    server: z.string().max(LIMITS.name).optional(),
    client: z.string().max(LIMITS.name).optional(),
    /** The calls of one wrapper session. */
    session: z.string().max(64).optional(),
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
  /** The arguments in a few words (the path, the command, the recipient: classify/arg-summary.ts), set by the broker. */
  argSummary: z.string().max(400).optional(),
});

export const EventsQuerySchema = z
  .object({
    limit: z.number().int().min(1).max(10_000).default(50),
    before: z.number().int().positive().optional(),
    server: z.string().max(LIMITS.name).optional(),
  })
  .strict();

export const history = method({
  name: UserMethod.history,
  role: 'user',
  rights: 'read',
  params: HistoryQuerySchema,
  result: z.object({ calls: z.array(HistoryItemSchema), nextCursor: z.number().int().nullable() }),
  wait: QUICK_MS,
});

export const events = method({
  name: UserMethod.events,
  role: 'user',
  rights: 'read',
  params: EventsQuerySchema,
  result: z.object({ events: z.array(BrokerEventSchema), nextCursor: z.number().int().nullable() }),
  wait: QUICK_MS,
});

export const subscribe = method({
  name: UserMethod.subscribe,
  role: 'user',
  rights: 'read',
  /** Every event after `since` (0: from the start of what the journal keeps), then live ones, in order. */
  params: z.object({ since: z.number().int().nonnegative().default(0) }).strict(),
  result: z.object({ subscription: z.string(), head: z.number().int().nonnegative() }),
  wait: QUICK_MS,
});

export const unsubscribe = method({ name: UserMethod.unsubscribe, role: 'user', rights: 'read', params: z.object({ subscription: z.string() }).strict(), result: Ok, wait: QUICK_MS });

/** A wrapper's journal entries (its calls), acknowledged once they are written. */
export const journal = method({
  name: WrapperMethod.journal,
  role: 'wrapper',
  rights: 'report',
  params: z.object({
    entries: z.array(z.unknown()).max(10_000),
    /** Entries the wrapper could not keep (memory full of refused calls, the spill refused by the disk). */
    lost: z.object({ notRun: z.number().int().nonnegative().max(1e9), executed: z.number().int().nonnegative().max(1e9) }).optional(),
  }),
  result: z.object({ acked: z.number() }),
  wait: 10_000,
});

export const SessionRecordSchema = z.object({
  id: z.string(),
  client: z.string(),
  server: z.string(),
  startedAt: ms,
  /** Null while the wrapper is connected. */
  endedAt: ms.nullable(),
});

/** Wrapper sessions, newest first: one by its id, or the latest (of one client, or any). */
export const sessionsList = method({
  name: UserMethod.sessionsList,
  role: 'user',
  rights: 'read',
  params: z
    .object({
      id: z.string().min(1).max(64).optional(),
      client: z.string().max(LIMITS.name).optional(),
      limit: z.number().int().min(1).max(1000).default(50),
    })
    .strict(),
  result: z.object({ sessions: z.array(SessionRecordSchema) }),
  wait: QUICK_MS,
});

export const journalMethods = [history, events, subscribe, unsubscribe, journal, sessionsList] as const;
