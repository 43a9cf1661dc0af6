/**
 * The broker's connections: each authenticated channel (server.ts did the hello and the handshake) gets its
 * own call context, and from then on its requests go through the dispatch chain (api/dispatch.ts) as the
 * role it proved, the heartbeat is answered, a wrapper's notifications reach its session's parts, and its
 * end closes what it held (its subscriptions, its session). A subscriber that falls too far behind is dropped.
 */
import { type Channel, rawMethod } from '../ipc/channel.js';
import { RawJournal } from '../protocol/methods/journal.js';
import { peerOf } from '../ipc/peer.js';
import { isObject } from '../jsonrpc/messages.js';
import type { BrokerEvent } from '../protocol/api.js';
import { BrokerNote, PING, type Role, WrapperMethod } from '../protocol/names.js';
import type { Call } from './api/dispatch.js';
import type { CallContext } from './api/handlers.js';
import type { Subscriber } from './events.js';
import type { Session } from './sessions.js';

const RAW_WRAPPER_METHODS = new Map([rawMethod(WrapperMethod.journal, (params) => RawJournal.of(params))]);

/** A subscriber that has fallen this far behind (bytes not yet written to its socket) is dropped. */
export const MAX_SUBSCRIBER_BACKLOG = 8 * 1024 * 1024;

export interface ConnectionDeps {
  /** Run one request (the socket's dispatch chain). */
  dispatch(call: Call): unknown;
  /** A wrapper's notification, once it has opened its session. */
  note(session: Session, method: string, params: unknown): void;
  /** The connection ended: its subscriptions and its session go with it. */
  closed(context: CallContext): void;
  /** The connection whose front-end key this is ended (its presence lease goes with it). */
  ended?(key: string): void;
}

export class Connections {
  private readonly channels = new Set<Channel>();
  private count = 0;

  constructor(private readonly o: ConnectionDeps) {}

  /** Take over an authenticated connection; what it may call depends on its role. */
  attach(channel: Channel, role: Role): void {
    const caller = role === 'wrapper' ? 'wrapper' : 'user';
    // the process at the other end, as the OS says (a wrapper's is not needed: it loosens nothing)
    const peer = caller === 'user' ? peerOf(channel.socket) : null;
    const key = `conn:${++this.count}`;
    const context: CallContext = { channel, session: null, subscriptions: new Set(), frontEnd: { kind: role === 'ui' || role === 'app' ? role : 'cli', key, peer } };
    this.channels.add(channel);
    // a wrapper's journal batches are taken in as their bytes (protocol/methods/journal.ts RawJournal)
    if (caller === 'wrapper') channel.setRaw(RAW_WRAPPER_METHODS);
    channel.setHandlers({
      request: (method, params) => this.o.dispatch({ method, params, caller, context }),
      notify: (method, params) => {
        // a heartbeat: a peer that stops hearing pongs treats the broker as down (and fails closed)
        if (method === PING) return void channel.notify(BrokerNote.pong, isObject(params) ? { n: params.n } : {});
        if (context.session) this.o.note(context.session, method, params);
      },
      close: () => {
        this.channels.delete(channel);
        this.o.ended?.(key);
        this.o.closed(context);
      },
    });
  }

  /** Every open connection (wrappers, CLIs, UIs). */
  all(): Channel[] {
    return [...this.channels];
  }
}

/** Events for a subscription made on a connection: written as `event` notes while the socket keeps up. */
export function channelSubscriber(channel: Channel): Subscriber {
  return {
    send: (event: BrokerEvent) => {
      if (channel.socket.writableLength > MAX_SUBSCRIBER_BACKLOG) return false;
      return channel.write({ t: 'note', m: BrokerNote.event, p: event });
    },
    ended: (reason) => channel.notify(BrokerNote.event, { ended: reason }),
  };
}
