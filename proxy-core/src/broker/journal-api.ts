/**
 * The journal's methods: a wrapper's entries written (and counted by the tripwire), pages of calls (each saying
 * whether and how it can be undone, its arguments in a few words and who decided it), the wrapper sessions and
 * one told as a story, pages of the journal as export text, and the live event stream a connection follows.
 */
import { argSummary, type ArgHints } from '../classify/arg-summary.js';
import { decisionWords, isUndoEntry, sessionTitle, storySentence } from '../protocol/activity.js';
import { EXPORT_PAGE, exportEntry, exportHead } from '../protocol/activity-export.js';
import type { CheckedParamsOf, HistoryItem, ResultOf } from '../protocol/api.js';
import { events, history, historyExport, journal, RawJournal, sessionsList, sessionStory, subscribe, unsubscribe } from '../protocol/methods/journal.js';
import { IpcError } from '../ipc/channel.js';
import { type Bind, inSession } from './api/handlers.js';
import { batchEntries } from './batch-entries.js';
import { channelSubscriber } from './connection.js';
import type { SessionRecord } from './db/sessions-table.js';
import type { BrokerParts } from './parts.js';
import { bad } from './validate.js';

/** The most calls a story tells: the newest of a longer session (it says so). */
export const STORY_MAX = 5000;

export function bindJournal(on: Bind, b: BrokerParts): void {
  on(
    journal,
    inSession((session, p) => {
      // a batch as its bytes (what a wrapper sends) is read now only when something must look at it as it arrives
      const raw = p instanceof RawJournal;
      if (!raw && p.lost) b.safety.addLost(p.lost, session.info);
      const watching = b.estop.watching;
      const ends = b.undo.awaitingEnds;
      if (watching || ends) {
        const entries = raw ? (batchEntries(p.bytes) ?? []) : p.entries;
        if (watching) b.estop.watch(session, entries);
        if (ends) b.undo.takenIn(session.info.id, entries);
      }
      return b.journalWriter.write(session, raw ? p : p.entries);
    }),
  );
  // a read first files what the journal took in, a bounded transaction a turn (journal-writer.ts)
  const settled = () => b.journalWriter.settle();
  on(history, async (p) => (await settled(), callHistory(b, p)));
  on(sessionsList, (p) => ({ sessions: b.store.sessions.list(p).map(titled) }));
  on(sessionStory, async (p) => (await settled(), story(b, p.id)));
  on(historyExport, async (p) => {
    await settled();
    const { format, first, ...query } = p;
    const page = callHistory(b, { ...query, summary: true, limit: EXPORT_PAGE });
    let text = first ? exportHead(format) : '';
    for (const c of page.calls) text += exportEntry(format, c);
    return { text, count: page.calls.length, nextCursor: page.nextCursor };
  });
  on(events, async (p) => (await settled(), b.store.events(p)));
  on(subscribe, async (p, call) => {
    if (!call.channel) throw bad('a subscription needs a connection');
    await settled();
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

/** A page of the journal, each entry saying whether and how it can be undone, what its arguments name, who decided. */
export function callHistory(b: BrokerParts, q: CheckedParamsOf<'history'>): ResultOf<'history'> {
  const page = b.undo.annotate(b.store.history(q, briefer(b)));
  for (const c of page.calls) c.why = decisionWords(c).text;
  return page;
}

function titled(s: SessionRecord): SessionRecord & { title: string } {
  return { ...s, title: sessionTitle(s) };
}

/** A session's calls oldest first, as sentences (the newest STORY_MAX of a longer one). */
function story(b: BrokerParts, id: string): ResultOf<'sessions.story'> {
  const session = b.store.sessions.list({ id, limit: 1 })[0];
  if (!session) throw new IpcError('not-found', `no session ${id}`);
  const calls: HistoryItem[] = [];
  let before: number | undefined;
  let cut = false;
  for (;;) {
    const page = callHistory(b, { session: id, summary: true, limit: Math.min(EXPORT_PAGE, STORY_MAX - calls.length), ...(before !== undefined ? { before } : {}) });
    calls.push(...page.calls);
    if (page.nextCursor === null) break;
    if (calls.length >= STORY_MAX) {
      cut = true;
      break;
    }
    before = page.nextCursor;
  }
  const lines = calls.reverse().map((c) => ({ id: c.id, startedAt: c.startedAt, sentence: storySentence(c), undo: isUndoEntry(c) }));
  return { session: titled(session), lines, cut };
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
