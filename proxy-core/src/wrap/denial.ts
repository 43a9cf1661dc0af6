/**
 * The tool result a client gets when Airlock refuses a call. A refusal is not a protocol fault, so it is a
 * result with isError: true (the model can read it and tell the user), never a JSON-RPC error.
 *
 * Some clients show the person nothing of an isError result but that the tool "reported an error" (gemini-cli
 * displays `Error: MCP tool 'NAME' reported an error.` and hands the text to the model only). So each text
 * says who refused and why in its first sentence, and ends asking the model to pass the reason on: the
 * person learns it even where the client shows little.
 */
import type { Verdict } from '../classify/classify.js';
import { START_HINT } from '../ipc/connect.js';
import type { DecidedBy } from '../policy/decide.js';

export const DECISION_META_KEY = 'airlock/decision';

export interface DenialInput {
  decidedBy: DecidedBy;
  reason: string;
  tool: string;
  server: string;
  verdict: Verdict;
  ticketId?: string | undefined;
  /** The call had already been sent to the server when it was ended (E-Stop on a running call). */
  sent?: boolean;
}

function message(d: DenialInput): string {
  const where = `"${d.tool}" on ${d.server}`;
  const nothing = d.sent
    ? 'The call had already been sent to the server: it was told to stop, and how much of it ran is unknown.'
    : 'Nothing was sent to the server.';
  switch (d.decidedBy) {
    case 'estop':
      if (d.sent) {
        return (
          `Airlock stopped ${where}: E-Stop was pressed while it was running. ${nothing} Nothing more runs until the user ` +
          'releases E-Stop (`airlock estop off`, or the E-Stop switch in the Airlock app).'
        );
      }
      return `Airlock refused ${where}: E-Stop is on. ${nothing} The user can resume with \`airlock estop off\` (or the E-Stop switch in the Airlock app).`;
    case 'rule':
      return `Airlock refused ${where}: ${d.reason}. ${nothing} The user can review rules with \`airlock rules\`.`;
    case 'user':
      return `The user denied ${where} in Airlock (${d.reason}). ${nothing} Do not retry it unless the user asks.`;
    case 'timeout':
      return `Airlock asked the user to approve ${where}, but ${d.reason}, so it was refused. ${nothing} Ask the user to watch for the approval in Airlock, then try again.`;
    case 'broker-down':
      return `Airlock is not running, so ${where} was refused (Airlock fails closed: ${d.reason}). ${nothing} Ask the user to ${START_HINT}; the call can be retried once it runs.`;
    case 'cancelled':
      return `The call to ${where} was cancelled before it was approved. ${nothing}`;
    default:
      return `Airlock refused ${where}: ${d.reason}. ${nothing}`;
  }
}

/** The closing sentence of every refusal and "still waiting" answer (see the file's comment). */
export const RELAY_TO_USER = 'Tell the user this in your reply: their client may show only that the tool reported an error.';

export function denialResult(d: DenialInput): Record<string, unknown> {
  const decision: Record<string, unknown> = {
    decision: 'deny',
    decidedBy: d.decidedBy,
    reason: d.reason,
    class: d.verdict.class,
    reasons: d.verdict.reasons,
  };
  if (d.ticketId) decision.ticketId = d.ticketId;
  // the call reached the server before it was ended: it may have run, in part
  if (d.sent) decision.sent = true;
  return {
    content: [{ type: 'text', text: `${message(d)} ${RELAY_TO_USER}` }],
    isError: true,
    _meta: { [DECISION_META_KEY]: decision },
  };
}

export interface WaitingInput {
  tool: string;
  server: string;
  verdict: Verdict;
  ticketId?: string | undefined;
}

/**
 * The answer to a call still waiting for approval when the client would give up on it (many clients stop
 * waiting after 60 s). Not a denial: the ticket stays open, and the same call made again picks up the decision.
 */
export function waitingResult(d: WaitingInput): Record<string, unknown> {
  const ticket = d.ticketId ? ` (ticket ${d.ticketId})` : '';
  const approve = d.ticketId ? `\`airlock approve ${d.ticketId}\`` : '`airlock pending` and `airlock approve`';
  const text =
    `"${d.tool}" on ${d.server} is waiting for your approval in Airlock${ticket} — call the tool again with the same arguments ` +
    `to pick up the decision. Nothing was sent to the server yet. If the user approves (${approve}, or the Airlock app), the ` +
    `repeated call runs; if not, it gets the refusal. ${RELAY_TO_USER}`;
  const decision: Record<string, unknown> = {
    decision: 'waiting',
    decidedBy: 'waiting',
    state: 'waiting',
    reason: 'still waiting for approval; call again with the same arguments to pick up the decision',
    class: d.verdict.class,
    reasons: d.verdict.reasons,
  };
  if (d.ticketId) decision.ticketId = d.ticketId;
  return { content: [{ type: 'text', text }], isError: true, _meta: { [DECISION_META_KEY]: decision } };
}

/** How an E-Stop (or any front end) ends a call: who decided, and why. */
export interface Denial {
  decidedBy: DecidedBy;
  reason: string;
}
