/**
 * How one request reaches its handler: a chain of steps in the manner of Hono's `compose`, each doing one thing
 * and handing on with `next()` — errors turned into the protocol's (in one place), the method looked up and the
 * caller's role checked against its declaration, the params checked against its schema, the handler run. A
 * refusal is thrown and travels back through the chain; the channel answers it as an error frame.
 */
import { IpcError } from '../../ipc/channel.js';
import { QUICK_MS } from '../../protocol/method.js';
import { type Proof, ProofSchema, type RightsLookup, type Via } from '../../protocol/presence.js';
import type { JournalSafety } from '../journal-safety.js';
import { presenceGate } from '../presence/gate.js';
import type { Presence } from '../presence/presence.js';
import { bad, schemaMessage } from '../validate.js';
import type { Bound, CallContext, Handlers } from './handlers.js';

/** Who is calling: a person's front end (the CLI, a UI, the app) or a wrapper. */
export type Caller = 'user' | 'wrapper';

export interface Call {
  readonly method: string;
  readonly params: unknown;
  readonly caller: Caller;
  readonly context: CallContext;
  /** Set by `resolve`: the method's declaration and handler. */
  bound?: Bound;
  /** Set by `checkParams`: the params as the schema gives them (defaults filled in). */
  checked?: unknown;
  /** Set by `checkParams`: the presence proof the params carried (`presence`, taken off them). */
  presence?: Proof;
  /** Set by the presence step: how the call is attributed (channel, process, proof). */
  via?: Via;
}

export type Middleware = (call: Call, next: () => unknown) => unknown;

/** One function that runs the steps in order; each may stop the call, or change what it returns or throws. */
export function compose(chain: readonly Middleware[]): (call: Call) => unknown {
  return (call) => {
    let last = -1;
    const step = (i: number): unknown => {
      if (i <= last) throw new Error('next() called twice');
      last = i;
      const mw = chain[i];
      return mw ? mw(call, () => step(i + 1)) : undefined;
    };
    return step(0);
  };
}

/** A write the disk refused becomes the protocol's `disk-full` (journal-safety.ts), thrown or rejected. */
export function diskErrors(safety: Pick<JournalSafety, 'translate'>): Middleware {
  return (_call, next) => safety.translate(next);
}

/** The method must be declared (and bound), and its declaration must let this caller call it. */
export function resolve(handlers: Handlers): Middleware {
  return (call, next) => {
    const bound = handlers.get(call.method);
    if (!bound) throw new IpcError('unknown-method', `unknown method ${call.method}`);
    const role = bound.decl.role;
    if (role !== 'both' && role !== call.caller) {
      throw new IpcError('forbidden', role === 'wrapper' ? `${call.method} is for wrappers, not for a front end` : `${call.method} is for a person's front end, not for a wrapper`);
    }
    call.bound = bound;
    return next();
  };
}

/**
 * The params must meet the method's schema; the handler gets what the schema gives (defaults filled in). A
 * presence proof rides beside them as `presence` (any method's params may carry one): taken off and checked on
 * its own, so no method's schema has to know of it.
 */
export const checkParams: Middleware = (call, next) => {
  let params = call.params ?? {};
  if (typeof params === 'object' && params !== null && !Array.isArray(params) && Object.hasOwn(params, 'presence')) {
    const { presence, ...rest } = params as Record<string, unknown>;
    const proof = ProofSchema.safeParse(presence);
    if (!proof.success) throw bad(`${call.method}: presence: ${schemaMessage(proof.error)}`);
    call.presence = proof.data;
    params = rest;
  }
  const parsed = call.bound!.decl.params.safeParse(params);
  if (!parsed.success) throw bad(`${call.method}: ${schemaMessage(parsed.error)}`);
  call.checked = parsed.data;
  return next();
};

export const runHandler: Middleware = (call) => call.bound!.run(call.checked, call.context, call.via!);

/**
 * Requests whose answer is still to come from the broker's own work (a call's snapshot, an approval's push),
 * counted; not those that wait on something else by design (a ticket for a person, an OS sign-in, a long
 * check-up: a wait that is not a number, or past QUICK_MS), which would keep the count up for minutes.
 */
export function counted(inFlight: { n: number }): Middleware {
  return (call, next) => {
    const wait = call.bound?.decl.wait;
    if (typeof wait !== 'number' || wait > QUICK_MS) return next();
    inFlight.n++;
    let result: unknown;
    try {
      result = next();
    } catch (err) {
      inFlight.n--;
      throw err;
    }
    if (!(result instanceof Promise)) {
      inFlight.n--;
      return result;
    }
    return result.finally(() => inFlight.n--);
  };
}

/**
 * The chain for a request on a socket connection, and for a call from an in-process host (no disk translation, as
 * before); `busy`: whether a request of either is under way.
 */
export function dispatchers(handlers: Handlers, safety: Pick<JournalSafety, 'translate'>, presence: Presence, state: RightsLookup): { socket: (call: Call) => unknown; inProcess: (call: Call) => unknown; busy: () => boolean } {
  const inFlight = { n: 0 };
  const common = [resolve(handlers), counted(inFlight), checkParams, presenceGate(presence, state), runHandler];
  return { socket: compose([diskErrors(safety), ...common]), inProcess: compose(common), busy: () => inFlight.n > 0 };
}
