/**
 * One method of the broker's protocol, declared once: its name, who may call it, the schemas of its parameters
 * and of its result, and how long a front end waits for its answer. The declarations are grouped by feature
 * (methods/*.ts) and gathered in api.ts; the broker binds one handler to each (broker/api/handlers.ts), and every
 * front end's client takes its wait from the same entry (ipc/client.ts). A wrapper loads no zod, so it keeps its
 * own copy of its methods' waits (wrap/broker-link.ts); their entries say the same. Each entry also says what
 * its call may change (`rights`, presence.ts): no method can be added without saying whether it loosens.
 */
import type { z } from 'zod';
import type { Rights, RightsLookup } from './presence.js';

/** Who may call a method: a person's front end (the CLI, a UI, the app), a wrapper, or either. */
export type MethodRole = 'user' | 'wrapper' | 'both';

/**
 * How long a caller waits for the answer, in ms: a fixed time, one computed from the (checked) params (a
 * check-up runs as long as it is asked to), or one that counts the broker's ticket timeout (an undo may call an
 * inverse that is held as a ticket first).
 */
export type Wait<P> = number | ((params: P) => number) | { readonly ticket: (ticketTimeoutMs: number) => number };

export interface MethodDecl<N extends string = string, R extends MethodRole = MethodRole, P extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  readonly name: N;
  readonly role: R;
  readonly params: P;
  readonly result: O;
  readonly wait: Wait<z.output<P>>;
  /**
   * What a call may change: read, tighten, loosen (needs a presence proof), or a wrapper's report; a function
   * when the direction depends on the params (E-Stop on or off) or on the broker's state (the rule removed).
   */
  readonly rights: Rights | ((params: z.output<P>, state: RightsLookup) => Rights);
}

/** Any declared method (what a table of them holds: `any`, as a wait computed from one method's params takes no other). */
export type AnyMethod = MethodDecl<string, MethodRole, any, any>;

/** Declare a method (keeps its name and role as literal types). */
export function method<const N extends string, const R extends MethodRole, P extends z.ZodType, O extends z.ZodType>(decl: MethodDecl<N, R, P, O>): MethodDecl<N, R, P, O> {
  return decl;
}

/** What most methods take: an answer from the broker's own state. */
export const QUICK_MS = 15_000;

/** Whether working out the wait needs the broker's ticket timeout (a front end asks `status` for it first). */
export function waitsOnTicket(decl: AnyMethod): boolean {
  return typeof decl.wait === 'object';
}

/** The wait for one call of `decl` with these (checked) params; `ticketTimeoutMs` is needed when `waitsOnTicket`. */
export function waitMs(decl: AnyMethod, params: unknown, ticketTimeoutMs = 0): number {
  const wait = decl.wait as Wait<unknown>;
  if (typeof wait === 'number') return wait;
  if (typeof wait === 'function') return wait(params);
  return wait.ticket(ticketTimeoutMs);
}

/** What one call of `decl` with these (checked) params may change. */
export function rightsOf(decl: AnyMethod, params: unknown, state: RightsLookup): Rights {
  const r = decl.rights as Rights | ((p: unknown, s: RightsLookup) => Rights);
  return typeof r === 'function' ? r(params, state) : r;
}

/** Index declarations by their name: the table the broker dispatches on and front ends check against. */
export function byName<const T extends readonly AnyMethod[]>(list: T): { readonly [D in T[number] as D['name']]: D } {
  const out: Record<string, AnyMethod> = {};
  for (const d of list) {
    if (Object.hasOwn(out, d.name)) throw new Error(`method ${d.name} is declared twice`);
    out[d.name] = d;
  }
  return out as { readonly [D in T[number] as D['name']]: D };
}
