/** Rules (allow, deny, ask) and the servers whose read-only hints are trusted. */
import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { method, QUICK_MS } from '../method.js';
import { UserMethod } from '../names.js';
import { ArgConditionSchema, Empty, Ok, RuleActionSchema, RuleSchema, text } from '../shapes.js';

export const rulesList = method({ name: UserMethod.rulesList, role: 'user', rights: 'read', params: Empty, result: z.array(RuleSchema), wait: QUICK_MS });

export const rulesAdd = method({
  name: UserMethod.rulesAdd,
  role: 'user',
  rights: (p) => (p.action === 'allow' ? 'loosen' : 'tighten'),
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
  wait: QUICK_MS,
});

export const rulesRemove = method({ name: UserMethod.rulesRemove, role: 'user', rights: (p, state) => (state.ruleAction(p.id) === 'allow' ? 'tighten' : 'loosen'), params: z.object({ id: text(64) }).strict(), result: Ok, wait: QUICK_MS });

export const trustSet = method({
  name: UserMethod.trustSet,
  role: 'user',
  rights: (p) => (p.on ? 'loosen' : 'tighten'),
  params: z.object({ server: text(LIMITS.name), on: z.boolean() }).strict(),
  result: z.object({ server: z.string(), trust: z.boolean() }),
  wait: QUICK_MS,
});

export const trustList = method({ name: UserMethod.trustList, role: 'user', rights: 'read', params: Empty, result: z.array(z.string()), wait: QUICK_MS });

export const ruleMethods = [rulesList, rulesAdd, rulesRemove, trustSet, trustList] as const;
