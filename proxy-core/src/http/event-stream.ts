/**
 * The broker's event stream over HTTP, as Server-Sent Events: one stream per reader, from the sequence number it
 * asks for, with a comment every `pingMs` so that the browser and anything between keep an idle stream open. A
 * reader that does not read is let go by the bus once its unsent bytes pass `maxBacklog` (it comes back with
 * Last-Event-ID). Each stream belongs to the UI session that opened it: signing out ends that session's streams,
 * and a host that stops ends them all, each with an `ended` event that says why.
 */
import type { ServerResponse } from 'node:http';
import type { Broker } from '../broker/broker.js';
import type { BrokerEvent } from '../protocol/api.js';
import type { SessionRecord } from './sessions.js';

export interface EventStreamsOptions {
  broker: Pick<Broker, 'subscribe' | 'unsubscribe'>;
  pingMs: number;
  maxBacklog: number;
}

export class EventStreams {
  /** Each open stream's end, with the session it belongs to. */
  private readonly open = new Map<(reason: string) => void, SessionRecord>();

  constructor(private readonly o: EventStreamsOptions) {}

  /** Stream the broker's events after `since` to `res`, for `session`. */
  serve(res: ServerResponse, since: number, session: SessionRecord): void {
    const { broker } = this.o;
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    res.write(': airlock events\n\n');
    let open = true;
    let subscription: string | null = null;
    const end = (reason?: string): void => {
      if (!open) return;
      open = false;
      clearInterval(ping);
      this.open.delete(end);
      if (subscription) broker.unsubscribe(subscription);
      subscription = null;
      if (reason !== undefined && !res.destroyed) {
        res.end(`event: ended\ndata: ${JSON.stringify({ ended: reason })}\n\n`);
        // a reader that does not read does not get to keep its buffer either
        setTimeout(() => res.destroy(), 5000).unref();
      } else res.end();
    };
    const ping = setInterval(() => res.write(': ping\n\n'), this.o.pingMs);
    ping.unref();
    this.open.set(end, session);
    res.on('close', () => end());
    subscription = broker.subscribe(since, {
      send: (event: BrokerEvent) => {
        if (!open || res.writableLength > this.o.maxBacklog) return false;
        res.write(`id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`);
        return true;
      },
      ended: (reason) => {
        subscription = null; // the bus has already let go of it
        end(reason);
      },
    }).subscription;
    if (!open) broker.unsubscribe(subscription);
  }

  /** End the streams of `session` (it signed out). */
  endFor(session: SessionRecord, reason: string): void {
    for (const [end, owner] of [...this.open]) if (owner === session) end(reason);
  }

  /** End every stream (the host is stopping). */
  endAll(reason: string): void {
    for (const end of [...this.open.keys()]) end(reason);
  }
}
