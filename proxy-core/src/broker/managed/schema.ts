/**
 * The team policy file's shape (`/etc/airlock/policy.json` and its kin: location.ts): rules that beat the
 * user's, settings the user cannot change, servers allowed or denied by name, command or URL, and grants no one
 * may give. Unknown keys are refused: a misspelt key would otherwise be a requirement silently not enforced.
 */
import { z } from 'zod';
import { CLASS_ORDER } from '../../classify/classify.js';
import { SETTINGS, settingProblem } from '../../protocol/settings.js';

const glob = z.string().min(1).max(256);

export const ManagedRuleSchema = z
  .object({
    action: z.enum(['allow', 'deny', 'ask']),
    server: glob,
    tool: glob,
    client: glob.optional(),
    note: z.string().max(500).optional(),
  })
  .strict();

/** A server named by what identifies it; every field given must match. */
export const ServerMatchSchema = z
  .object({
    name: glob.optional(),
    /** A glob over the server's command line as the wrapper started it. */
    command: glob.optional(),
    /** A glob over a remote server's URL. */
    url: glob.optional(),
  })
  .strict()
  .refine((m) => m.name !== undefined || m.command !== undefined || m.url !== undefined, { message: 'a server match needs name, command or url' });

export const ForbiddenGrantSchema = z
  .object({
    /** What may not be remembered: "always" (a standing allow rule) or "session". */
    remember: z.enum(['always', 'session']),
    /** The classes of tool it holds for (default: every class). */
    class: z.array(z.enum(CLASS_ORDER as unknown as [string, ...string[]])).min(1).optional(),
    server: glob.optional(),
    tool: glob.optional(),
  })
  .strict();

const settingKeys = Object.keys(SETTINGS) as [keyof typeof SETTINGS, ...(keyof typeof SETTINGS)[]];

export const ManagedPolicySchema = z
  .object({
    version: z.literal(1),
    rules: z.array(ManagedRuleSchema).max(1000).default([]),
    settings: z.partialRecord(z.enum(settingKeys), z.string()).default({}),
    servers: z
      .object({
        /** When given, only servers that match one of these may run. */
        allow: z.array(ServerMatchSchema).max(1000).optional(),
        deny: z.array(ServerMatchSchema).max(1000).default([]),
      })
      .strict()
      .default({ deny: [] }),
    forbiddenGrants: z.array(ForbiddenGrantSchema).max(100).default([]),
  })
  .strict()
  .superRefine((p, ctx) => {
    for (const [key, value] of Object.entries(p.settings)) {
      const problem = settingProblem(key, value as string);
      if (problem) ctx.addIssue({ code: 'custom', path: ['settings', key], message: problem });
    }
  });

export type ManagedPolicy = z.output<typeof ManagedPolicySchema>;
