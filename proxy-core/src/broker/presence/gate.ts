/**
 * The presence step of the dispatch chain (api/dispatch.ts): after a call's params are checked, its rights are
 * worked out from its declaration (read, tighten, loosen; a wrapper's report), and a loosening call is let
 * through only by the presence check (presence.ts). The call's attribution (`via`) is what its handler records.
 * A wrapper's own methods pass straight on: they loosen nothing, and they are the hot path.
 */
import { type AnyMethod, rightsOf } from '../../protocol/method.js';
import type { Proof, RightsLookup, Via } from '../../protocol/presence.js';
import type { FrontEnd, Presence } from './presence.js';

/** What the step reads and sets of a call (the dispatch chain's `Call` is one). */
export interface GatedCall {
  readonly caller: 'user' | 'wrapper';
  readonly context: { readonly frontEnd: FrontEnd };
  readonly bound?: { readonly decl: AnyMethod };
  readonly checked?: unknown;
  readonly presence?: Proof;
  via?: Via;
}

export function presenceGate(presence: Presence, state: RightsLookup): (call: GatedCall, next: () => unknown) => unknown {
  return (call, next) => {
    if (call.caller === 'wrapper') return next();
    const decl = call.bound!.decl;
    const frontEnd = call.context.frontEnd;
    if (rightsOf(decl, call.checked, state) !== 'loosen') {
      call.via = presence.plain(frontEnd);
      return next();
    }
    const method = decl.name;
    // what it allows, worked out before it runs (an approved ticket is gone afterwards)
    const statement = presence.statement(method, call.checked);
    const run = (via: Via): unknown => {
      call.via = via;
      const out = next();
      const done = () => presence.o.record('loosened', null, null, { method, statement, via });
      if (out instanceof Promise) return out.then((r: unknown) => (done(), r));
      done();
      return out;
    };
    const via = presence.admit(method, call.checked, call.presence, frontEnd, method === 'presence.confirm');
    return via instanceof Promise ? via.then(run) : run(via);
  };
}
