/**
 * The journal's methods: a wrapper's entries written (and counted by the tripwire), pages of calls (each saying
 * whether and how it can be undone, and its arguments in a few words), the wrapper sessions, and the live event
 * stream a connection follows.
 */
import { argSummary, type ArgHints } from '../classify/arg-summary.js';
import type { CheckedParamsOf, HistoryItem, ResultOf } from '../protocol/api.js';
import { events, history, journal, sessionsList, subscribe, unsubscribe } from '../protocol/methods/journal.js';
import { type Bind, inSession } from './api/handlers.js';
import { channelSubscriber } from './connection.js';
import type { BrokerParts } from './parts.js';
import { bad } from './validate.js';

export function bindJournal(on: Bind, b: BrokerParts): void {
  on(
    journal,
    inSession((session, p) => {
      if (p.lost) b.safety.addLost(p.lost, session.info);
      b.estop.watch(session, p.entries);
      return b.journalWriter.write(session, p.entries);
    }),
  );
  on(history, (p) => callHistory(b, p));
  on(sessionsList, (p) => ({ sessions: b.store.sessions.list(p) }));
  on(events, (p) => b.store.events(p));
  on(subscribe, (p, call) => {
    if (!call.channel) throw bad('a subscription needs a connection');
    const head = b.store.headSeq();
    const subscription = b.bus.subscribe(p.since, channelSubscriber(call.channel));
    // ended with the connection
    call.subscriptions.add(subscription);
    return { subscription, head };
  });
  on(unsubscribe, (p) => {
    b.bus.unsubscribe(p.subscription);
    return { ok: true as const };
  });
}

/** A page of the journal, each entry saying whether and how it can be undone, and what its arguments name. */
export function callHistory(b: BrokerParts, q: CheckedParamsOf<'history'>): ResultOf<'history'> {
  return b.undo.annotate(b.store.history(q, briefer(b)));
}

/** The argument summary of each call of a page, with what is known of its tool looked up once per tool. */
export function briefer(b: Pick<BrokerParts, 'fileTools' | 'pins'>): (c: HistoryItem, args: string) => string {
  const hints = new Map<string, ArgHints>();
  return (c, args) => {
    const key = `${c.server}\0${c.tool}`;
    let h = hints.get(key);
    if (!h) {
      const paths = b.fileTools.snapshotArgs(c.server, c.tool)?.args;
      const schema = b.pins.inputSchema(c.server, c.tool);
      h = { ...(paths ? { paths } : {}), ...(schema !== undefined ? { schema } : {}) };
      hints.set(key, h);
    }
    return argSummary(args, h);
  };
}
