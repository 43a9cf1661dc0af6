/**
 * The broker and its connections: its status, a wrapper's session, asking one wrapper something through the
 * broker, and a sign-in link of the UI host.
 */
import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { method, QUICK_MS } from '../method.js';
import { UserMethod, WrapperMethod } from '../names.js';
import { BrokerStatusSchema, Empty, PolicySnapshotSchema, text } from '../shapes.js';
import { InverseDeclSchema } from '../undo-api.js';

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

export const status = method({ name: UserMethod.status, role: 'user', rights: 'read', params: Empty, result: BrokerStatusSchema, wait: QUICK_MS });

/** A wrapper's first request: who it is; the answer is its session and the policy it applies from now on. */
export const sessionOpen = method({
  name: WrapperMethod.sessionOpen,
  role: 'wrapper',
  rights: 'report',
  params: SessionOpenSchema,
  result: z.object({ sessionId: z.string(), policy: PolicySnapshotSchema, ticketTimeoutSeconds: z.number().optional() }),
  wait: 5000,
});

export const wrapperRequest = method({
  name: UserMethod.wrapperRequest,
  role: 'user',
  rights: 'read',
  /** Ask one connected wrapper something through the broker (its status today; an inverse call later). */
  params: z.object({ sessionId: text(64), method: z.literal('wrapper.status') }).strict(),
  result: z.object({ sessionId: z.string(), answer: z.unknown() }),
  wait: QUICK_MS,
});

/** A fresh sign-in link of the UI host (single-use, short-lived); bad-state when the broker serves no UI. */
export const uiLink = method({ name: UserMethod.uiLink, role: 'user', rights: 'read', params: Empty, result: z.object({ url: z.string() }), wait: QUICK_MS });

/** The tools approved "for this session" in each connected wrapper: listed beside the rules, each revocable. */
export const sessionAllows = method({
  name: UserMethod.sessionAllows,
  role: 'user',
  rights: 'read',
  params: Empty,
  result: z.array(z.object({ sessionId: z.string(), client: z.string(), server: z.string(), tool: z.string() })),
  wait: QUICK_MS,
});

/** End a session approval: the tool asks again in that session from its next call (it only tightens). */
export const sessionRevoke = method({
  name: UserMethod.sessionRevoke,
  role: 'user',
  rights: 'tighten',
  params: z.object({ sessionId: text(64), tool: text(LIMITS.toolName) }).strict(),
  result: z.object({ ok: z.literal(true), revoked: z.boolean() }),
  wait: QUICK_MS,
});

export const sessionMethods = [status, sessionOpen, wrapperRequest, uiLink, sessionAllows, sessionRevoke] as const;
