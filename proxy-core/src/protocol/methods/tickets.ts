/**
 * Held calls: the tickets a front end lists and answers, what approving one would do to a file, a held call's
 * whole arguments, and the wrapper's ask that makes a ticket.
 */
import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { method, QUICK_MS } from '../method.js';
import { UserMethod, WrapperMethod } from '../names.js';
import { ArgConditionSchema, DecidedBySchema, Empty, GrantSchema, RememberSchema, text, TicketSchema } from '../shapes.js';

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

export const AskRequestSchema = z.object({
  callId: text(256),
  tool: text(LIMITS.toolName),
  arguments: z.unknown(),
  argsTruncated: z.boolean().optional(),
  argsBytes: z.number().int().nonnegative().optional(),
  argsSha256: z.string().optional(),
  class: z.unknown(),
  reasons: z.array(z.unknown()).max(200).default([]),
  /** The counted grant (a rule's id) the wrapper found for this call: the broker spends one of its calls, or holds the call. */
  grant: text(64).optional(),
});

export const AskAnswerSchema = z.object({
  decision: z.enum(['allow', 'deny']),
  decidedBy: DecidedBySchema,
  ticketId: z.string(),
  reason: z.string(),
  remember: RememberSchema.optional(),
});

export const pending = method({ name: UserMethod.pending, role: 'user', rights: 'read', params: Empty, result: z.array(TicketSchema), wait: QUICK_MS });

export const approve = method({
  name: UserMethod.approve,
  role: 'user',
  rights: 'loosen',
  params: z
    .object({
      id: text(64),
      remember: RememberSchema.default('once'),
      /** With `always`: the rule holds only for calls whose arguments meet these (e.g. one of the ticket's `scopes`). */
      args: z.array(ArgConditionSchema).min(1).max(16).optional(),
      /** With `always`: the rule holds only for calls Airlock can undo (offered when the ticket is `undoable`). */
      undoable: z.literal(true).optional(),
      /**
       * With `always`: the rule is a grant that ends by itself, after a time or a number of calls (this call
       * not counted). Loosening like any approval: it needs a presence proof.
       */
      grant: GrantSchema.optional(),
      /**
       * For a ticket whose arguments were cut (`argsTruncated`): the `argsSha256` of the whole arguments the
       * person was shown (`ticket.arguments`, `airlock pending ID --full`). Without it such a call is not allowed.
       */
      argsSeen: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    })
    .strict(),
  result: z.object({ ok: z.literal(true), ticket: TicketSchema, remember: RememberSchema }),
  wait: QUICK_MS,
});

export const deny = method({
  name: UserMethod.deny,
  role: 'user',
  rights: 'tighten',
  params: z.object({ id: text(64), reason: z.string().max(LIMITS.reason).optional() }).strict(),
  result: z.object({ ok: z.literal(true), ticket: TicketSchema }),
  wait: QUICK_MS,
});

export const preview = method({ name: UserMethod.preview, role: 'user', rights: 'read', params: z.object({ id: text(64) }).strict(), result: PreviewSchema, wait: QUICK_MS });

/**
 * A page of a held call's whole arguments, from the wrapper that holds the call (a ticket carries only their
 * first LIMITS.argsShown characters): a person reads them all before a cut call can be allowed. The broker
 * gives the wrapper 10 s.
 */
export const ticketArguments = method({
  name: UserMethod.ticketArguments,
  role: 'user',
  rights: 'read',
  params: z.object({ id: text(64), offset: z.number().int().nonnegative().default(0) }).strict(),
  result: z.object({ text: z.string(), offset: z.number().int().nonnegative(), total: z.number().int().nonnegative(), argsSha256: z.string() }),
  wait: 30_000,
});

/** A wrapper's call that needs a decision: answered at once by policy, or held as a ticket until a person answers. */
export const ask = method({
  name: WrapperMethod.ask,
  role: 'wrapper',
  rights: 'report',
  params: AskRequestSchema,
  result: AskAnswerSchema,
  // the broker ends every ticket itself by its timeout; the wrapper's bound only catches a broker that forgot
  wait: { ticket: (ticketMs) => ticketMs + 5000 },
});

export const ticketMethods = [pending, approve, deny, preview, ticketArguments, ask] as const;
