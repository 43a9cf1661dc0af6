/**
 * What the broker knows of each server's tools: the catalog a front end reads (with the rules, file tools and
 * pins that bear on each tool), the tools a wrapper reports and the evidence it observes, pinned definitions,
 * and the tools declared to write files.
 */
import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { method, QUICK_MS } from '../method.js';
import { UserMethod, WrapperMethod } from '../names.js';
import { Empty, ms, Ok, PinChangeSchema, RuleSchema, text } from '../shapes.js';

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


export const catalog = method({ name: UserMethod.catalog, role: 'user', rights: 'read', params: z.object({ server: text(LIMITS.name) }).strict(), result: z.array(CatalogToolSchema), wait: QUICK_MS });

/** A wrapper's listing of its server's tools (their verdicts) and what it found wrong with them. */
export const catalogUpdate = method({
  name: WrapperMethod.catalogUpdate,
  role: 'wrapper',
  rights: 'report',
  params: z.object({ verdicts: z.array(z.unknown()).max(100_000).default([]), problems: z.array(z.unknown()).max(1000).default([]) }),
  result: Ok,
  // the wrapper does not wait on it: its calls go on being asked for meanwhile
  wait: QUICK_MS,
});

/** Evidence a wrapper saw against a tool's read-only claim. */
export const observed = method({
  name: WrapperMethod.observed,
  role: 'wrapper',
  rights: 'report',
  params: z.object({ contradictions: z.array(z.object({ tool: z.string().max(LIMITS.toolName), evidence: z.string() })).max(10_000) }),
  result: Ok,
  // the wrapper does not wait on it
  wait: QUICK_MS,
});

/** Pinned tool definitions, of one server or all; changed ones first. */
export const pinsList = method({ name: UserMethod.pinsList, role: 'user', rights: 'read', params: z.object({ server: text(LIMITS.name).optional() }).strict(), result: z.array(PinInfoSchema), wait: QUICK_MS });

/**
 * Accept the definitions a server lists now in place of the pinned ones (every changed tool, or one); the
 * hold is lifted in every wrapper of the server before this answers. With `fingerprint`, only if the tool's
 * new definition is still that one (what the person looked at).
 */
export const pinsAccept = method({
  name: UserMethod.pinsAccept,
  role: 'user',
  rights: 'loosen',
  params: z.object({ server: text(LIMITS.name), tool: text(LIMITS.toolName).optional(), fingerprint: z.string().regex(/^[0-9a-f]{64}$/).optional() }).strict(),
  result: z.object({ accepted: z.array(PinInfoSchema) }),
  wait: QUICK_MS,
});

export const fileToolsList = method({ name: UserMethod.fileToolsList, role: 'user', rights: 'read', params: Empty, result: z.array(FileToolSchema), wait: QUICK_MS });
export const fileToolsSet = method({ name: UserMethod.fileToolsSet, role: 'user', rights: 'loosen', params: FileToolSchema.omit({ builtIn: true }).strict(), result: FileToolSchema, wait: QUICK_MS });
export const fileToolsRemove = method({
  name: UserMethod.fileToolsRemove,
  role: 'user',
  rights: 'loosen',
  params: z.object({ server: text(LIMITS.name), tool: text(LIMITS.toolName) }).strict(),
  result: Ok,
  wait: QUICK_MS,
});

export const catalogMethods = [catalog, catalogUpdate, observed, pinsList, pinsAccept, fileToolsList, fileToolsSet, fileToolsRemove] as const;
