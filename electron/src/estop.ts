/**
 * E-Stop from the app: at once, with no "are you sure?" (a brake that asks first is not a brake). The broker
 * reports it done only once every connected wrapper has applied it. When the broker's tripwire engages it by
 * itself, the app says so, and why: nobody pressed anything.
 */
import type { BrokerLink } from './broker.js';
import { type Log, messageOf } from './log.js';
import type { Notices } from './notices.js';
import type { Proofs } from './proofs.js';
import type { AppState } from './state.js';
import { tripwireNotice } from './tray-look.js';

export interface EstopDeps {
  broker: BrokerLink;
  proofs: Proofs;
  state: AppState;
  notices: Notices;
  log: Log;
}

/** Turn E-Stop to `on` (default: the other way). `quietly`: the person is looking at the result (tray menu). */
export async function setEstop(deps: EstopDeps, opts: { on?: boolean; quietly?: boolean; via: string }): Promise<void> {
  const on = opts.on ?? !deps.state.estop;
  try {
    // a brake does not wait: with no broker it says so at once. Releasing it loosens: proven (proofs.ts)
    if (on) await deps.broker.call('estop', { on }, { waitMs: 0 });
    else await deps.proofs.call('estop', { on }, { via: opts.via });
    deps.log.info(`E-Stop ${on ? 'on' : 'off'} (${opts.via})`);
    if (!opts.quietly) {
      deps.notices.say(
        on ? 'E-Stop is on' : 'E-Stop is off',
        on ? `Every tool call is refused until you turn it off (${opts.via}, or the tray).` : 'Tool calls are decided by your rules again.',
      );
    }
  } catch (err) {
    // with no broker, protected servers already refuse every call: say so rather than leave the person unsure
    deps.notices.say(
      on ? 'E-Stop could not be turned on' : 'E-Stop could not be turned off',
      `${messageOf(err)}.${deps.broker.isConnected ? '' : ' While Airlock is not running, protected servers refuse every call anyway.'}`,
    );
  }
}

/** The tripwire engaged E-Stop: a notice naming it (a person's own E-Stop is said where they pressed it). */
export function setupTripwireNotice(deps: { state: AppState; notices: Notices; openActivity: () => void }): void {
  deps.state.estopEngaged.on((cause) => {
    if (cause.by !== 'tripwire') return;
    const { title, body } = tripwireNotice(cause);
    deps.notices.say(title, body, { onClick: deps.openActivity });
  });
}
