/**
 * The deciding step of a tools/call: classify ▸ policy, synchronously when everything is at hand (the policy
 * the broker pushed, the tool list), waiting only for what is missing: the tool list (bounded by the catalog
 * wait) or the broker (once; a second time it is down). Whatever fails here is a denial (pipeline.ts).
 */
import { decide, definitionChanged, type PolicySnapshot } from '../policy/decide.js';
import type { Call } from './call.js';
import { retryOf } from './era.js';
import type { PipelineCore } from './pipeline-core.js';

/** Decide `call` (in `deciding`): allow, deny or ask; a continuation first checks the call is still deciding. */
export function decideCall(core: PipelineCore, call: Call): void {
  if (call.state !== 'deciding') return;
  const o = core.o;
  const down = o.unavailable();
  if (down) return core.deny(call, down.decidedBy, down.reason);
  const listing = o.verdicts.listing;
  if (!listing.ready) {
    if (!listing.canList && !o.initialized()) {
      return core.deny(call, 'error', 'the server has not been initialized yet, so its tools are unknown');
    }
    void listing.whenReady(o.timings.catalogWaitMs).then((ok) =>
      core.guarded(call, () => {
        if (ok) decideCall(core, call);
        else core.deny(call, 'error', "the server's tool list could not be read, so the call cannot be classified");
      }),
    );
    return;
  }
  const link = o.link;
  const policy = link.policy;
  if (link.state !== 'up' || !policy) {
    if (call.waitedBroker) return core.deny(call, 'broker-down', 'Airlock is not running');
    call.waitedBroker = true;
    void link.ensureUp(o.timings.brokerWaitMs).then(() => core.guarded(call, () => decideCall(core, call)));
    return;
  }
  const definition = o.verdicts.definition(call.tool);
  if (call.round) {
    // a retry is the call its first round was decided on, unless the tool's definition changed in between
    if (!definitionChanged(call.tool, definition, policy)) return continueRound(core, call, policy);
    call.round = undefined;
  }
  const verdict = o.verdicts.verdict(call.tool);
  call.verdict = verdict;
  const decision = decide({ server: o.server, client: o.client, tool: call.tool, toolClass: verdict.class, args: call.args, definition }, policy, undefined, o.clock.now());
  if (decision.action === 'allow') core.allow(call, decision.decidedBy, decision.reason);
  else if (decision.action === 'deny') core.deny(call, decision.decidedBy, decision.reason);
  else {
    call.grant = decision.grant;
    core.ask(call, withRetryNote(call, decision.reason));
  }
}

/** A retry of a call the server asked input for: decided with the first round, unless E-Stop is on. */
function continueRound(core: PipelineCore, call: Call, policy: PolicySnapshot): void {
  if (policy.estop) return core.deny(call, 'estop', 'E-Stop is on: every tool call is refused');
  const round = call.round!;
  call.verdict = round.first.verdict;
  core.allow(call, round.decidedBy, call.detail);
}

/** What the card says of a call that answers input requests of a round this wrapper did not see (or forgot). */
function withRetryNote(call: Call, reason: string): string {
  const retry = retryOf(call.message.params);
  if (!retry) return reason;
  const keys = retry.shown.length > 0 ? ` (${retry.shown.join(', ')})` : '';
  return `${reason}; it carries answers to input the server asked for${keys}, in a round Airlock has no record of, so it is asked as a new call`;
}
