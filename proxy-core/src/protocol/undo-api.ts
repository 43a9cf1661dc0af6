/**
 * The shapes of undo in the broker's protocol (methods/undo.ts keys them to methods): declared inverses, what
 * a history entry and a ticket say about undoing a call, and what an undo or a rollback reports. Defined once,
 * here, for the broker, the CLI and the UI.
 */
import { z } from 'zod';
import { LIMITS } from './limits.js';

const name = z.string().min(1).max(1024);

/** `TOOL=INVERSE[:result][:ARG=PATH,...]` as structured fields (see wrap/undo-spec.ts for what they mean). */
export const InverseDeclSchema = z
  .object({
    tool: name,
    inverse: name,
    from: z.enum(['args', 'result']).default('args'),
    /** Arguments of the inverse taken from paths in the call's arguments (or structuredContent). */
    map: z.record(z.string().min(1).max(256), z.string().min(1).max(1024)).optional(),
  })
  .strict();

export const DeclaredInverseSchema = z.object({
  server: z.string(),
  tool: z.string(),
  inverse: z.string(),
  from: z.enum(['args', 'result']),
  map: z.record(z.string(), z.string()).optional(),
  /** The text form (what `--undo` and `airlock inverses set` take). */
  spec: z.string(),
  /**
   * Where it comes from: your stored declaration, or a running wrapper's `--undo` (its session), which only
   * proposes: an undo counts on a stored declaration alone.
   */
  source: z.enum(['setting', 'wrapper']),
  sessionId: z.string().optional(),
});

export const UndoKindSchema = z.enum(['snapshot', 'inverse']);
export const UndoStateSchema = z.enum(['prepared', 'ready', 'unchanged', 'unavailable', 'undone', 'failed', 'pruned']);

/** What a history entry says about undoing its call. */
export const UndoInfoSchema = z.object({
  available: z.boolean(),
  /** How it would be undone: a file snapshot, a declared inverse call, or (null) no way Airlock knows. */
  kind: UndoKindSchema.nullable(),
  state: UndoStateSchema.optional(),
  /** Why it is not available (or what the last attempt left). */
  reason: z.string().optional(),
  /** The files a snapshot covers. */
  paths: z.array(z.string()).optional(),
  /** The inverse tool. */
  inverse: z.string().optional(),
  /** The undo (its journal id) that undid this call. */
  undoneBy: z.string().optional(),
  /** For an undo's own entry: the call it undid (undoing this entry redoes that call). */
  undoOf: z.string().optional(),
});

/** What a ticket says before approval: how the call would be undone, or null (it could not be). */
export const UndoableSchema = z
  .object({
    kind: UndoKindSchema,
    inverse: z.string().optional(),
  })
  .nullable();

export const UndoReportSchema = z.object({
  callId: z.string(),
  ok: z.boolean(),
  kind: UndoKindSchema.nullable(),
  /** The undo's own journal entry, when one ran (undoing it redoes the call, where its state was snapshotted). */
  undoId: z.string().optional(),
  /** One line: what happened, or why nothing did. */
  summary: z.string(),
  /** Per file: what undo did. */
  restored: z.array(z.object({ path: z.string(), action: z.enum(['restored', 'removed', 'recreated', 'already-as-before']) })),
  /** Files changed since the call (nothing was written: `force` overwrites). */
  conflicts: z.array(z.object({ path: z.string(), expected: z.string(), found: z.string() })),
  /** What failed and stays as it was. */
  residue: z.array(z.string()),
});

export const RollbackReportSchema = z.object({
  sessionId: z.string(),
  /** Every undo attempted, newest call first. */
  results: z.array(UndoReportSchema),
  /** Calls of the session that changed something and could not be undone, and why. */
  skipped: z.array(z.object({ callId: z.string(), tool: z.string(), reason: z.string() })),
  undone: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
});

/** Snapshot storage, for `airlock status`. */
export const SnapshotTotalsSchema = z.object({
  /** Records that keep file bytes, distinct files kept, and their bytes. */
  records: z.number().int().nonnegative(),
  blobs: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  fileCapBytes: z.number().int().nonnegative(),
  totalCapBytes: z.number().int().nonnegative(),
});

export const undoMethods = {
  undo: {
    params: z.object({ id: z.string().min(1).max(128), force: z.boolean().default(false) }).strict(),
    result: UndoReportSchema,
  },
  undoLast: {
    /** The newest call (of one server, or any) that can be undone and was not: the tray's "undo last". */
    params: z.object({ server: z.string().min(1).max(512).optional(), force: z.boolean().default(false) }).strict(),
    result: UndoReportSchema,
  },
  rollback: {
    params: z.object({ sessionId: z.string().min(1).max(64), force: z.boolean().default(false) }).strict(),
    result: RollbackReportSchema,
  },
  inversesList: { params: z.object({}).strict(), result: z.array(DeclaredInverseSchema) },
  inversesSet: { params: InverseDeclSchema.extend({ server: z.string().min(1).max(512) }).strict(), result: DeclaredInverseSchema },
  inversesRemove: {
    params: z.object({ server: z.string().min(1).max(512), tool: name }).strict(),
    result: z.object({ ok: z.literal(true) }),
  },
  prepare: {
    /** A wrapper, before it sends a call of a file tool: record the prior state of the files it names. */
    params: z.object({
      callId: z.string().min(1).max(256),
      tool: name,
      /** The values of the tool's path arguments (whatever the client sent: undo judges them). */
      paths: z.record(z.string().max(256), z.unknown()),
      /**
       * Snapshotted calls of this wrapper the server has answered since its last prepare: the state they left their
       * files in is read before this call runs, not once their journal entries arrive (this call may change them).
       */
      finished: z.array(z.string().min(1).max(256)).max(LIMITS.finishedPerPrepare).optional(),
    }),
    /** ok false: the call must not run (the reason says why); undoable: whether it will be. */
    result: z.object({ ok: z.boolean(), undoable: z.boolean(), reason: z.string().optional() }),
  },
} as const;

export type InverseDeclInput = z.output<typeof InverseDeclSchema>;
export type DeclaredInverse = z.output<typeof DeclaredInverseSchema>;
export type UndoInfo = z.output<typeof UndoInfoSchema>;
export type Undoable = z.output<typeof UndoableSchema>;
export type UndoReport = z.output<typeof UndoReportSchema>;
export type RollbackReport = z.output<typeof RollbackReportSchema>;
export type SnapshotTotals = z.output<typeof SnapshotTotalsSchema>;
export type PrepareRequest = z.output<typeof undoMethods.prepare.params>;
export type PrepareAnswer = z.output<typeof undoMethods.prepare.result>;
