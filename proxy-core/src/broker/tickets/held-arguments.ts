/**
 * A held call's whole arguments, for the person who must see them before allowing it. A ticket carries at
 * most LIMITS.argsShown characters of them (the broker and the journal keep no more); the rest stays in the
 * wrapper that holds the call, which serves it a page at a time (wrap/held-arguments.ts). A call whose
 * arguments were cut is not allowed until a front end says which whole arguments the person was shown: the
 * sha256 it read along with the last page, which must be the ticket's.
 */
import { IpcError } from '../../ipc/channel.js';
import { isObject } from '../../jsonrpc/messages.js';
import type { ResultOf } from '../../protocol/api.js';
import type { Ticket } from '../../protocol/api.js';
import type { OpenTicket } from './tickets.js';

/** Fetch one page from the ticket's wrapper; what the wrapper answers is checked, never passed on unread. */
export async function heldArguments(
  open: OpenTicket,
  offset: number,
  request: (sessionId: string, params: unknown) => Promise<unknown>,
): Promise<ResultOf<'ticket.arguments'>> {
  const answer = await request(open.session.info.id, { callId: open.callId, offset });
  if (!isObject(answer) || typeof answer.text !== 'string' || typeof answer.total !== 'number' || typeof answer.argsSha256 !== 'string') {
    throw new IpcError('internal', "the wrapper's answer is not a page of arguments");
  }
  const expected = open.ticket.argsSha256;
  // a wrapper that now holds other arguments under this ticket would have the person read the wrong ones
  if (expected !== undefined && answer.argsSha256 !== expected) throw new IpcError('conflict', "the wrapper holds other arguments than this ticket's: deny it");
  if (answer.total < open.ticket.argsBytes || offset + answer.text.length > answer.total) throw new IpcError('internal', "the wrapper's page does not fit the ticket's arguments");
  return { text: answer.text, offset, total: answer.total, argsSha256: answer.argsSha256 };
}

/** Refuse to allow a call whose arguments were cut unless the person was shown them whole (`argsSeen`). */
export function requireArgumentsSeen(ticket: Ticket, argsSeen: string | undefined): void {
  if (!ticket.argsTruncated) return;
  if (argsSeen !== undefined && argsSeen === ticket.argsSha256) return;
  const size = ticket.argsBytes.toLocaleString('en-US');
  throw new IpcError(
    'conflict',
    `the arguments of ticket ${ticket.id} are ${size} characters and were cut for display: read them whole before allowing the call (the card's "Show everything", or \`airlock pending ${ticket.id} --full\`)`,
  );
}
