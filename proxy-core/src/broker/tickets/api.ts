/**
 * The tickets' methods: a wrapper's ask (answered at once by E-Stop or a full disk, or held as a ticket), and
 * what a front end does with held calls — list them, approve one (once, for the session, or always, then
 * scoped by argument conditions or to calls Airlock can undo), deny one, preview what it would write, read its
 * whole arguments.
 */
import { IpcError } from '../../ipc/channel.js';
import { literalGlob } from '../../policy/glob.js';
import type { AskAnswer, CheckedParamsOf, ResultOf, Ticket, WrapperParamsOf } from '../../protocol/api.js';
import { approve, ask, deny, pending, preview, ticketArguments } from '../../protocol/methods/tickets.js';
import { BrokerToWrapper } from '../../protocol/names.js';
import { describeOrigin, describeVia, type Via } from '../../protocol/presence.js';
import { type Bind, inSession } from '../api/handlers.js';
import { DISK_FULL_REASON } from '../journal-safety.js';
import type { EstopSwitch } from '../estop.js';
import type { RuleBook } from '../rule-book.js';
import type { FileTools } from '../undo/file-tools.js';
import type { MatchEnv } from '../../policy/arg-conditions.js';
import type { Clock } from '../../util/clock.js';
import type { JournalSafety } from '../journal-safety.js';
import type { Session, Sessions } from '../sessions.js';
import { bad, checkArgConditions, toolClass } from '../validate.js';
import { grantFields, grantReason } from '../../policy/grants.js';
import { ruleMatches, rulesForSession } from '../../policy/rules.js';
import { heldArguments, requireArgumentsSeen } from './held-arguments.js';
import { previewCall } from './preview.js';
import { newTicketId, type Tickets } from './tickets.js';

/**
 * What of the broker the tickets' methods reach, named here so the room depends on the parts it uses and not on
 * the facade that holds them all (the Broker is one of these).
 */
export interface TicketsApiParts {
  readonly tickets: Tickets;
  readonly sessions: Sessions;
  readonly safety: JournalSafety;
  readonly estop: Pick<EstopSwitch, 'on'>;
  readonly ruleBook: Pick<RuleBook, 'insert' | 'spend' | 'list'>;
  readonly fileTools: Pick<FileTools, 'get'>;
  readonly matchEnv: MatchEnv;
  readonly clock: Pick<Clock, 'now'>;
}

export function bindTickets(on: Bind, b: TicketsApiParts): void {
  on(ask, inSession((session, p) => askCall(b, session, p)));
  on(pending, () => b.tickets.pending());
  on(approve, (p, _call, via) => approveTicket(b, p, via));
  on(deny, (p, _call, via) => denyTicket(b, p.id, p.reason, via));
  // what approving a held call would do to the file it writes (preview.ts)
  on(preview, (p) => {
    const { ticket, session } = b.tickets.require(p.id);
    return previewCall({ ticket, fileTool: b.fileTools.get(ticket.server, ticket.tool), cwd: session.cwd, command: session.info.command, env: b.matchEnv });
  });
  // a page of a held call's whole arguments, from the wrapper that holds it (held-arguments.ts)
  on(ticketArguments, (p) => heldArguments(b.tickets.require(p.id), p.offset, (sessionId, params) => b.sessions.request(sessionId, BrokerToWrapper.heldArguments, params, 10_000)));
}

function askCall(b: TicketsApiParts, session: Session, p: WrapperParamsOf<'call.ask'>): Promise<AskAnswer> {
  if (b.estop.on) return Promise.resolve({ decision: 'deny', decidedBy: 'estop', ticketId: newTicketId(), reason: 'E-Stop is on' });
  if (b.safety.disk.full) return Promise.resolve({ decision: 'deny', decidedBy: 'error', ticketId: newTicketId(), reason: DISK_FULL_REASON });
  if (p.grant !== undefined) {
    const spent = spendGrant(b, session, p);
    if (spent) return Promise.resolve(spent);
  }
  return b.tickets.ask(session, p);
}

