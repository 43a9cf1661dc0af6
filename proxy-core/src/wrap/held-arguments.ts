/**
 * The whole arguments of a call waiting for approval, a page at a time. A ticket carries at most
 * LIMITS.argsShown characters of them (the broker and the journal keep no more), so a person who must see what
 * will be sent before allowing it asks for the rest through the broker, and the wrapper, which holds the call,
 * serves it from the same JSON text it will send (the call's arguments, serialised once while it is held).
 */
import { IpcError } from '../ipc/channel.js';
import { isObject } from '../jsonrpc/messages.js';
import type { Call } from './call.js';

/** Characters per page: a page is one IPC message, well under the socket's line limit. */
export const HELD_ARGUMENTS_PAGE = 256 * 1024;

export interface HeldArgumentsPage {
  text: string;
  offset: number;
  /** Characters of the whole JSON text. */
  total: number;
  /** sha256 of the arguments' canonical JSON: the ticket's `argsSha256`. */
  argsSha256: string;
}

const texts = new WeakMap<Call, string>();

/** One page of the arguments of `call` (found by the broker's call id), from `offset`. */
export function heldArgumentsPage(find: (callId: string) => Call | undefined, params: unknown): HeldArgumentsPage {
  if (!isObject(params) || typeof params.callId !== 'string') throw new IpcError('bad-request', 'held arguments need a callId');
  const offset = params.offset ?? 0;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) throw new IpcError('bad-request', 'offset must be a whole number ≥ 0');
  const call = find(params.callId);
  if (!call || call.state !== 'asking') {
    throw new IpcError('not-found', 'this wrapper no longer holds the call (its client stopped waiting): the arguments come again with its repeat');
  }
  let text = texts.get(call);
  if (text === undefined) {
    text = JSON.stringify(call.args ?? {});
    texts.set(call, text);
  }
  if (offset > text.length) throw new IpcError('bad-request', `offset ${offset} is past the end (${text.length} characters)`);
  let end = Math.min(text.length, offset + HELD_ARGUMENTS_PAGE);
  // never split a surrogate pair between two pages
  const last = text.charCodeAt(end - 1);
  if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { text: text.slice(offset, end), offset, total: text.length, argsSha256: call.argsSha256() };
}
