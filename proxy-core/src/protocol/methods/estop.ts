/** E-Stop, and the tripwire's places for changing calls that a wrapper asks for (broker/tripwire-budget.ts). */
import { z } from 'zod';
import { method, QUICK_MS } from '../method.js';
import { UserMethod, WrapperMethod } from '../names.js';

export const estop = method({ name: UserMethod.estop, role: 'user', rights: (p) => (p.on ? 'tighten' : 'loosen'), params: z.object({ on: z.boolean() }).strict(), result: z.object({ estop: z.boolean() }), wait: QUICK_MS });

export const budget = method({
  name: WrapperMethod.budget,
  role: 'wrapper',
  rights: 'report',
  params: z.object({ used: z.number().int().min(0).max(1_000_000), want: z.number().int().min(0).max(10_000), waiting: z.boolean() }),
  result: z.object({ granted: z.number().int().min(0), refused: z.enum(['estop', 'busy']).optional() }),
  wait: 10_000,
});

export const estopMethods = [estop, budget] as const;
