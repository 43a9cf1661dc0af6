/**
 * The broker's live event stream. Every event is a row of the events table first (its seq orders the stream),
 * then published. A subscriber that says `since` gets every stored event after it, read from the database in
 * pages, and then the live ones; the switch to live happens in the same tick as the last page is read, and a
 * database commit and its publish happen in one tick too, so there is no gap and no duplicate.
 */
import { randomBytes } from 'node:crypto';
import type { BrokerEvent } from '../protocol/api.js';
import type { EventDetails, EventType } from '../protocol/events.js';

/** Store an event and publish it to subscribers (journal-safety.ts keeps it while the disk refuses). */
export type RecordEvent = <K extends EventType>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]) => BrokerEvent;

export interface EventSource {
  eventsSince(seq: number, limit: number): BrokerEvent[];
}

export interface Subscriber {
  /** Deliver one event; false when the subscriber cannot keep up (it is then dropped and told why). */
  send(event: BrokerEvent): boolean;
  /** The subscription ended from this side (slow consumer, broker stopping). */
  ended(reason: string): void;
}

const PAGE = 500;

interface Subscription {
  id: string;
  last: number;
  live: boolean;
  subscriber: Subscriber;
}

export class EventBus {
  private readonly subs = new Map<string, Subscription>();

  constructor(private readonly source: EventSource) {}

  /** Start a subscription; catching up runs in later ticks, so a long history never blocks the broker. */
  subscribe(since: number, subscriber: Subscriber): string {
    // random, so one front end cannot end another's stream by guessing its id
    const id = `s-${randomBytes(12).toString('base64url')}`;
    const sub: Subscription = { id, last: since, live: false, subscriber };
    this.subs.set(id, sub);
    setImmediate(() => this.catchUp(sub));
    return id;
  }

  unsubscribe(id: string): boolean {
    return this.subs.delete(id);
  }

  /** Publish events that were just committed (in seq order). */
  publish(events: readonly BrokerEvent[]): void {
    if (this.subs.size === 0) return;
    for (const sub of this.subs.values()) {
      if (!sub.live) continue; // still reading the database: it will find these there
      for (const e of events) {
        if (e.seq <= sub.last) continue;
        if (!this.deliver(sub, e)) break;
      }
    }
  }

  /** End every subscription (the broker is stopping). */
  close(reason: string): void {
    for (const sub of this.subs.values()) sub.subscriber.ended(reason);
    this.subs.clear();
  }

  get size(): number {
    return this.subs.size;
  }

  private catchUp(sub: Subscription): void {
    if (!this.subs.has(sub.id)) return;
    let rows: BrokerEvent[];
    try {
      rows = this.source.eventsSince(sub.last, PAGE);
    } catch (err) {
      this.drop(sub, `the event history could not be read: ${(err as Error).message}`);
      return;
    }
    for (const e of rows) if (!this.deliver(sub, e)) return;
    if (rows.length === PAGE) setImmediate(() => this.catchUp(sub));
    else sub.live = true;
  }

  private deliver(sub: Subscription, e: BrokerEvent): boolean {
    let sent: boolean;
    try {
      sent = sub.subscriber.send(e);
    } catch {
      // an event its reader cannot be sent (a detail read back from the database nested past what JSON.stringify
      // can walk) is passed over; this runs in a turn of its own, where a throw would end the broker
      sent = true;
    }
    if (!sent) {
      this.drop(sub, `too slow: events were not read (subscribe again with since=${sub.last})`);
      return false;
    }
    sub.last = e.seq;
    return true;
  }

  private drop(sub: Subscription, reason: string): void {
    this.subs.delete(sub.id);
    sub.subscriber.ended(reason);
  }
}
