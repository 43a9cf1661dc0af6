/**
 * A request of the client's that the server was sent (any but tools/call, which is the pipeline's): its entry in
 * the in-flight table, and what the wrapper learns from the answer before the client gets it: a tools/list page
 * is evidence about the tools (and is annotated with what Airlock will do), an initialize says what the server
 * can do (and is kept for a restart), a tasks/* answer tells how a task stands.
 */
import { frame, idKey, isObject, type JsonRpcId, type Message } from '../jsonrpc/messages.js';
import type { BrokerLinkLike } from './broker-link.js';
import type { InFlight, Responder } from './in-flight.js';
import { PageBytes } from './page-bytes.js';
import type { InitCapture } from './restart.js';
import { BROKER_START_WAIT_MS, brokerDownAnswer, untilBrokerUp } from './session-start.js';
import type { TaskBook } from './tasks.js';
import type { ToolVerdicts } from './verdicts.js';

const LIST_WAIT_FOR_BROKER_MS = 1000;
const START_HINT_SHORT = 'start it with `airlock daemon` or the Airlock app';

export interface ClientAnswerContext {
  verdicts(): ToolVerdicts;
  tasks(): TaskBook;
  init: InitCapture;
  /** The server's name (as the client's config names it). */
  server(): string;
  link(): BrokerLinkLike;
  log(msg: string): void;
  /** A message of the wrapper's own (framed). */
  toClient(data: string | Buffer): void;
  /** The server's own bytes. */
  relayToClient(raw: Buffer): void;
  /** The server answered the client's server/discover (what the connection's era waits on: connection-era.ts). */
  discovered(m: Message): void;
}

/**
 * A line from the server that answers a client's tools/list with the very bytes, after its id, of a page the
 * wrapper's listing agreed with, while nothing has changed since, is not parsed again (true): the answer is
 * the one sent for that page, when nothing it reads has changed either, or else the page is annotated from the
 * wrapper's own parse of those bytes. Anything else is left to be read as any line (false). The page was
 * checked in full when first read (nesting, ids, every entry), and the same bytes after another id are the
 * same answer (page-bytes.ts).
 */
export function answerRepeatedListing(line: Buffer, inFlight: InFlight): boolean {
  // the common line (a call's answer) is not read for a page at all when no client listing is out
  if (!inFlight.awaitsListing) return false;
  const read = PageBytes.read(line);
  if (!read) return false;
  const key = idKey(read.id);
  const r = inFlight.get(key);
  if (!(r instanceof ClientRequest) || r.method !== 'tools/list') return false;
  const o = r.o;
  const listing = o.verdicts().listing;
  if (!listing.agrees(read.page)) return false;
  // while the broker connection is being made, the answer waits for it (`answered`)
  const answer = o.link().state === 'connecting' ? undefined : o.verdicts().answerAgain(read.page);
  if (answer) {
    inFlight.take(key);
    // as `answered`: the calls that waited behind the listing go on, the client gets its answer (no task has a
    // tools/list request's id: tasks.ts is told only of tasks/* requests)
    listing.clientListingEnded(key);
    for (const part of answer) o.toClient(part);
    return true;
  }
  const message = listing.agreedAnswer(read.page, read.id);
  if (!message) return false;
  inFlight.take(key);
  r.answered(message, line, key, read.page);
  return true;
}

export class ClientRequest implements Responder {
  constructor(
    readonly o: ClientAnswerContext,
    readonly id: JsonRpcId,
    readonly method: string,
  ) {}

  /** The server's answer `m`, read from `raw` (`page`: its page, when already read). */
  answered(m: Message, raw: Buffer, key: string = idKey(this.id), page = this.method === 'tools/list' ? PageBytes.of(m.id, raw) : undefined): void {
    const o = this.o;
    const listing = o.verdicts().listing;
    o.tasks().serverAnswered(key, m, raw);
    if (this.method === 'tools/list') {
      const result = m.result;
      const first = isObject(result) && o.link().state === 'up' ? o.verdicts().answerFirst(m, result, raw) : undefined;
      if (first !== undefined && isObject(result)) {
        // answered before the wrapper has a listing (first-page.ts): the page is read as evidence once the answer
        // has left, and the calls that wait behind it wait for that too
        listing.holdPage(page, m);
        o.toClient(first);
        o.verdicts().afterAnswerWritten(() => {
          listing.observe(result.tools, page, m);
          listing.forgetObserved();
          listing.clientListingEnded(key);
        });
        return;
      }
      // the page is evidence first (a declaration that differs makes our listing stale), then the calls
      // that waited behind it are decided
      if (isObject(result)) listing.observe(result.tools, page, m);
      listing.clientListingEnded(key);
      if (!isObject(result)) return o.relayToClient(raw);
      const send = () => o.toClient(o.verdicts().answer(m, result, page));
      // What readOnlyHint says depends on the broker's policy: give a connection in progress a moment
      // rather than tell the client "asks" for everything and take it back with list_changed.
      if (o.link().state === 'connecting') return void o.link().ensureUp(LIST_WAIT_FOR_BROKER_MS).then(send);
      return send();
    }
    if (this.method === 'server/discover') o.discovered(m);
    if (this.method === 'initialize') {
      o.init.serverAnswered(key, m);
      const caps = isObject(m.result) ? m.result.capabilities : undefined;
      listing.allowListing();
      if (!isObject(caps) || caps.tools === undefined) o.log('airlock: the server does not declare the tools capability');
      // a session begun while Airlock is down would look healthy and refuse every call (session-start.ts)
      if (m.error === undefined && o.link().state !== 'up') {
        return void untilBrokerUp(o.link(), BROKER_START_WAIT_MS).then((up) => {
          if (up) return o.relayToClient(raw);
          o.log(`airlock: Airlock is not running: the client's initialize was refused (${START_HINT_SHORT})`);
          o.toClient(frame(brokerDownAnswer(this.id, o.server())));
        });
      }
    }
    o.relayToClient(raw);
  }
}
