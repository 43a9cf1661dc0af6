/** The broker's codes in the words the UI shows. */

const RESOLUTIONS: Readonly<Record<string, string>> = {
  approved: 'Allowed',
  denied: 'Denied',
  timeout: 'Timed out (denied)',
  cancelled: 'Cancelled by the client',
  abandoned: 'The client went away',
  estop: 'Refused by E-Stop',
  'broker-shutdown': 'Airlock stopped (denied)',
};

const REMEMBER: Readonly<Record<string, string>> = { once: 'once', session: 'for this session', always: 'always' };

/** How a ticket ended: "Allowed for this session", "Timed out (denied)". */
export function resolutionText(resolution: string, remember?: string | null): string {
  const base = RESOLUTIONS[resolution] ?? resolution;
  return resolution === 'approved' && remember && REMEMBER[remember] ? `${base} ${REMEMBER[remember]}` : base;
}

const DECIDED_BY: Readonly<Record<string, string>> = {
  estop: 'E-Stop',
  rule: 'a rule',
  session: 'allowed for the session',
  class: 'its class (default policy)',
  user: 'you',
  timeout: 'timeout: nobody answered',
  'broker-down': 'Airlock was not running',
  cancelled: 'the client cancelled',
  error: 'an error',
};

export function decidedByText(decidedBy: string): string {
  return DECIDED_BY[decidedBy] ?? decidedBy;
}

const OUTCOMES: Readonly<Record<string, string>> = {
  pending: 'running',
  ok: 'ok',
  'tool-error': 'tool error',
  'rpc-error': 'protocol error',
  cancelled: 'cancelled',
  unknown: 'unknown',
  'not-run': 'not run',
};

export function outcomeText(outcome: string): string {
  return OUTCOMES[outcome] ?? outcome;
}

/** "1 item" / "3 items". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
