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
  /** Who decided the call and why, in words (protocol/activity.ts decisionWords), set by the broker. */
  why: z.string().max(LIMITS.detail + 200).optional(),
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

const RAW_HEAD = Buffer.from('{"n":');
const RAW_ENTRIES = Buffer.from(',"entries":[');

/**
 * A wrapper's batch as its bytes. The broker's socket hands params of exactly the form `{"n":<count>,"entries":[…]}`
 * over unparsed (ipc/channel.ts `raw`), and the broker takes them into the journal as they are
 * (broker/journal-writer.ts): the entries are read (broker/batch-entries.ts), and checked, when they are filed.
 * `parts` are the array's text, brackets included, as the pieces of the chunks it came in (never joined on the way
 * to the intake's file); `n` is how many entries the sender says it holds.
 */
export class RawJournal {
  constructor(
    readonly n: number,
    readonly parts: readonly Buffer[],
  ) {}

  /**
   * The params' bytes (one buffer, or the parts of the chunks they came in) as a RawJournal; undefined when they
   * are not of that form (they are parsed as JSON then). The head is read from the first part, the closing
   * brackets from the last: parts split elsewhere are declined (and offered again joined).
   */
  static of(params: Buffer | readonly Buffer[]): RawJournal | undefined {
    const parts = Buffer.isBuffer(params) ? [params] : params;
    const first = parts[0];
    const last = parts[parts.length - 1];
    if (!first || !last || first.length < RAW_HEAD.length + 1 + RAW_ENTRIES.length || last.length < 2 || first.compare(RAW_HEAD, 0, RAW_HEAD.length, 0, RAW_HEAD.length) !== 0) return undefined;
    let i = RAW_HEAD.length;
    let n = 0;
    while (i < first.length && i < RAW_HEAD.length + 6 && first[i]! >= 0x30 && first[i]! <= 0x39) n = n * 10 + first[i++]! - 0x30;
    const open = i + RAW_ENTRIES.length - 1;
    if (i === RAW_HEAD.length || n > 10_000 || open >= first.length || first.compare(RAW_ENTRIES, 0, RAW_ENTRIES.length, i, i + RAW_ENTRIES.length) !== 0) return undefined;
    if (last[last.length - 1] !== 0x7d /* } */ || last[last.length - 2] !== 0x5d /* ] */) return undefined;
    if (parts.length === 1) return new RawJournal(n, [first.subarray(open, first.length - 1)]);
    const inner = parts.slice(1, -1);
    const tail = last.subarray(0, last.length - 1);
    return new RawJournal(n, [first.subarray(open), ...inner, ...(tail.length > 0 ? [tail] : [])]);
  }

  /** The array's text in one buffer (joined when it came in parts). */
  get bytes(): Buffer {
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
  }
}

/** A wrapper's journal entries (its calls), acknowledged once they are written. */
export const journal = method({
  name: WrapperMethod.journal,
  role: 'wrapper',
  rights: 'report',
  params: z.union([
    z.instanceof(RawJournal),
    z.object({
      entries: z.array(z.unknown()).max(10_000),
      /** Entries the wrapper could not keep (memory full of refused calls, the spill refused by the disk). */
      lost: z.object({ notRun: z.number().int().nonnegative().max(1e9), executed: z.number().int().nonnegative().max(1e9) }).optional(),
    }),
  ]),
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
  /** The session as a person names it: "Claude Desktop's filesystem". */
  title: z.string(),
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

/** One wrapper session told in order: its calls oldest first, each a sentence (protocol/activity.ts storySentence). */
export const sessionStory = method({
  name: UserMethod.sessionStory,
  role: 'user',
  rights: 'read',
  params: z.object({ id: z.string().min(1).max(64) }).strict(),
  result: z.object({
    session: SessionRecordSchema,
    lines: z.array(z.object({ id: z.string(), startedAt: ms, sentence: z.string(), undo: z.boolean() })),
    /** Older calls were left out (the story tells the newest STORY_MAX). */
    cut: z.boolean(),
  }),
  wait: 30_000,
});

/**
 * A page of the journal as export text (protocol/activity-export.ts: CSV with its header on the first page, or
 * JSON Lines), newest first; `nextCursor` is the `before` of the next page. The CLI and the UI page through it.
 */
export const historyExport = method({
  name: UserMethod.historyExport,
  role: 'user',
  rights: 'read',
  params: HistoryQuerySchema.omit({ limit: true, summary: true, id: true }).extend({
    format: z.enum(['jsonl', 'csv']),
    /** The export's first page: a CSV starts with its header. */
    first: z.boolean().default(false),
  }).strict(),
  result: z.object({ text: z.string(), count: z.number().int().nonnegative(), nextCursor: z.number().int().nullable() }),
  wait: 30_000,
});

export const journalMethods = [history, events, subscribe, unsubscribe, journal, sessionsList, sessionStory, historyExport] as const;