/**
 * A call the wrapper found a counted grant for: spend one of its calls and allow it at once, when the grant is
 * in force, applies to this session and matches the call as the broker reads it (a call whose arguments were
 * cut matches no conditions). Otherwise (its last call went to a racing wrapper) the call is held as usual.
 */
function spendGrant(b: TicketsApiParts, session: Session, p: WrapperParamsOf<'call.ask'>): AskAnswer | null {
  const rule = b.ruleBook.list().find((r) => r.id === p.grant);
  if (!rule || rule.calls === undefined) return null;
  const args = !p.argsTruncated && isObject(p.arguments) ? p.arguments : undefined;
  const subject = { server: session.info.server, client: session.info.client, tool: p.tool, toolClass: toolClass(p.class), args: args ?? {} };
  if (!rulesForSession([rule], session.info.server, session.info.client).length) return null;
  if (rule.args?.length && args === undefined) return null;
  if (!ruleMatches(rule, subject, b.matchEnv)) return null;
  const spent = b.ruleBook.spend(rule.id);
  if (!spent) return null;
  return { decision: 'allow', decidedBy: 'rule', ticketId: newTicketId(), reason: grantReason(spent.rule, b.clock.now()) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Approve a held call; `always` adds an allow rule, scoped to calls whose arguments meet `args` when given. */
/** A decision made in-process (a test, a host with no front end): said as such, never as "by you". */
export const IN_PROCESS: Via = { channel: 'in-process', proof: 'none' };

export async function approveTicket(b: TicketsApiParts, p: CheckedParamsOf<'approve'>, via: Via = IN_PROCESS): Promise<ResultOf<'approve'>> {
  const { id, remember, args, undoable, argsSeen, grant } = p;
  if (args !== undefined && remember !== 'always') throw bad('argument conditions scope an "always" approval: give remember "always" with them');
  if (grant !== undefined && remember !== 'always') throw bad('a grant (a time, a number of calls) is an allow rule that ends: give remember "always" with it');
  const ends = grant === undefined ? {} : grantFields(grant, b.clock.now());
  if ('error' in ends) throw bad(ends.error);
  if (undoable && remember !== 'always') throw bad('"only calls Airlock can undo" scopes an "always" approval: give remember "always" with it');
  checkArgConditions(args);
  const open = b.tickets.require(id);
  requireArgumentsSeen(open.ticket, argsSeen);
  // the call could not be journaled: an approval now would let it run unrecorded
  if (b.safety.disk.full) throw new IpcError('disk-full', DISK_FULL_REASON);
  const { session, ticket } = open;
  if (remember === 'session') {
    session.sessionAllows.add(ticket.tool);
    await b.sessions.push((s) => s === session);
  } else if (remember === 'always') {
    const server = exactName(ticket.server);
    const tool = exactName(ticket.tool);
    b.ruleBook.insert({ action: 'allow', server, tool, ...(args?.length ? { args } : {}), ...(undoable ? { undoable } : {}), ...ends, note: `from ticket ${ticket.id}` }, via);
    await b.sessions.push();
  }
  // E-Stop may have been pressed while the push was in flight; it wins.
  if (!b.tickets.has(id)) throw new IpcError('not-pending', `ticket ${id} ended while it was being approved`);
  b.tickets.end(open, { decision: 'allow', decidedBy: 'user', ticketId: id, reason: `approved ${describeVia(via, b.clock.now())}`, remember }, 'approved', remember);
  return { ok: true, ticket, remember };
}

export function denyTicket(b: TicketsApiParts, id: string, reason?: string, via: Via = IN_PROCESS): { ok: true; ticket: Ticket } {
  const open = b.tickets.require(id);
  // denying is open to every front end, the agent's shell too: it says where it came from, not who
  const from = `denied from ${describeOrigin(via)}`;
  const text = reason ? `${from}: ${reason}` : from;
  b.tickets.end(open, { decision: 'deny', decidedBy: 'user', ticketId: id, reason: text }, 'denied', null);
  return { ok: true, ticket: open.ticket };
}

/** A rule glob that matches exactly this name; a name it cannot spell exactly is refused, not widened. */
function exactName(name: string): string {
  try {
    return literalGlob(name);
  } catch (err) {
    throw bad((err as Error).message);
  }
}
